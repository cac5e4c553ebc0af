package query

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
)

// source is where the session's informers come from: the target's Source,
// else informer.OneShot.
func (s *Session) source() informer.Source {
	if s.cfg.Source != nil {
		return s.cfg.Source
	}
	return informer.OneShot
}

// asOfSource is a Source that knows what the types it lent are current as of
// (pool.Source).
type asOfSource interface {
	AsOf() []pool.AsOf
}

// AsOf says what the types the session has read so far are current as of,
// for an answer from the warm cache; nil for a direct run, whose answer is
// current as of its start by construction and says nothing of it.
func (s *Session) AsOf() []v1alpha1.AsOf {
	src, ok := s.cfg.Source.(asOfSource)
	if !ok {
		return nil
	}
	in := src.AsOf()
	out := make([]v1alpha1.AsOf, len(in))
	for i, a := range in {
		out[i] = v1alpha1.AsOf{Resource: a.Resource.Name(), Namespace: a.Namespace, ResourceVersion: a.ResourceVersion, Time: metav1.NewMicroTime(a.Time)}
	}
	return out
}

// NewPool returns the warm pool of a cache server connected by cfg. Its
// clients get the rate a Session gives a question over every type, 50
// requests a second in bursts of 300, since the pool serves such questions,
// and drop the server's deprecation notices, which no command could print.
func NewPool(cfg *rest.Config, opts pool.Options) (*pool.Pool, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = 50, 300
	}
	cfg.WarningHandler = rest.NoWarnings{}
	return pool.New(cfg, opts)
}

// CacheInformers describes a pool's informers for `cache status`: counts,
// times and resourceVersions.
func CacheInformers(st pool.Status) []v1alpha1.CachedInformer {
	out := make([]v1alpha1.CachedInformer, 0, len(st.Informers))
	for _, w := range st.Informers {
		c := v1alpha1.CachedInformer{
			Resource: w.Resource.Name(), Mode: w.Mode.String(), Namespace: w.Namespace,
			LabelSelector: w.LabelSelector, FieldSelector: w.FieldSelector, ManagedFields: w.KeepManagedFields,
			Objects: w.Objects, Since: metav1.NewTime(w.Since), LastUsed: metav1.NewTime(w.LastUsed), InUse: w.InUse,
			Synced: w.Synced, ResourceVersion: w.ResourceVersion, Failed: w.Failed,
		}
		if !w.ConfirmedAt.IsZero() {
			c.Confirmed = &v1alpha1.CacheConfirmation{ResourceVersion: w.Confirmed, Time: metav1.NewMicroTime(w.ConfirmedAt)}
		}
		if w.WatchDown != "" {
			c.WatchDown = &v1alpha1.CacheWatchDown{Since: metav1.NewTime(w.WatchDownSince), Reason: w.WatchDown}
		}
		out = append(out, c)
	}
	return out
}
