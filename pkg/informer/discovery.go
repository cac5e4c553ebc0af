package informer

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// skippedByDiscovery are listable resources that never own or are owned by
// anything, yet can be the largest collections on a cluster. Events would
// otherwise cost more than every other type of a namespace together.
var skippedByDiscovery = map[schema.GroupResource]bool{
	{Resource: "events"}:                         true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// Listable keeps the resources an informer can follow: those that support
// both list and watch.
var Listable = discovery.SupportsAllVerbs{Verbs: []string{"list", "watch"}}

// ListableResources returns every resource the server serves in its preferred
// version that supports both list and watch, sorted by group then resource.
// namespacedOnly leaves out cluster-scoped ones. Discovery may partly fail (an
// aggregated API that is down): what was discovered is returned together with
// one error per failed group version, so a caller can warn and go on.
func ListableResources(dc discovery.DiscoveryInterface, namespacedOnly bool) ([]Resource, []error) {
	lists, err := discovery.ServerPreferredResources(dc)
	var errs []error
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) {
			return nil, []error{err}
		}
		gvs := make([]schema.GroupVersion, 0, len(failed.Groups))
		for gv := range failed.Groups {
			gvs = append(gvs, gv)
		}
		slices.SortFunc(gvs, func(a, b schema.GroupVersion) int { return strings.Compare(a.String(), b.String()) })
		for _, gv := range gvs {
			errs = append(errs, fmt.Errorf("discovering %s: %w", gv, failed.Groups[gv]))
		}
	}
	var out []Resource
	for gv, r := range ListableIn(lists) {
		if namespacedOnly && !r.Namespaced {
			continue
		}
		if skippedByDiscovery[schema.GroupResource{Group: gv.Group, Resource: r.Name}] {
			continue
		}
		out = append(out, Resource{
			GVR:        gv.WithResource(r.Name),
			GVK:        gv.WithKind(r.Kind),
			Namespaced: r.Namespaced,
		})
	}
	slices.SortFunc(out, func(a, b Resource) int {
		if c := strings.Compare(a.GVR.Group, b.GVR.Group); c != 0 {
			return c
		}
		return strings.Compare(a.GVR.Resource, b.GVR.Resource)
	})
	return out, errs
}

// ListableIn yields the resources of lists an informer can follow (list and
// watch), each with its group version; subresources are left out.
func ListableIn(lists []*metav1.APIResourceList) iter.Seq2[schema.GroupVersion, metav1.APIResource] {
	return func(yield func(schema.GroupVersion, metav1.APIResource) bool) {
		for _, l := range discovery.FilteredBy(Listable, lists) {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") {
					continue // a subresource
				}
				if !yield(gv, r) {
					return
				}
			}
		}
	}
}
