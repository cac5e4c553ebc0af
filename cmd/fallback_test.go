package cmd

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
)

// TestGetRunPerNamespaceFallback: a user who may list pods in some namespaces
// but not at the cluster scope gets the pods of those namespaces with -A, and a
// warning (stderr and the List's warnings) naming the namespaces skipped. A user
// who may not list namespaces either gets the server's Forbidden error.
func TestGetRunPerNamespaceFallback(t *testing.T) {
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	forbid := func(req *http.Request) *metav1.Status {
		switch {
		case req.URL.Path == "/api/v1/pods":
			err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "jane" cannot list resource "pods" in API group "" at the cluster scope`))
			return &err.ErrStatus
		case strings.HasPrefix(req.URL.Path, "/api/v1/namespaces/other/"):
			err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "jane" cannot list resource "pods" in API group "" in the namespace "other"`))
			return &err.ErrStatus
		}
		return nil
	}
	const warning = `cannot list pods at the cluster scope; listed them in each of the 3 namespaces instead, skipping 1 where that is forbidden too: other`

	t.Run("namespaces listable", func(t *testing.T) {
		s := fakeapi.New(nil, append(runObjects(), ns("shop"), ns("other"), ns("empty"))...)
		s.BeforeList = forbid
		h := newRunHarness(t, s, []string{"pods"}, runFlags{allNamespaces: true, format: "json"})
		if err := h.run(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		_, names := jsonItems(t, h.out.String())
		if !slices.Equal(names, []string{"web-0", "web-1"}) {
			t.Errorf("pods = %q, want the two in shop", names)
		}
		if !strings.Contains(h.out.String(), `"warnings": [`) || !strings.Contains(h.out.String(), warning) {
			t.Errorf("the List does not carry the warning:\n%s", h.out)
		}
		if got := h.err.String(); got != "warning: "+warning+"\n" {
			t.Errorf("stderr = %q, want the warning", got)
		}
	})

	t.Run("grouped output carries it too", func(t *testing.T) {
		s := fakeapi.New(nil, append(runObjects(), ns("shop"), ns("other"), ns("empty"))...)
		s.BeforeList = forbid
		h := newRunHarness(t, s, []string{"pods"}, runFlags{allNamespaces: true, format: "json"})
		h.o.Group.ByNamespace = true
		if err := h.run(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		doc := decodeGroupDoc(t, h.out.String())
		if !slices.Equal(doc.Warnings, []string{warning}) || !slices.Equal(doc.names(), []string{"shop"}) {
			t.Errorf("warnings %q, groups %q", doc.Warnings, doc.names())
		}
	})

	t.Run("namespaces not listable", func(t *testing.T) {
		s := fakeapi.New(nil, runObjects()...)
		s.BeforeList = forbid
		s.Metadata.PrependReactor("list", "namespaces", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New("no"))
		})
		h := newRunHarness(t, s, []string{"pods"}, runFlags{allNamespaces: true})
		err := h.run(t)
		want := `Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" at the cluster scope`
		if got := FormatError(err); got != want {
			t.Errorf("error = %q, want %q", got, want)
		}
		if h.out.Len() != 0 {
			t.Errorf("stdout = %q", h.out)
		}
	})
}
