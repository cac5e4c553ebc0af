package served

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// Status asks the cache server of spec what it holds (warm.Status), as
// `kubectl idx cache status` prints it. With none running it returns the
// status of none, not running, and warm.ErrNotRunning.
func Status(ctx context.Context, spec warm.Spec) (*v1alpha1.CacheStatus, error) {
	rep, err := warm.Status(ctx, spec)
	st := v1alpha1.NewCacheStatus()
	switch {
	case errors.Is(err, warm.ErrNotRunning):
		return st, err
	case err != nil:
		return nil, err
	}
	if rep.Cache != nil {
		// The server's part: its informers and memory.
		if err := json.Unmarshal(rep.Cache, st); err != nil {
			return nil, fmt.Errorf("reading the cache server's status: %w", err)
		}
	}
	st.APIVersion, st.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.CacheStatusKind
	st.Running = true
	st.Version, st.PID, st.Socket, st.IdleTimeout = rep.Version, rep.PID, rep.Socket, rep.IdleTimeout
	started := metav1.NewTime(rep.Started)
	st.Started = &started
	if rep.LastRequest != nil {
		last := metav1.NewTime(*rep.LastRequest)
		st.LastRequest = &last
	}
	if st.Requests == nil {
		st.Requests = &v1alpha1.CacheRequests{}
	}
	st.Requests.Running, st.Requests.Served, st.Requests.Warmed = rep.Running, rep.Served, rep.Warmed
	st.Requests.RefusedPeers, st.Requests.RefusedHandshakes = rep.RefusedPeers, rep.RefusedHandshakes
	if st.Informers == nil {
		st.Informers = []v1alpha1.CachedInformer{}
	}
	return st, nil
}
