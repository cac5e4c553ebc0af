package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/pkg/served"
)

// TestHistoryFlags: history's and blame's bad command lines are one line on
// stderr and exit code 1, before any list.
func TestHistoryFlags(t *testing.T) {
	runFlagCases(t, []flagCase{
		{name: "no object", args: []string{"history"}, wantErr: "you must specify the object to show the history of as TYPE/NAME, e.g. deployment/web"},
		{name: "--since negative", args: []string{"history", "deploy/web", "--since=-1h"}, wantErr: "--since must be greater than 0"},
		{name: "--since zero", args: []string{"history", "deploy/web", "--since", "0"}, wantErr: "--since must be greater than 0"},
		{name: "--event-ttl zero", args: []string{"history", "deploy/web", "--event-ttl", "0"}, wantErr: "--event-ttl must be greater than 0"},
		{name: "--event-ttl negative", args: []string{"history", "deploy/web", "--event-ttl=-5m"}, wantErr: "--event-ttl must be greater than 0"},
		{name: "blame --event-ttl", args: []string{"blame", "deploy/web", "--event-ttl", "1h"}, wantErr: "unknown flag: --event-ttl"},
		{name: "--sort-by", args: []string{"history", "deploy/web", "--sort-by", "{.time}"}, wantErr: "--sort-by is not supported by kubectl idx history"},
		{name: "-o dot", args: []string{"history", "deploy/web", "-o", "dot"}, wantErr: "-o dot draws relation graphs: use it with kubectl idx tree, owners, selects, selected-by or uses"},
		{name: "blame, no object", args: []string{"blame"}, wantErr: "you must specify the object to blame as TYPE/NAME, e.g. deployment/web"},
		{name: "blame --where", args: []string{"blame", "deploy/web", "--where", "true"}, wantErr: "--where cannot be used with kubectl idx blame: it shows one object; kubectl idx history takes it"},
		{name: "blame --since", args: []string{"blame", "deploy/web", "--since", "1h"}, wantErr: "unknown flag: --since"},
		{name: "history, unknown type", args: []string{"history", "podz/x"}, discovery: true, wantErr: `the server doesn't have a resource type "podz"`},
	})
}

// historyCase is history or blame over fixtures.HistoryObjects in shop,
// asked at fixtures.HistoryNow.
func historyCase(t *testing.T, blame bool, output string, args ...string) (command, *strings.Builder, *strings.Builder) {
	t.Helper()
	stdout, stderr := &strings.Builder{}, &strings.Builder{}
	ro := fakeRelationOptions(output, stdout, stderr, faketarget.New(t, "", fakeapi.New(nil, fixtures.HistoryObjects()...), "shop", fixtures.HistoryAPIResources()))
	var c command
	if blame {
		c = blameCommand.newOptions(ro)
	} else {
		o := &HistoryOptions{RelationOptions: ro, now: func() time.Time { return fixtures.HistoryNow }}
		c = o
		// value is the duration after the flag at i.
		value := func(i int) time.Duration {
			d, err := time.ParseDuration(args[i+1])
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "--uses":
				o.Uses = true
			case "--since":
				o.Since, o.sinceSet = value(i), true
				i++
			case "--event-ttl":
				o.EventTTL, o.eventTTLSet = value(i), true
				i++
			}
		}
	}
	prepare(t, c, []string{"deployment/web"})
	return c, stdout, stderr
}

// TestHistoryRun: the timeline as a table, a row per change and per gap,
// each change's writer beside it; -o json is the document; -o name the
// objects that changed.
func TestHistoryRun(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		args         []string
		golden       string
		check        func(t *testing.T, stdout string)
	}{
		{name: "table", args: []string{"--uses", "--since", "3h"}, golden: "testdata/history_deployment.golden"},
		{name: "names", output: "name", args: []string{"--uses"}, check: func(t *testing.T, stdout string) {
			if want := "deployment.apps/web\nconfigmap/web-config\npod/web-h3-a\n"; stdout != want {
				t.Errorf("stdout %q, want %q", stdout, want)
			}
		}},
		{name: "json", output: "json", args: []string{"--since", "3h"}, check: func(t *testing.T, stdout string) {
			var doc struct {
				APIVersion, Kind string
				Entries          []json.RawMessage
				Gaps             []struct{ From, To, Reason string }
				Coverage         []struct{ Source string }
				Warnings         []string
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "History" || len(doc.Entries) == 0 || len(doc.Gaps) != 1 || len(doc.Coverage) != 4 || doc.Warnings == nil {
				t.Errorf("document: %+v", doc)
			}
			if doc.Gaps[0].From != "2026-03-01T09:00:00Z" || doc.Gaps[0].To != "2026-03-01T10:00:00Z" {
				t.Errorf("gap %+v", doc.Gaps[0])
			}
		}},
		// The events cover what --event-ttl says the API server keeps: the
		// last 3 hours leave no gap, the last 30 minutes a longer one.
		{name: "--event-ttl 3h", output: "json", args: []string{"--since", "3h", "--event-ttl", "3h"}, check: func(t *testing.T, stdout string) {
			doc := decodeHistoryGaps(t, stdout)
			if len(doc.Gaps) != 0 {
				t.Errorf("gaps %+v, want none: the events of the last 3 hours cover the window", doc.Gaps)
			}
		}},
		{name: "--event-ttl 30m", output: "json", args: []string{"--since", "3h", "--event-ttl", "30m"}, check: func(t *testing.T, stdout string) {
			doc := decodeHistoryGaps(t, stdout)
			if len(doc.Gaps) != 1 || doc.Gaps[0].From != "2026-03-01T09:00:00Z" || doc.Gaps[0].To != "2026-03-01T10:00:00Z" || !strings.Contains(doc.Gaps[0].Reason, "events expire about 30m0s after they last happened") {
				t.Errorf("gaps %+v, want 09:00 to 10:00, the events said to expire after 30 minutes", doc.Gaps)
			}
		}},
		{name: "yaml", output: "yaml", args: []string{"--uses"}, check: func(t *testing.T, stdout string) {
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(stdout), &doc); err != nil || doc["kind"] != "History" {
				t.Fatalf("not a History in YAML: %v\n%s", err, stdout)
			}
			// A change's values are YAML values, not JSON text.
			found := false
			entries, _ := doc["entries"].([]any)
			for _, e := range entries {
				changes, _ := e.(map[string]any)["changes"].([]any)
				for _, c := range changes {
					if c, _ := c.(map[string]any); c["path"] == ".spec.selector" {
						v, _ := c["new"].(map[string]any)
						_, found = v["matchLabels"]
					}
				}
			}
			if !found {
				t.Errorf("the selector's value is not a YAML map:\n%s", stdout)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, stdout, stderr := historyCase(t, false, tc.output, tc.args...)
			if err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %s", stderr)
			}
			if tc.golden != "" {
				golden.Assert(t, tc.golden, stdout.String())
			}
			if tc.check != nil {
				tc.check(t, stdout.String())
			}
		})
	}
}

// decodeHistoryGaps reads the gaps of a History document in JSON.
func decodeHistoryGaps(t *testing.T, stdout string) (doc struct {
	Gaps []struct{ From, To, Reason string }
}) {
	t.Helper()
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return doc
}

// TestBlameRun: the object's YAML, each line beside who last wrote its
// field; env FOO, inserted first by a server-side apply, is that manager's.
func TestBlameRun(t *testing.T) {
	c, stdout, stderr := historyCase(t, true, "")
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr)
	}
	golden.Assert(t, "testdata/blame_deployment.golden", stdout.String())
	c, stdout, _ = historyCase(t, true, "name")
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "deployment.apps/web\n" {
		t.Errorf("-o name: %q", stdout)
	}
}

// TestHistoryCheckpointPath: --from-checkpoint is a path a served run
// resolves against the asker's directory, and a checkpoint that is not one
// is the file's error.
func TestHistoryCheckpointPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not-a-checkpoint")
	if err := os.WriteFile(path, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, _ := historyCase(t, false, "")
	c.(*HistoryOptions).FromCheckpoint = path
	err := c.Run(context.Background())
	if want := "checkpoint " + path + ` is not a kubectl idx checkpoint: its first line is "hello"`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if !served.PathFlags["from-checkpoint"] {
		t.Error("--from-checkpoint is not among pathFlags")
	}
}
