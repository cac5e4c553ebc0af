package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-idx/kubectl-idx/test/faultproxy"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// slowFactor is how many --request-timeouts the pods LIST takes to arrive over the
// throttled link: enough that an overall deadline cannot be met by a wide margin,
// few enough to keep the test short and the link fast enough for TLS: the client
// reads nothing of a record (up to 16 KiB) until all of it has come, so at this rate
// (about 14 KB/s for the fixtures) data still reaches it more often than once a
// timeout.
const slowFactor = 3

// kubectlVia runs kubectl with args as the admin through the kubeconfig kc, killing
// it after hangBound.
func kubectlVia(t *testing.T, kc string, args ...string) testenv.Result {
	t.Helper()
	return run(t, testenv.Cmd{Path: testenv.KubectlPath(), Args: args, Env: env.Environ(kc, ""), Timeout: hangBound})
}

// throttleFor runs kubectl-idx with args through p at full speed twice: the first run
// fills the discovery cache for p's address (discovery keeps kubectl's overall
// deadline, and this test is about the LIST); the second measures how many bytes a run
// receives. It then throttles p so that they take slowFactor request timeouts, and
// returns the output of the fast run.
func throttleFor(t *testing.T, p *faultproxy.Proxy, kc string, args ...string) string {
	t.Helper()
	p.Throttle(0)
	mustSucceed(t, "kubectl-idx over the fast link", idxWithin(t, kc, args...))
	before := p.BytesDown()
	res := idxWithin(t, kc, args...)
	mustSucceed(t, "kubectl-idx over the fast link", res)
	size := p.BytesDown() - before
	rate := int64(float64(size) / (slowFactor * faultTimeout.Seconds()))
	t.Logf("kubectl-idx %s received %d bytes in %s; throttling to %d bytes/s", strings.Join(args, " "), size, res.Wall.Round(time.Millisecond), rate)
	p.Throttle(rate)
	return res.Stdout
}

// TestFaultSlowList: over a link so slow that the pods LIST answer takes several times
// --request-timeout to arrive, kubectl gives up, as its deadline is overall, while
// kubectl-idx, whose deadline is on progress, answers exactly as kubectl does over a
// fast link. A link that stops in the middle of the answer still fails within the
// bound of a server that does not answer, in the same words.
func TestFaultSlowList(t *testing.T) {
	timeout := "--request-timeout=" + faultTimeout.String()
	p, kc := newFaultProxy(t, env)

	for _, format := range []string{"name", "json"} {
		t.Run("-o "+format, func(t *testing.T) {
			args := []string{"pods", "-A", "-o", format, timeout}
			fast := throttleFor(t, p, kc, args...)
			defer p.Throttle(0)

			// The throttle is strong enough: kubectl's deadline ends its LIST.
			k := kubectlVia(t, kc, append([]string{"get"}, args...)...)
			noPanic(t, "kubectl", k)
			if k.ExitCode == 0 {
				t.Fatalf("kubectl answered over the throttled link in %s: the link is not slow enough to test anything", k.Wall.Round(time.Millisecond))
			}
			t.Logf("kubectl over the throttled link, after %s: %s", k.Wall.Round(time.Millisecond), strings.TrimSpace(k.Stderr))

			res := idxWithin(t, kc, args...)
			mustSucceed(t, "kubectl-idx over the throttled link", res)
			if min := time.Duration(slowFactor * 0.8 * float64(faultTimeout)); res.Wall < min {
				t.Errorf("kubectl-idx answered in %s, want at least %s: the link was not as slow as measured", res.Wall.Round(time.Millisecond), min)
			}
			t.Logf("kubectl-idx over the throttled link: %s", res.Wall.Round(time.Millisecond))
			if strings.TrimSpace(res.Stderr) != "" {
				t.Errorf("stderr not empty:\n%s", res.Stderr)
			}

			// The truth: kubectl without the proxy.
			want := as("").kubectl(t, append([]string{"get"}, args...)...)
			mustSucceed(t, "kubectl", want)
			if format == "json" {
				compareLists(t, decodeDoc(t, "kubectl-idx -o json", res.Stdout, false), decodeDoc(t, "kubectl -o json", want.Stdout, false))
			} else if res.Stdout != want.Stdout {
				t.Errorf("stdout differs\nkubectl-idx:\n%s\nkubectl:\n%s", res.Stdout, want.Stdout)
			}
			if res.Stdout != fast {
				t.Errorf("over the throttled link kubectl-idx printed\n%s\nover the fast link\n%s", res.Stdout, fast)
			}
		})
	}

	t.Run("stalled mid-answer", func(t *testing.T) {
		args := []string{"pods", "-A", "-o", "json", timeout}
		throttleFor(t, p, kc, args...)
		defer p.Throttle(0)
		defer p.Unstall()
		// The answer is under way after a second (discovery is cached, the
		// handshake is a few KiB); then it stops.
		const stallAfter = time.Second
		sent := p.BytesDown()
		stall := time.AfterFunc(stallAfter, p.Stall)
		defer stall.Stop()
		res := idxWithin(t, kc, args...)
		if got := p.BytesDown() - sent; got < 4<<10 {
			t.Errorf("only %d bytes went through before the stall: the stall did not hit the answer", got)
		}
		res.Stderr = dropBodyReadErrors(t, res.Stderr)
		// The last byte a second in, one timeout until the deadline, one more for
		// the retry window; plus process start and the reflector's scheduling.
		failsWith(t, res, `error: listing pods: the server `+regexp.QuoteMeta(p.Addr())+` did not answer within --request-timeout=2s \(retried for 2s\)`,
			stallAfter+2*faultTimeout+3*time.Second)
	})
}
