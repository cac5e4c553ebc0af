package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// ContextsArgs are the contexts tool's arguments: none.
type ContextsArgs struct{}

// versionTimeout bounds the version request of one context.
const versionTimeout = 10 * time.Second

func (s *Server) contexts(ctx context.Context, _ ContextsArgs) (*v1alpha1.ContextsAnswer, error) {
	answer := v1alpha1.NewContextsAnswer()
	answer.Contexts = make([]v1alpha1.ContextView, len(s.cfg.Clusters))
	var wg sync.WaitGroup
	sem := make(chan struct{}, query.MaxConcurrentTargets)
	for i, cl := range s.cfg.Clusters {
		v := v1alpha1.ContextView{Name: cl.Name, Namespace: cl.Target.DefaultNamespace}
		if cl.Target.RESTConfig != nil {
			v.Server = cl.Target.RESTConfig.Host
		}
		answer.Contexts[i] = v
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			v := &answer.Contexts[i]
			if cl.Target.Err != nil {
				v.Error = s.errorText(cl.Target.Err)
				return
			}
			if cl.ServerVersion == nil {
				v.Error = "no client to ask the server"
				return
			}
			vctx, cancel := context.WithTimeout(ctx, versionTimeout)
			defer cancel()
			version, err := cl.ServerVersion(vctx)
			if err != nil {
				v.Error = s.errorText(err)
				return
			}
			v.Reachable, v.Version = true, version
		})
	}
	wg.Wait()
	answer.Count, answer.Total = len(answer.Contexts), len(answer.Contexts)
	return answer, nil
}
