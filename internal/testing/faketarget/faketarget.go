// Package faketarget resolves query.Targets over fakeapi servers, for the
// engine's and the commands' tests of one cluster and of several: each
// target reads its own server, as each kubeconfig context reads its own.
package faketarget

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// New returns the target of the kubeconfig context name ("" for the one
// context of a plain run) over s, whose discovery serves lists: namespaced
// types are read in namespace ("" for all), and an object named under -A is
// looked for in shop.
func New(tb testing.TB, name string, s *fakeapi.Server, namespace string, lists []*metav1.APIResourceList) query.Target {
	tb.Helper()
	dc := fixtures.Discovery(lists)
	mapper, categories := fixtures.Mapper(tb, dc)
	return query.Target{
		Context:          name,
		Mapper:           mapper,
		Categories:       categories,
		Namespace:        namespace,
		DefaultNamespace: "shop",
		Hooks:            Hooks(tb, s, dc),
	}
}

// Hooks are s's clients as a target's: informer factories over its fakes,
// the types dc serves, and one object's metadata read from its metadata fake.
func Hooks(tb testing.TB, s *fakeapi.Server, dc discovery.DiscoveryInterface) query.Hooks {
	return query.Hooks{
		NewFactory: fixtures.NewFactory(tb, s),
		Listable: func(namespacedOnly bool) ([]informer.Resource, []error) {
			return informer.ListableResources(dc, namespacedOnly)
		},
		GetMetadata: func(ctx context.Context, res informer.Resource, namespace, name string) (metav1.Object, error) {
			if res.Namespaced {
				return s.Metadata.Resource(res.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
			}
			return s.Metadata.Resource(res.GVR).Get(ctx, name, metav1.GetOptions{})
		},
	}
}
