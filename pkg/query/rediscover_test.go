package query_test

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// staleDiscovery is a discovery cache holding the types of before until it
// is invalidated, the server's (now) after.
type staleDiscovery struct {
	*discoveryfake.FakeDiscovery
	now         []*metav1.APIResourceList
	invalidated int
}

func (d *staleDiscovery) Fresh() bool { return d.invalidated > 0 }

func (d *staleDiscovery) Invalidate() {
	d.invalidated++
	d.Fake.Resources = d.now
}

// TestTreeStaleDiscovery: a question over every type lists what discovery
// says; a type discovery still has from its cache but the server no longer
// serves (a CRD deleted since) answers NotFound, and is dropped without a
// warning once discovery, refreshed once, no longer has it. A type the server
// still serves that answers NotFound is warned of.
func TestTreeStaleDiscovery(t *testing.T) {
	crontabs := &metav1.APIResourceList{GroupVersion: "stable.example.com/v1", APIResources: []metav1.APIResource{
		{Name: "crontabs", SingularName: "crontab", Namespaced: true, Kind: "CronTab", Verbs: metav1.Verbs{"get", "list", "watch"}},
	}}
	notFound := fixtures.NotFoundList(schema.GroupResource{Group: "stable.example.com", Resource: "crontabs"})
	for _, tc := range []struct {
		name     string
		now      []*metav1.APIResourceList
		warnings []string
	}{
		{"the CRD was deleted", fixtures.RelationAPIResources(), nil},
		{"the CRD is still served", append(fixtures.RelationAPIResources(), crontabs), []string{
			"cannot list crontabs.stable.example.com, the answer may be incomplete: " + notFound.Error()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, fixtures.RelationObjects()...)
			s.Metadata.PrependReactor("list", "crontabs", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, notFound
			})
			dc := &staleDiscovery{FakeDiscovery: &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{
				Resources: append(fixtures.RelationAPIResources(), crontabs)}}, now: tc.now}
			mapper, _ := fixtures.Mapper(t, dc)
			session, _ := newSession(t, s, query.Config{Target: query.Target{Mapper: mapper, Namespace: "shop", Discovery: dc}})
			doc, err := session.Tree(testContext(t), objectRef(t, mapper, "deployment/web"))
			if err != nil {
				t.Fatalf("Tree: %v", err)
			}
			if !slices.Equal(doc.Warnings, tc.warnings) {
				t.Errorf("warnings = %q, want %q", doc.Warnings, tc.warnings)
			}
			if dc.invalidated != 1 {
				t.Errorf("discovery refreshed %d times, want once", dc.invalidated)
			}
		})
	}
}
