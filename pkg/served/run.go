package served

import (
	"context"
	"errors"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// ErrDecline says a Run will not be answered here, before anything of it was
// written: the client answers the command itself. warm.Decline is its exit
// code.
var ErrDecline = errors.New("declined by the cache server")

// Run is one command a Server answers: the request, and the server whose
// pool lends its informers.
type Run struct {
	server *Server
	req    *warm.RunRequest
	// start is when the request arrived: the answer holds every write
	// acknowledged before.
	start time.Time
	// source lends the run's informers, once its targets are bound, as
	// fresh as maxStaleness (--max-staleness) lets them be.
	source       *pool.Source
	maxStaleness time.Duration
}

// Request is what the client sent: its arguments, environment, working
// directory and credential.
func (r *Run) Request() *warm.RunRequest { return r.req }

// Verify asks the API server, once per credential, who cfg's credential
// belongs to: cfg is the run's connection, the asker's credential in place
// of whatever the kubeconfig names (warm.Credential.Apply). ErrDecline when
// it is not the server's identity (another user, another cluster); the API
// server's or the transport's error when it cannot say (a credential it
// refuses, a server that cannot be reached), in a direct run's words.
func (r *Run) Verify(ctx context.Context, cfg *rest.Config) error {
	if r.req.Credential == nil {
		return ErrDecline
	}
	id, err := r.server.verify(ctx, cfg, r.req.Credential)
	if err != nil {
		return err
	}
	if id != r.server.opts.Identity {
		return ErrDecline
	}
	return nil
}

// Bind gives targets the server's warm informers: one context, whose asker
// Verify has verified, each informer the run reads authorized for the asker
// by the API server (pool.Asker) with the asker's credential, and as
// fresh as maxStaleness lets it be. Anything else is ErrDecline.
func (r *Run) Bind(targets []query.Target, maxStaleness time.Duration) ([]query.Target, error) {
	if len(targets) != 1 || targets[0].Context != "" || targets[0].Err != nil {
		return nil, ErrDecline
	}
	t := targets[0]
	asker, err := pool.NewAsker(t.RESTConfig)
	if err != nil {
		return nil, err
	}
	r.maxStaleness = maxStaleness
	r.source = r.server.pool.Source(pool.Freshness{Start: r.start, MaxStaleness: maxStaleness}, strings.Join(r.req.Args, "\x00"), asker)
	t.Source = r.source
	t.PodResources = r.server.podResources
	return []query.Target{t}, nil
}

// Encodings are the process's kept JSON encodings, for the run's printers.
func (r *Run) Encodings() *printers.Encodings { return r.server.encodings }
