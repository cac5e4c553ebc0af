package mcp

import (
	"context"
	"io"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Options are what `kubectl idx mcp` hands Serve: the contexts, resolved
// from the command line, and the bounds of its answers.
type Options struct {
	// Targets are the contexts, resolved; Names their names, in order.
	Targets []query.Target
	Names   []string
	// Query, ErrorText, Limit, MaxBytes and Version are Config's.
	Query     query.Config
	ErrorText func(error) string
	Limit     int
	MaxBytes  int
	Version   string
}

// Serve answers MCP over in and out (the process's stdin and stdout) until
// the client closes in or ctx ends. Each context gets a warm pool of its own
// over its REST config, an Asker and a FeedProof with the same credentials:
// the process answers with its own user's rights, asked again of the API
// server at every call.
func Serve(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cfg := Config{Query: o.Query, ErrorText: o.ErrorText, Limit: o.Limit, MaxBytes: o.MaxBytes, Version: o.Version}
	for i, t := range o.Targets {
		cl := Cluster{Name: o.Names[i], Target: t}
		if t.Err == nil && t.RESTConfig != nil {
			// Every call's requests go through the same clients, with no
			// client-side rate: a call asks the server, for each informer it
			// reads, whether it may (the asker) and where the type stands (the
			// freshness proof), forty of each for a tree, and any shared rate
			// queues them once its burst is spent (a tree took 0.66 s a call
			// at 50 a second, 30 ms without), where the cache gives each served
			// run a client, and a burst, of its own. The pool bounds its LISTs
			// in flight (16) and a call its proofs (64); the API server's
			// priority and fairness does the rest.
			checks := rest.CopyConfig(t.RESTConfig)
			if checks.RateLimiter == nil {
				checks.QPS = -1
			}
			var err error
			if cl.Pool, err = query.NewPool(checks, pool.Options{}); err != nil {
				return err
			}
			defer cl.Pool.Close()
			if cl.Asker, err = pool.NewAsker(checks); err != nil {
				return err
			}
			if cl.Proof, err = NewFeedProof(checks); err != nil {
				return err
			}
			cl.ServerVersion = serverVersion(t.RESTConfig)
			cl.Target.PodResources = index.NewPodResourcesCache(ctx, pool.DefaultDropAfter)
		}
		cfg.Clusters = append(cfg.Clusters, cl)
	}
	s := NewServer(cfg)
	defer s.Close()
	return s.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

// serverVersion asks the server cfg connects to its version, uncached.
func serverVersion(cfg *rest.Config) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		c := rest.CopyConfig(cfg)
		if deadline, ok := ctx.Deadline(); ok {
			c.Timeout = max(c.Timeout, 0)
			if c.Timeout == 0 || c.Timeout > timeUntil(deadline) {
				c.Timeout = timeUntil(deadline)
			}
		}
		dc, err := discovery.NewDiscoveryClientForConfig(c)
		if err != nil {
			return "", err
		}
		v, err := dc.ServerVersion()
		if err != nil {
			return "", err
		}
		return v.GitVersion, nil
	}
}

// nopWriteCloser is the process's stdout as the transport's writer: the
// transport closing it must not close the process's stdout under others.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func timeUntil(t time.Time) time.Duration { return max(time.Until(t), time.Millisecond) }
