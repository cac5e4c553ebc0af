package cmd

import (
	"context"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/served"
)

// runCacheServer reads the start payload from in, connects as the starter
// does, and serves until the server shuts down: idle for idle, asked to
// stop, replaced, its credentials rejected for good, or ctx ended.
func runCacheServer(ctx context.Context, in io.Reader, idle, dropAfter time.Duration) error {
	p, err := served.ReadPayload(in)
	if err != nil {
		return err
	}
	name, cfg, err := p.Connection()
	if err != nil {
		return err
	}
	return served.New(served.Options{
		Identity: p.Identity, Version: cacheVersion(), Context: name, IdleTimeout: idle, DropAfter: dropAfter,
		Execute: func(ctx context.Context, run *served.Run, streams genericiooptions.IOStreams) int {
			args := run.Request().Args
			return execute(ctx, streams, args, &runContext{args: args, served: run})
		},
	}).Serve(ctx, cfg)
}
