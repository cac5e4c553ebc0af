package query

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
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
// (informer.PoolSource).
type asOfSource interface {
	AsOf() []informer.AsOf
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
