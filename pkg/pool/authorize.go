package pool

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// Asker authorizes one question of the warm cache for the one who asks it.
// A warm informer was listed with the cache server's credentials, maybe long
// ago: that the asker may read what it holds now is asked again, of the API
// server, with the asker's own credential, for every informer a question
// reads, before anything of it is printed. The API server decides, as it
// decides a direct run's LIST: its authenticator (a revoked token, a deleted
// ServiceAccount) and its authorizer (a RoleBinding deleted since, the
// selectors a webhook authorizer may look at) see the same request a direct
// run's first LIST would be, in everything but the page size.
type Asker interface {
	// Check returns nil when the asker may list res in namespace ("" for
	// every namespace, or a cluster-scoped type) with those selectors, and
	// the API server's error, or the transport's, otherwise.
	Check(ctx context.Context, res informer.Resource, namespace, labelSelector, fieldSelector string) error
}

// NewAsker returns an Asker that asks with cfg, the asker's connection: one
// metadata-only LIST of at most one object, at the server's latest
// resourceVersion, per check. cfg's Timeout (--request-timeout) bounds it.
func NewAsker(cfg *rest.Config) (Asker, error) {
	client, err := metadata.NewForConfig(metadataConfig(cfg))
	if err != nil {
		return nil, err
	}
	return MetadataAsker{Client: client, Server: hostOf(cfg.Host), RequestTimeout: cfg.Timeout}, nil
}

// metadataConfig is cfg for a metadata client: protobuf, as the pool's own
// metadata client reads, at a question's rate. A question checks every
// informer it reads at once: client-go's default of 5 requests a second in
// bursts of 10 made each check past the tenth wait 200 ms (why -A, which
// reads 16 types, answered from warm informers in 1.3 s, 1.2 s of it
// waiting for the limiter).
func metadataConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = checkQPS, checkBurst
	}
	return cfg
}

// checkQPS and checkBurst are the rate of an asker's checks: a Session's
// (query.NewSession).
const (
	checkQPS   = 50
	checkBurst = 300
)

// MetadataAsker is an Asker over a metadata client made with the asker's
// credential; tests pass a fake.
type MetadataAsker struct {
	// Client lists with the asker's credential.
	Client metadata.Interface
	// Server (host:port) and RequestTimeout word a transport's failure as a
	// direct run's list words it (informer.ListError).
	Server         string
	RequestTimeout time.Duration
}

// Check lists at most one object's metadata, the way the question's informer
// would list all of them. The API server's refusal is returned as it is
// (kubectl words it); a transport's failure as an *informer.ListError naming
// the type.
func (a MetadataAsker) Check(ctx context.Context, res informer.Resource, namespace, labelSelector, fieldSelector string) error {
	r := a.Client.Resource(res.GVR)
	var lister metadata.ResourceInterface = r
	if namespace != "" {
		lister = r.Namespace(namespace)
	}
	_, err := lister.List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: labelSelector, FieldSelector: fieldSelector})
	if err == nil {
		return nil
	}
	var status interface{ Status() metav1.Status }
	if errors.As(err, &status) || ctx.Err() != nil {
		return err
	}
	return &informer.ListError{Resource: res, Tries: 1, Server: a.Server, RequestTimeout: a.RequestTimeout, Err: err}
}

// hostOf returns the host:port of a server URL, or the URL as it is.
func hostOf(server string) string {
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		return u.Host
	}
	return server
}

// check is one Check of a question's factory, run in the background from
// the moment its informer is asked for, so that it overlaps the informer's
// sync.
type check struct {
	done chan struct{}
	err  error
}

// wait returns the check's outcome once it has one, or ctx's error.
func (c *check) wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startCheckLocked checks, in the background, that the asker may list res
// in namespace with the selectors, unless the question has no asker (tests
// of the pool's own workings) or its factory has checked that already; b.mu
// is held. The check lives until the factory's Shutdown (Release).
func (b *borrower) startCheckLocked(res informer.Resource, namespace, labelSelector, fieldSelector string) *check {
	asker := b.src.asker
	if asker == nil {
		return nil
	}
	key := checkKey{gvr: res.GVR.String(), namespace: namespace, labelSelector: labelSelector, fieldSelector: fieldSelector}
	if c, ok := b.checks[key]; ok {
		return c
	}
	if b.checkCtx == nil {
		b.checkCtx, b.checkCancel = context.WithCancel(context.Background())
	}
	c := &check{done: make(chan struct{})}
	b.checks[key] = c
	ctx := b.checkCtx
	go func() {
		defer close(c.done)
		c.err = asker.Check(ctx, res, namespace, labelSelector, fieldSelector)
	}()
	return c
}

// checkKey names one check of a question's factory.
type checkKey struct {
	gvr, namespace, labelSelector, fieldSelector string
}

// deniedInformer stands for a warm informer in a question whose asker may
// not read it: it holds nothing, and never runs.
func deniedInformer(res informer.Resource, indexers cache.Indexers) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformerWithOptions(&cache.ListWatch{}, nil, cache.SharedIndexInformerOptions{Indexers: indexers, ObjectDescription: res.Name()})
}

// checkedSink hands a page to sink once the asker is known to be allowed to
// read it: the first question of a warm informer prints its list as it
// arrives (the tee), which is before WaitForSync.
type checkedSink struct {
	check *check
	sink  informer.PageSink
}

func (s *checkedSink) Page(ctx context.Context, items []runtime.Object, first bool, resourceVersion string) error {
	if err := s.check.wait(ctx); err != nil {
		return fmt.Errorf("not allowed: %w", err)
	}
	return s.sink.Page(ctx, items, first, resourceVersion)
}
