package query_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/discovery/cached/memory"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// assertOneLine fails unless err prints as one line of its own: the commands
// print an argument error as "error: " and its text (an API status or a list
// of errors would print otherwise), and README promises one line.
func assertOneLine(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if msg == "" || strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error does not print as one line: %q", msg)
	}
	var status apierrors.APIStatus
	var agg utilerrors.Aggregate
	if errors.As(err, &status) || errors.As(err, &agg) {
		t.Errorf("error is %T, which does not print as \"error: \" and its text: %q", err, msg)
	}
}

// FuzzParseResourceArgs splits a string on spaces into arguments, as a shell
// would hand them over, and resolves them against the tests' discovery. What
// resolves names known resources and non-empty names, and resolves again to
// the same requests when written back fully qualified as TYPE.VERSION.GROUP/NAME
// or TYPE.VERSION.GROUP,...; errors print as one line.
func FuzzParseResourceArgs(f *testing.F) {
	for _, s := range []string{
		"pods", "po web-0 web-1", "pods,svc,deploy", "all", "svc,all,ct", "pods/web-0 svc/web pods/web-1",
		"deployments.v1.apps", "Deployment.apps/web", "crontabs.v1.stable.example.com", "pods.v1.",
		"podz", "pods/", "/web", "pods/web/x", "pods pods/web", "pods/web web", "pods ", " pods", ",", ",,pods,,",
		".", "..", "...", "pods.", ".pods", "pods..", "v1", "Pod.v1.", "a.b.c.d/e", "*", "PODS", "pOd",
		"pods\tweb", "pods/a/", "cron", "nodes.v1./n no/n", "deploy,po x x",
	} {
		f.Add(s)
	}
	// Discovery cached as kubectl caches it: the fake records every call,
	// which would slow each run more.
	mapper, categories := fixtures.Mapper(f, memory.NewMemCacheClient(fixtures.Discovery(fixtures.APIResources())))
	known := map[schema.GroupVersionResource]bool{}
	for _, r := range []informer.Resource{fixtures.Pods, fixtures.Services, fixtures.Nodes, fixtures.Deployments, fixtures.CronTabs} {
		known[r.GVR] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, " ")
		reqs, single, err := query.ParseResourceArgs(mapper, categories, args)
		if err != nil {
			if reqs != nil || single {
				t.Errorf("query.ParseResourceArgs(%q) returned %v, %v with error %v", args, reqs, single, err)
			}
			assertOneLine(t, err)
			return
		}
		if len(reqs) == 0 {
			t.Fatalf("query.ParseResourceArgs(%q) returned no requests and no error", args)
		}
		seen := map[schema.GroupVersionResource]bool{}
		var canonical, types []string
		for _, r := range reqs {
			if !known[r.Resource.GVR] {
				t.Errorf("query.ParseResourceArgs(%q) resolved unknown resource %v", args, r.Resource.GVR)
			}
			if seen[r.Resource.GVR] {
				t.Errorf("query.ParseResourceArgs(%q) returned %v twice", args, r.Resource.GVR)
			}
			seen[r.Resource.GVR] = true
			gvr := r.Resource.GVR
			typ := gvr.Resource + "." + gvr.Version + "." + gvr.Group
			types = append(types, typ)
			for _, n := range r.Names {
				if n == "" || strings.Contains(n, "/") {
					t.Errorf("query.ParseResourceArgs(%q) returned name %q", args, n)
				}
				canonical = append(canonical, typ+"/"+n)
			}
		}
		if single && (len(reqs) != 1 || len(reqs[0].Names) != 1) {
			t.Errorf("query.ParseResourceArgs(%q) implies a single item for %v", args, reqs)
		}
		if len(canonical) == 0 {
			canonical = []string{strings.Join(types, ",")}
		}
		again, _, err := query.ParseResourceArgs(mapper, categories, canonical)
		if err != nil {
			t.Fatalf("query.ParseResourceArgs(%q) = %v, but its canonical form %q fails: %v", args, reqs, canonical, err)
		}
		// TYPE/NAME lists drop repeated names, TYPE NAME... lists keep them.
		for i := range reqs {
			reqs[i].Names = unique(reqs[i].Names)
		}
		if !reflect.DeepEqual(again, reqs) {
			t.Errorf("query.ParseResourceArgs(%q) = %+v, its canonical form %q gives %+v", args, reqs, canonical, again)
		}
	})
}

// unique returns s without repeats, first occurrences kept in order; nil for
// none.
func unique(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
