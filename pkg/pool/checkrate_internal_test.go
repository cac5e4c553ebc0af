package pool

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// TestCheckRate: an asker's checks run at a question's rate unless the
// asker's connection sets its own: every informer of a question is checked
// at once, and client-go's default rate held the eleventh check 200 ms.
func TestCheckRate(t *testing.T) {
	if got := metadataConfig(&rest.Config{}); got.QPS != checkQPS || got.Burst != checkBurst {
		t.Errorf("default: QPS %v, burst %d; want %d, %d", got.QPS, got.Burst, checkQPS, checkBurst)
	}
	if got := metadataConfig(&rest.Config{QPS: 7, Burst: 9}); got.QPS != 7 || got.Burst != 9 {
		t.Errorf("the connection's own: QPS %v, burst %d; want 7, 9", got.QPS, got.Burst)
	}
	limiter := flowcontrol.NewFakeAlwaysRateLimiter()
	if got := metadataConfig(&rest.Config{RateLimiter: limiter}); got.QPS != 0 || got.RateLimiter != limiter {
		t.Errorf("the connection's limiter: QPS %v, limiter %v", got.QPS, got.RateLimiter)
	}
}
