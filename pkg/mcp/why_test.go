package mcp_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// crashing is fixtures.WhyObjects on node worker-1: Deployment web in shop, its ReplicaSet
// and two pods that crash, Service web selecting them, and pod lone, of its own, Pending with
// nothing saying why.
func crashing() []runtime.Object {
	return fixtures.WhyObjects("worker-1", true, true)
}

// TestWhy: the why tool answers kubectl idx why's diagnosis, its causes
// paged worst first as plain strings, the verdict in the text; an object of
// no KIND/NAME shape is an InvalidArgument, and object text an attacker
// wrote stays out of the text.
func TestWhy(t *testing.T) {
	cfg, _ := oneCluster(t, crashing()...)
	cs := server(t, cfg, "")
	lines := func(a v1alpha1.WhyAnswer) []string {
		out := []string{}
		for _, c := range a.Causes {
			out = append(out, fmt.Sprintf("%s %s %s", c.Reason, c.Object, c.Subject))
		}
		return out
	}

	var one v1alpha1.WhyAnswer
	res, _ := call(t, cs, "why", map[string]any{"object": "deployment/web"}, &one)
	mustSucceed(t, "why deployment/web", res)
	if got, want := lines(one), []string{"CrashLoopBackOff Pod/web-1-a ", "NoReadyPods Service/web "}; !slices.Equal(got, want) || one.Status != "Unhealthy" ||
		one.Total != 2 || one.Truncated || len(one.Causes[0].Evidence) == 0 || !strings.Contains(one.Causes[0].Evidence[0], "state.waiting.reason=CrashLoopBackOff") {
		t.Errorf("why deployment/web: %s %q, total %d, evidence %q", one.Status, got, one.Total, one.Causes[0].Evidence)
	}
	if got := text(res); got != "why: Unhealthy; causes: 2 of 2. The answer is in structuredContent." {
		t.Errorf("text %q", got)
	}

	// Every top-level owner, a cause at a time.
	var first, second v1alpha1.WhyAnswer
	res, _ = call(t, cs, "why", map[string]any{"limit": 1}, &first)
	mustSucceed(t, "why, limit 1", res)
	res, _ = call(t, cs, "why", map[string]any{"limit": 1, "cursor": first.NextCursor}, &second)
	mustSucceed(t, "why, the next page", res)
	var subjects []string
	for _, s := range first.Subjects {
		subjects = append(subjects, s.Object+" "+s.Status)
	}
	if got := append(lines(first), lines(second)...); !slices.Equal(got, []string{"CrashLoopBackOff Pod/web-1-a Deployment/web", "NoReadyPods Service/web Deployment/web"}) ||
		!first.Truncated || first.Total != 2 || second.Truncated || first.Healthy != 0 ||
		!slices.Equal(subjects, []string{"Deployment/web Unhealthy", "Pod/lone Unknown", "Service/web Unhealthy"}) {
		t.Errorf("two pages: %q, truncated %v %v, total %d, subjects %q", got, first.Truncated, second.Truncated, first.Total, subjects)
	}

	var unknown v1alpha1.WhyAnswer
	res, _ = call(t, cs, "why", map[string]any{"object": "pod/lone"}, &unknown)
	mustSucceed(t, "why pod/lone", res)
	if unknown.Status != "Unknown" || len(unknown.Causes) != 0 || unknown.Checked["Pod"] != 1 {
		t.Errorf("why pod/lone: %+v", unknown)
	}

	res, _ = call(t, cs, "why", map[string]any{"object": "deployment"}, nil)
	mustFail(t, "why deployment", res, "InvalidArgument", "object must be KIND/NAME")
	res, _ = call(t, cs, "why", map[string]any{"object": "deployment/nope"}, nil)
	mustFail(t, "why deployment/nope", res, "NotFound", `deployments.apps "nope" not found`)

	// A pod whose only Warning event is an attacker's: its reason and message
	// are quoted in the answer's fields, never in the text.
	cfg, _ = oneCluster(t, attackObjects()...)
	cs = server(t, cfg, "")
	var attack v1alpha1.WhyAnswer
	res, raw := call(t, cs, "why", map[string]any{"object": "pod/attack"}, &attack)
	mustSucceed(t, "why pod/attack", res)
	if strings.Contains(text(res), injection) || strings.Contains(text(res), injectionReason) || !strings.Contains(raw, injection) {
		t.Errorf("text %q; the answer:\n%s", text(res), raw)
	}
}
