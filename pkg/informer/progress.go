package informer

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressInterval is how often the progress line is redrawn.
const progressInterval = 200 * time.Millisecond

// startProgress draws a one-line report of objects received per resource on w,
// first after delay and then every progressInterval, until the returned stop
// function is called; stop erases the line. Syncs shorter than delay print nothing,
// so quick queries stay quiet.
func (f *Factory) startProgress(w io.Writer, delay time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-done:
			return
		case <-timer.C:
		}
		ticker := time.NewTicker(progressInterval)
		defer ticker.Stop()
		drawn := false
		for {
			fmt.Fprintf(w, "\r\x1b[K%s", f.progressLine())
			drawn = true
			select {
			case <-done:
				if drawn {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-ticker.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// progressLine renders "syncing: pods 12000 received, deployments.apps 40
// synced", or a list's bytes while it has no object yet ("pods 84.2 MB
// received").
func (f *Factory) progressLine() string {
	f.mu.Lock()
	entries := append([]*entry(nil), f.order...)
	f.mu.Unlock()
	parts := make([]string, 0, len(entries))
	for _, e := range entries {
		state := "received"
		if e.informer.HasSynced() {
			state = "synced"
		}
		if n, b := e.received.Load(), e.bodyBytes.Load(); n == 0 && b > 0 && state == "received" {
			// An unpaged list counts its objects once it is whole: until
			// then, its bytes.
			parts = append(parts, fmt.Sprintf("%s %.1f MB %s", e.res.Name(), float64(b)/1e6, state))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d %s", e.res.Name(), e.received.Load(), state))
	}
	return "syncing: " + strings.Join(parts, ", ")
}
