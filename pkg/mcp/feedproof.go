package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// FeedProof shows a held feed current as of a call, the way the warm pool
// shows a store current (pkg/pool's fresh.go): resourceVersions are etcd
// revisions, one sequence for every type, so a feed of a type nobody writes
// never sees the server's latest one, and "the feed has reached R" cannot be
// waited for as such. What can be shown is which change of the feed's
// objects, if any, lies between where the feed has been delivered up to (P)
// and the server's latest resourceVersion (R): a watch from P replays them,
// and ends at a change or bookmark at or past R. The feed is current once
// its position reaches the last of them.
type FeedProof interface {
	// Latest returns the server's latest resourceVersion of res in
	// namespace ("" for every namespace): every write acknowledged before
	// it was asked is at or below it.
	Latest(ctx context.Context, res informer.Resource, namespace string) (string, error)
	// LastChange returns the resourceVersion of the last change of res's
	// objects in namespace after from and up to to, "" when there is none.
	LastChange(ctx context.Context, res informer.Resource, namespace, from, to string) (string, error)
}

// NewFeedProof returns the FeedProof of the API server cfg connects to,
// over a metadata client: a LIST of at most one object for Latest, a watch
// with bookmarks for LastChange.
func NewFeedProof(cfg *rest.Config) (FeedProof, error) {
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return metadataProof{client}, nil
}

type metadataProof struct{ client metadata.Interface }

func (p metadataProof) resource(res informer.Resource, namespace string) metadata.ResourceInterface {
	r := p.client.Resource(res.GVR)
	if res.Namespaced && namespace != "" {
		return r.Namespace(namespace)
	}
	return r
}

func (p metadataProof) Latest(ctx context.Context, res informer.Resource, namespace string) (string, error) {
	l, err := p.resource(res, namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", err
	}
	return l.ResourceVersion, nil
}

// probeTimeout is the timeoutSeconds of a proof's watch: the shortest that
// earns a bookmark from the API server, which sends none to a watch due to
// end within 2 s (pkg/pool's probeWatchTimeout).
const probeTimeout = int64(3)

// errNoBookmark says a proof's watch ended without reaching its target: the
// server moves a watch of one namespace past the changes of others without
// a bookmark.
var errNoBookmark = errors.New("the watch ended before the server said it had passed the resourceVersion")

func (p metadataProof) LastChange(ctx context.Context, res informer.Resource, namespace, from, to string) (string, error) {
	last, err := p.lastChange(ctx, res, namespace, namespace, from, to)
	if errors.Is(err, errNoBookmark) && res.Namespaced && namespace != "" {
		// A watch of every namespace gets the bookmark; the namespace's
		// changes are picked out of it.
		return p.lastChange(ctx, res, "", namespace, from, to)
	}
	return last, err
}

func (p metadataProof) lastChange(ctx context.Context, res informer.Resource, watched, namespace, from, to string) (string, error) {
	want, err := strconv.ParseUint(to, 10, 64)
	if err != nil {
		return "", fmt.Errorf("resourceVersion %q is not a number to compare", to)
	}
	timeout := probeTimeout
	w, err := p.resource(res, watched).Watch(ctx, metav1.ListOptions{ResourceVersion: from, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		return "", err
	}
	defer w.Stop()
	last := ""
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return "", apierrors.FromObject(ev.Object)
		}
		a, err := meta.Accessor(ev.Object)
		if err != nil {
			continue
		}
		rv, err := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
		if err != nil {
			return "", fmt.Errorf("resourceVersion %q is not a number to compare", a.GetResourceVersion())
		}
		if ev.Type == watch.Bookmark || rv > want {
			if rv >= want {
				return last, nil
			}
			continue
		}
		if namespace == "" || a.GetNamespace() == namespace {
			last = a.GetResourceVersion()
		}
		if rv == want {
			return last, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "", errNoBookmark
}

// rvAtLeast reports whether resourceVersion a is at or past b; false when
// either is not a number.
func rvAtLeast(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x >= y
}
