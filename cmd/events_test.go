package cmd

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/syncbuf"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// TestEventsFlags runs the events command's time window, --for-kind and -w
// through Execute, as main does, against a server the test must not contact
// (or, for checks that need the types, one that answers discovery only): each
// bad combination is one line on stderr and exit code 1, before any list.
func TestEventsFlags(t *testing.T) {
	const (
		duration  = "must be a duration such as 30s, 5m or 1h"
		object    = "error: you must specify the object to list the events of as TYPE/NAME, e.g. deployment/web"
		discovery = true
	)
	tests := []struct {
		name      string
		args      []string
		want      string
		discovery bool
	}{
		{name: "--since negative", args: []string{"events", "deploy/web", "--since", "-5m"}, want: "error: --since must be greater than 0"},
		{name: "--since zero", args: []string{"events", "deploy/web", "--since", "0"}, want: "error: --since must be greater than 0"},
		{name: "--since not a duration", args: []string{"events", "deploy/web", "--since", "soon"}, want: `error: invalid argument "soon" for "--since" flag: ` + duration},
		{name: "--since without unit", args: []string{"events", "deploy/web", "--since", "5"}, want: `error: invalid argument "5" for "--since" flag: ` + duration},
		{name: "--until negative", args: []string{"events", "deploy/web", "--until=-1h"}, want: "error: --until must be greater than 0"},
		{name: "--until zero", args: []string{"events", "deploy/web", "--until", "0s"}, want: "error: --until must be greater than 0"},
		{name: "--until with -w", args: []string{"events", "deploy/web", "--until", "5m", "-w"}, want: "error: --until cannot be used with --watch: events recorded while watching are newer than any end"},
		{name: "--until not before --since", args: []string{"events", "deploy/web", "--since", "5m", "--until", "10m"}, want: "error: --until must be less than --since: no event is at least 10m0s old and at most 5m0s old"},
		{name: "--until equal to --since", args: []string{"events", "deploy/web", "--since", "5m", "--until", "5m"}, want: "error: --until must be less than --since: no event is at least 5m0s old and at most 5m0s old"},
		{name: "--for-kind with a name", args: []string{"events", "deploy/web", "--for-kind", "pod/web-1"}, want: `error: --for-kind takes types such as pods or replicasets.apps, got "pod/web-1"; name the object as the argument`},
		{name: "--for-kind unknown", args: []string{"events", "deploy/web", "--for-kind", "podz"}, want: `error: the server doesn't have a resource type "podz"`, discovery: discovery},
		{name: "-w with custom columns", args: []string{"events", "deploy/web", "-w", "-o", "custom-columns=NAME:.metadata.name"}, want: "error: --watch cannot be used with -o custom-columns=NAME:.metadata.name: use the default table, json, yaml, name, jsonpath or a template"},
		{name: "-w not a bool", args: []string{"events", "deploy/web", "--watch=x"}, want: `error: invalid argument "x" for "-w, --watch" flag: must be true or false`},
		{name: "--checkpoint without -w", args: []string{"events", "deploy/web", "--checkpoint", "cp"}, want: "error: --checkpoint can only be used with --watch: it records where a feed stands"},
		// The events subcommand's flags need its object; without one they do
		// not fall through to the list of Event objects.
		{name: "--since without an object", args: []string{"events", "--since", "5m"}, want: object},
		{name: "-w without an object", args: []string{"events", "-w"}, want: object},
		{name: "--for-kind without an object", args: []string{"events", "--for-kind", "pods"}, want: object},
		{name: "--until without an object", args: []string{"events", "-n", "shop", "--until", "1h"}, want: object},
		// The window is the events command's alone.
		{name: "tree --since", args: []string{"tree", "deploy/web", "--since", "5m"}, want: "error: unknown flag: --since"},
		{name: "watch --since", args: []string{"watch", "pods", "--since", "5m"}, want: "error: unknown flag: --since"},
		{name: "get --since", args: []string{"pods", "--since", "5m"}, want: "error: unknown flag: --since"},
		{name: "uses --until", args: []string{"uses", "cm/x", "--until", "5m"}, want: "error: unknown flag: --until"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := unreachableKubeconfig(t)
			if tc.discovery {
				kubeconfig = discoveryServer(t)
			}
			executeFails(t, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, tc.args...), tc.want+"\n")
		})
	}
}

// TestListsEventsWindow: with a flag of the events subcommand, `kubectl idx
// events` is the subcommand.
func TestListsEventsWindow(t *testing.T) {
	for _, args := range [][]string{
		{"events", "--since", "5m"},
		{"events", "--until=1h"},
		{"events", "-w"},
		{"events", "--watch"},
		{"events", "--for-kind", "pods"},
		{"-n", "shop", "events", "--since", "5m", "-o", "json"},
	} {
		if listsEvents(args) {
			t.Errorf("listsEvents(%q) = true, want false", args)
		}
	}
}

// eventsWindowObjects are RelationObjects plus e5, an event about pod
// web-7d9c-a recorded through events.k8s.io/v1: eventTime +30s, last seen
// (series) at +5m, no lastTimestamp.
func eventsWindowObjects() []runtime.Object {
	return append(fixtures.RelationObjects(), fixtures.PulledEvent())
}

func TestEventsRunWindow(t *testing.T) {
	start := fixtures.RelationsTime
	tests := []struct {
		name         string
		since, until time.Duration
		forKinds     []string
		wantOut      string
		wantErrOut   string
	}{
		// The clock is at +6m: e5's last occurrence (+5m) is within 2m.
		{name: "since", since: 2 * time.Minute, wantOut: "event/e5\n"},
		{name: "until", until: 4 * time.Minute, wantOut: "event/e1\nevent/e2\n"},
		{name: "since and until", since: 4*time.Minute + 30*time.Second, until: 2 * time.Minute, wantOut: "event/e2\nevent/e3\n"},
		{name: "for-kind", forKinds: []string{"po"}, wantOut: "event/e3\nevent/e5\n"},
		{name: "for-kind and since", forKinds: []string{"pods", "deploy"}, since: 5*time.Minute + 30*time.Second, wantOut: "event/e1\nevent/e3\nevent/e5\n"},
		{name: "nothing in the window", since: time.Second, wantErrOut: "No events found in shop namespace.\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			output := "name"
			if tc.wantErrOut != "" {
				output = ""
			}
			c := newRelationCase(eventsWindowObjects(), output)
			o := c.command(t, "events").(*EventsOptions)
			o.Since, o.Until, o.ForKinds = tc.since, tc.until, tc.forKinds
			o.now = func() time.Time { return start.Add(6 * time.Minute) }
			prepare(t, o, []string{"deployment/web"})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := o.Run(ctx); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := c.stdout.String(); got != tc.wantOut {
				t.Errorf("stdout = %q, want %q", got, tc.wantOut)
			}
			if got := c.stderr.String(); got != tc.wantErrOut {
				t.Errorf("stderr = %q, want %q", got, tc.wantErrOut)
			}
		})
	}
}

// lastSeen matches the LAST SEEN cell of kubectl's events table, relative to
// the real clock.
var lastSeen = regexp.MustCompile(`^\S+( \(x\d+ over \S+\))? +`)

func TestEventsRunWatch(t *testing.T) {
	tests := []struct {
		name     string
		output   string
		forKinds []string
		// want are the lines of the initial state; a table's LAST SEEN is
		// masked as AGE and its columns one space apart.
		want []string
	}{
		{
			name: "json", output: "json",
			want: []string{
				`{"type":"ADDED","time":"T","object":{"kind":"Event","apiVersion":"v1","metadata":{"name":"e1","namespace":"shop","uid":"ev-e1"`,
				`{"type":"ADDED","time":"T","object":{"kind":"Event","apiVersion":"v1","metadata":{"name":"e3","namespace":"shop","uid":"ev-e3"`,
				`{"type":"ADDED","time":"T","object":{"kind":"Event","apiVersion":"v1","metadata":{"name":"e5","namespace":"shop","uid":"ev-e5","resourceVersion":"5"`,
			},
		},
		{
			name: "table", forKinds: []string{"pods"},
			want: []string{
				"LAST SEEN TYPE REASON OBJECT MESSAGE",
				"AGE Warning FailedScheduling Pod/web-7d9c-b FailedScheduling happened",
				"AGE Normal Pulled Pod/web-7d9c-a image pulled",
			},
		},
		{name: "names", output: "name", want: []string{"event/e1", "event/e3", "event/e5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newRelationCase(eventsWindowObjects(), tc.output)
			o := c.command(t, "events").(*EventsOptions)
			stdout := &syncbuf.Buffer{}
			o.Out = stdout
			o.Watch, o.ForKinds = true, tc.forKinds
			prepare(t, o, []string{"deployment/web"})
			lines := runEventsWatch(t, o, stdout, len(tc.want))
			if len(lines) != len(tc.want) {
				t.Fatalf("stdout:\n%s\nwant %d lines", stdout, len(tc.want))
			}
			times := regexp.MustCompile(`"time":"[^"]+"`)
			for i, l := range lines {
				got := times.ReplaceAllString(l, `"time":"T"`)
				if tc.output == "" {
					// Column widths follow LAST SEEN, which follows the clock.
					if i > 0 {
						got = lastSeen.ReplaceAllString(got, "AGE ")
					}
					got = strings.Join(strings.Fields(got), " ")
				}
				if !strings.HasPrefix(got, tc.want[i]) {
					t.Errorf("line %d:\n%s\nwant a line starting with\n%s", i, got, tc.want[i])
				}
			}
			if c.stderr.String() != "" {
				t.Errorf("stderr = %q", c.stderr)
			}
		})
	}
}

// runEventsWatch runs o, an events -w, until stdout has n lines or 20 seconds have passed,
// then interrupts it and returns the lines.
func runEventsWatch(t *testing.T, o *EventsOptions, stdout *syncbuf.Buffer, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	var lines []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if lines = strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n"); len(lines) >= n {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	return lines
}

// TestEventsRunWatchContexts: events -w follows the object's events in each
// context at once: the table starts with CONTEXT and each row names its
// context, JSON lines carry "context".
func TestEventsRunWatchContexts(t *testing.T) {
	for _, tc := range []struct {
		output string
		want   []string
	}{
		{output: "", want: []string{"CONTEXT LAST SEEN TYPE REASON OBJECT MESSAGE", "a AGE Warning FailedScheduling Pod/web-7d9c-b", "a AGE Normal Pulled Pod/web-7d9c-a", "b AGE Warning FailedScheduling Pod/web-7d9c-b", "b AGE Normal Pulled Pod/web-7d9c-a"}},
		{output: "name", want: []string{"a/event/e1", "a/event/e3", "a/event/e5", "b/event/e1", "b/event/e3", "b/event/e5"}},
	} {
		t.Run("output "+tc.output, func(t *testing.T) {
			c := newRelationCase(eventsWindowObjects(), tc.output)
			o := c.command(t, "events").(*EventsOptions)
			o.resolved = []query.Target{
				faketarget.New(t, "a", fakeapi.New(nil, eventsWindowObjects()...), "shop", fixtures.RelationAPIResources()),
				faketarget.New(t, "b", fakeapi.New(nil, eventsWindowObjects()...), "shop", fixtures.RelationAPIResources()),
			}
			stdout := &syncbuf.Buffer{}
			o.Out = stdout
			o.Watch, o.ForKinds = true, []string{"pods"}
			if tc.output != "" {
				o.ForKinds = nil
			}
			if err := o.Complete(nil, []string{"deployment/web"}); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if err := o.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			lines := runEventsWatch(t, o, stdout, len(tc.want))
			var got []string
			for i, l := range lines {
				if tc.output == "" && i > 0 {
					ctx, rest, _ := strings.Cut(l, " ")
					l = ctx + " " + lastSeen.ReplaceAllString(strings.TrimLeft(rest, " "), "AGE ")
				}
				got = append(got, strings.Join(strings.Fields(l), " "))
			}
			// The contexts' feeds interleave: each context's lines keep
			// their order.
			rows := got
			if tc.output == "" && len(rows) > 0 {
				rows = rows[1:]
			}
			slices.SortStableFunc(rows, func(a, b string) int { return strings.Compare(a[:1], b[:1]) })
			if len(got) != len(tc.want) {
				t.Fatalf("stdout:\n%s\nwant %d lines", stdout, len(tc.want))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("line %d:\n%s\nwant a line starting with\n%s", i, got[i], tc.want[i])
				}
			}
			if c.stderr.String() != "" {
				t.Errorf("stderr = %q", c.stderr)
			}
		})
	}
}
