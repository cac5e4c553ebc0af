package informer

import (
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

var updateEncoded = flag.Bool("update-encoded", false, "rewrite testdata/always-encoded.txt from client-go's types")

// encodedLeaves are struct types with their own JSON encoding.
var encodedLeaves = map[string]bool{"Time": true, "MicroTime": true, "Quantity": true, "IntOrString": true, "Duration": true, "RawExtension": true}

// alwaysEncoded lists the JSON paths of t's struct-valued fields, which
// encoding/json writes even when empty ("{}", or null for a zero time). A
// pointer is followed as its value; a list or map is marked [], since its
// items exist only when the server sent them.
func alwaysEncoded(t reflect.Type, path string, out *[]string, depth int) {
	if depth > 16 {
		return
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() != reflect.Pointer {
			path += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || encodedLeaves[t.Name()] {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" || strings.Contains(opts, "inline") {
			alwaysEncoded(f.Type, path, out, depth+1)
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := path + "." + name
		if f.Type.Kind() == reflect.Struct {
			*out = append(*out, p)
		}
		alwaysEncoded(f.Type, p, out, depth+1)
	}
}

// TestNewerFields guards newerFields: the always-encoded fields of every kind
// client-go knows are held to testdata/always-encoded.txt. When a client
// upgrade adds one, this fails: a field that servers older than the types can
// lack, outside a list (an older server sends no items of a list it does not
// know), needs its kind in newerFields with the minor version that added it;
// then rewrite the file with -update-encoded.
func TestNewerFields(t *testing.T) {
	var lines []string
	for gvk, typ := range clientgoscheme.Scheme.AllKnownTypes() {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		var paths []string
		alwaysEncoded(typ, "", &paths, 0)
		for _, p := range paths {
			lines = append(lines, gvk.GroupVersion().String()+" "+gvk.Kind+" "+p)
		}
	}
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	const file = "testdata/always-encoded.txt"
	if *updateEncoded {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("the always-encoded fields of client-go's types changed (-%s +now): add each new one outside a list to newerFields with the minor version that added it, then run go test -run TestNewerFields -update-encoded ./pkg/informer\n%s", file, diff)
	}
}

// TestReadsServerJSON: CSINode is read typed from 1.37 servers and as JSON from
// older ones or when the version is unknown; a kind without newer fields is
// always typed.
func TestReadsServerJSON(t *testing.T) {
	csiNode := schema.GroupKind{Group: "storage.k8s.io", Kind: "CSINode"}
	for _, tc := range []struct {
		gk    schema.GroupKind
		minor int
		want  bool
	}{
		{csiNode, 37, false},
		{csiNode, 38, false},
		{csiNode, 36, true},
		{csiNode, 34, true},
		{csiNode, 0, true},
		{schema.GroupKind{Kind: "Pod"}, 30, false},
	} {
		if got := readsServerJSON(tc.gk, tc.minor); got != tc.want {
			t.Errorf("readsServerJSON(%s, %d) = %v, want %v", tc.gk, tc.minor, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want int
		err  bool
	}{{"37", 37, false}, {"34+", 34, false}, {"", 0, true}, {"x", 0, true}} {
		got, err := parseMinor(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("parseMinor(%q) = %d, %v", tc.in, got, err)
		}
	}
}
