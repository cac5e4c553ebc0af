package informer

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// A typed client decodes into client-go's structs and -o json encodes them
// again. A struct-valued field is always encoded, even empty, so a field that
// the client's API types have and an older server does not comes out as "{}"
// although the server never sent it: kubectl, which prints the server's JSON,
// shows nothing there. Kinds with such a field are read as the server's JSON
// (the dynamic client) from servers older than the field. Fields under a list
// need no entry: an older server sends no list items that would hold them.

// newerFields maps a kind to the minor Kubernetes version that added the last
// of its always-encoded fields, for fields added after the oldest supported
// server (1.34). TestNewerFields derives the fields from the API types and
// fails when a client upgrade brings one this table does not know.
var newerFields = map[schema.GroupKind]int{
	// status (CSINodeStatus), added in 1.37.
	{Group: "storage.k8s.io", Kind: "CSINode"}: 37,
	// status (DeviceTaintRuleStatus), added in 1.35 (v1alpha3, off by default).
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}: 35,
}

// readsServerJSON reports whether objects of gk are read as the server's JSON
// rather than typed from a server of version minor: when the types know a
// field the server does not. An unknown minor (0) counts as older.
func readsServerJSON(gk schema.GroupKind, minor int) bool {
	added, ok := newerFields[gk]
	return ok && minor < added
}

// serverMinor returns a function that asks the server's minor version once,
// for factories that read a kind of newerFields; it is safe for concurrent use.
func serverMinor(restConfig *rest.Config) func() (int, error) {
	return sync.OnceValues(func() (int, error) {
		dc, err := discovery.NewDiscoveryClientForConfig(restConfig)
		if err != nil {
			return 0, err
		}
		v, err := dc.ServerVersion()
		if err != nil {
			return 0, err
		}
		return parseMinor(v.Minor)
	})
}

// parseMinor reads a /version minor, which providers suffix ("37+").
func parseMinor(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimRight(s, "+"))
	if err != nil {
		return 0, fmt.Errorf("the server's minor version %q is not a number", s)
	}
	return n, nil
}
