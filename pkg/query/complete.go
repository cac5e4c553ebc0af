package query

import (
	"context"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// TypeNames returns the types an informer can follow (list and watch) whose
// names start with prefix, named as `kubectl api-resources -o name` names them
// ("pods", "deployments.apps"), each group at its preferred version. With
// some groups unavailable, discovery returns the others, still worth offering.
func TypeNames(dc discovery.DiscoveryInterface, prefix string) []string {
	lists, _ := dc.ServerPreferredResources()
	seen := map[string]bool{}
	for gv, r := range informer.ListableIn(lists) {
		name := r.Name
		if gv.Group != "" {
			name += "." + gv.Group
		}
		if strings.HasPrefix(name, prefix) {
			seen[name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// ObjectNames returns the names of the objects of res that start with prefix,
// in namespace ("" for all), from one metadata-only LIST; a name in several
// namespaces is returned once.
func ObjectNames(ctx context.Context, cfg *rest.Config, res informer.Resource, namespace, prefix string) ([]string, error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var lister metadata.ResourceInterface = client.Resource(res.GVR)
	if res.Namespaced && namespace != metav1.NamespaceAll {
		lister = client.Resource(res.GVR).Namespace(namespace)
	}
	list, err := lister.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, item := range list.Items {
		if strings.HasPrefix(item.Name, prefix) {
			seen[item.Name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}
