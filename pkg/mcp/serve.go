package mcp

import (
	"context"
	"io"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
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
	cfg := Config{Query: o.Query, ErrorText: o.ErrorText, Limit: o.Limit, MaxBytes: o.MaxBytes, Version: o.Version}
	for i, t := range o.Targets {
		cl := Cluster{Name: o.Names[i], Target: t}
		if t.Err == nil && t.RESTConfig != nil {
			var err error
			if cl.Pool, err = query.NewPool(t.RESTConfig, informer.PoolOptions{}); err != nil {
				return err
			}
			defer cl.Pool.Close()
			// The checks of every call share one client, with no client-side
			// rate: a tree's forty checks a call would queue behind client-go's
			// 5 a second (8 s), or behind any rate after a few calls (50 a
			// second: 0.6 s a tree after its burst was spent), where a served
			// run of the cache gets a client, and a burst, of its own. A call
			// checks each informer it reads once, at most 64 at a time.
			checks := rest.CopyConfig(t.RESTConfig)
			if checks.RateLimiter == nil {
				checks.QPS = -1
			}
			if cl.Asker, err = informer.NewAsker(checks); err != nil {
				return err
			}
			if cl.Proof, err = NewFeedProof(checks); err != nil {
				return err
			}
			cl.ServerVersion = serverVersion(t.RESTConfig)
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
