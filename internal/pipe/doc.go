// Package pipe tells a process that streams to stdout when the reader of its
// pipe has gone away (`| head` is done) before it writes again.
package pipe

import (
	"context"
	"io"
)

// WithReaderGone returns ctx, also cancelled once the reader of out goes
// away (ReaderGone), and its cancel function.
func WithReaderGone(ctx context.Context, out io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if closed := ReaderGone(out); closed != nil {
		go func() {
			select {
			case <-closed:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}
