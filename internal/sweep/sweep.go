// Package sweep forgets what a long-lived process keeps for the next answer
// once nobody has asked for it lately: the cache server's kept encodings and
// pods' resources.
package sweep

import (
	"context"
	"time"
)

// Run calls forget(before) in a goroutine of its own every quarter of
// unusedFor (at most once a second), with before unusedFor ago: what was last
// used before then is to be forgotten. Once ctx ends, it calls forget once
// more with a time an hour ahead, which forgets everything, and returns.
func Run(ctx context.Context, unusedFor time.Duration, forget func(before time.Time)) {
	go func() {
		t := time.NewTicker(max(unusedFor/4, time.Second))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				forget(time.Now().Add(time.Hour))
				return
			case now := <-t.C:
				forget(now.Add(-unusedFor))
			}
		}
	}()
}
