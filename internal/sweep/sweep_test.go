package sweep

import (
	"context"
	"testing"
	"time"
)

// TestRun: forget is called with a time unusedFor ago, again and again,
// and once the context ends with a time ahead, which forgets everything;
// then no more.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan time.Time, 16)
	const unusedFor = 4 * time.Second // a tick a second
	start := time.Now()
	Run(ctx, unusedFor, func(before time.Time) { calls <- before })
	select {
	case before := <-calls:
		if ago := time.Since(before); ago < unusedFor || ago > unusedFor+3*time.Second {
			t.Errorf("forget(%s ago), want about %s ago", ago, unusedFor)
		}
		if time.Since(start) > 3*time.Second {
			t.Errorf("the first sweep came after %s, want about a second", time.Since(start))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no sweep")
	}
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case before := <-calls:
			if before.After(time.Now()) {
				// The last one: nothing after it.
				select {
				case late := <-calls:
					t.Errorf("forget(%s) after the context ended", late)
				case <-time.After(1500 * time.Millisecond):
				}
				return
			}
		case <-deadline:
			t.Fatal("no sweep of everything once the context ended")
		}
	}
}
