package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	buildinfo "github.com/kubectl-idx/kubectl-idx/internal/version"
)

// withBuildInfo sets the link-time build identity for one test.
func withBuildInfo(t *testing.T, v, commit, date string) {
	t.Helper()
	oldV, oldC, oldD := buildinfo.Version, buildinfo.Commit, buildinfo.Date
	buildinfo.Version, buildinfo.Commit, buildinfo.Date = v, commit, date
	t.Cleanup(func() { buildinfo.Version, buildinfo.Commit, buildinfo.Date = oldV, oldC, oldD })
}

func TestVersionRun(t *testing.T) {
	withBuildInfo(t, "v1.2.3", "abc1234", "2025-06-01T12:00:00Z")
	server := &version.Info{Major: "1", Minor: "34", GitVersion: "v1.34.4", Platform: "linux/amd64"}
	unreachable := errors.New(`Get "https://127.0.0.1:6443/version": dial tcp 127.0.0.1:6443: connect: connection refused`)

	tests := []struct {
		name       string
		clientOnly bool
		output     string
		server     func(context.Context) (*version.Info, error)
		wantOut    string
		wantErr    error
		wantCalled bool
	}{
		{
			name:       "client and server",
			server:     func(context.Context) (*version.Info, error) { return server, nil },
			wantOut:    "Client Version: v1.2.3 (commit abc1234, built 2025-06-01T12:00:00Z)\nServer Version: v1.34.4\n",
			wantCalled: true,
		},
		{
			name:       "client only",
			clientOnly: true,
			server:     func(context.Context) (*version.Info, error) { return server, nil },
			wantOut:    "Client Version: v1.2.3 (commit abc1234, built 2025-06-01T12:00:00Z)\n",
		},
		{
			name:       "server unreachable still prints the client version",
			server:     func(context.Context) (*version.Info, error) { return nil, unreachable },
			wantOut:    "Client Version: v1.2.3 (commit abc1234, built 2025-06-01T12:00:00Z)\n",
			wantErr:    unreachable,
			wantCalled: true,
		},
		{
			name:   "json",
			output: "json",
			server: func(context.Context) (*version.Info, error) { return server, nil },
			wantOut: `{
  "clientVersion": {
    "version": "v1.2.3",
    "commit": "abc1234",
    "date": "2025-06-01T12:00:00Z"
  },
  "serverVersion": {
    "major": "1",
    "minor": "34",
    "gitVersion": "v1.34.4",
    "gitCommit": "",
    "gitTreeState": "",
    "buildDate": "",
    "goVersion": "",
    "compiler": "",
    "platform": "linux/amd64"
  }
}
`,
			wantCalled: true,
		},
		{
			name:       "json, client only",
			clientOnly: true,
			output:     "json",
			server:     func(context.Context) (*version.Info, error) { return server, nil },
			wantOut:    "{\n  \"clientVersion\": {\n    \"version\": \"v1.2.3\",\n    \"commit\": \"abc1234\",\n    \"date\": \"2025-06-01T12:00:00Z\"\n  }\n}\n",
		},
		{
			name:       "json, server unreachable",
			output:     "json",
			server:     func(context.Context) (*version.Info, error) { return nil, unreachable },
			wantOut:    "{\n  \"clientVersion\": {\n    \"version\": \"v1.2.3\",\n    \"commit\": \"abc1234\",\n    \"date\": \"2025-06-01T12:00:00Z\"\n  }\n}\n",
			wantErr:    unreachable,
			wantCalled: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			called := false
			o := &VersionOptions{
				ClientOnly: tc.clientOnly,
				Output:     tc.output,
				serverVersion: func(ctx context.Context) (*version.Info, error) {
					called = true
					if _, ok := ctx.Deadline(); !ok {
						t.Error("server version asked without a deadline")
					}
					return tc.server(ctx)
				},
				IOStreams: streams,
			}
			if err := o.Complete(nil, nil); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if err := o.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			err := o.Run(context.Background())
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("Run error = %v, want %v", err, tc.wantErr)
			}
			if called != tc.wantCalled {
				t.Errorf("server asked: %v, want %v", called, tc.wantCalled)
			}
			if got := out.String(); got != tc.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, tc.wantOut)
			}
			if got := errOut.String(); got != "" {
				t.Errorf("stderr = %q, want nothing (the error is returned, not printed)", got)
			}
		})
	}
}

func TestVersionJSONShape(t *testing.T) {
	withBuildInfo(t, "v1.2.3", "abc1234", "2025-06-01T12:00:00Z")
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &VersionOptions{
		Output:        "json",
		serverVersion: func(context.Context) (*version.Info, error) { return &version.Info{GitVersion: "v1.34.4"}, nil },
		IOStreams:     streams,
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not a JSON object of objects: %v\n%s", err, out)
	}
	if want := map[string]any{"version": "v1.2.3", "commit": "abc1234", "date": "2025-06-01T12:00:00Z"}; !reflect.DeepEqual(got["clientVersion"], want) {
		t.Errorf("clientVersion = %v, want %v", got["clientVersion"], want)
	}
	if gv := got["serverVersion"]["gitVersion"]; gv != "v1.34.4" {
		t.Errorf("serverVersion.gitVersion = %v, want v1.34.4", gv)
	}
}

// TestVersionCommand runs `kubectl idx version` through the real root command for
// what needs no server.
func TestVersionCommand(t *testing.T) {
	withBuildInfo(t, "v1.2.3", "abc1234", "2025-06-01T12:00:00Z")
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{name: "client only", args: []string{"version", "--client"}, wantOut: "Client Version: v1.2.3 (commit abc1234, built 2025-06-01T12:00:00Z)\n"},
		{name: "unknown output", args: []string{"version", "--client", "-o", "yaml"}, wantErr: `--output must be 'json' or empty, got "yaml"`},
		{name: "extra argument", args: []string{"version", "extra"}, wantErr: `unknown command "extra" for "kubectl idx version"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			root := NewCmdRoot(streams)
			root.SetArgs(append(tc.args, "--kubeconfig", unreachableKubeconfig(t)))
			root.SetOut(streams.Out)
			root.SetErr(streams.ErrOut)
			err := root.ExecuteContext(context.Background())
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got := out.String(); got != tc.wantOut {
				t.Errorf("stdout = %q, want %q", got, tc.wantOut)
			}
			if got := errOut.String(); strings.TrimSpace(got) != "" {
				t.Errorf("stderr = %q, want nothing", got)
			}
		})
	}
}

// TestVersionRequestTimeout: --request-timeout bounds the server's request,
// through its context, and 30 seconds do without it.
func TestVersionRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		want    time.Duration
	}{{"", 30 * time.Second}, {"0", 30 * time.Second}, {"2s", 2 * time.Second}, {"5", 5 * time.Second}} {
		t.Run(tc.timeout, func(t *testing.T) {
			flags := genericclioptions.NewConfigFlags(true)
			*flags.Timeout = tc.timeout
			var got time.Duration
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			o := &VersionOptions{ConfigFlags: flags, IOStreams: streams, serverVersion: func(ctx context.Context) (*version.Info, error) {
				deadline, ok := ctx.Deadline()
				if !ok {
					t.Fatal("server version asked without a deadline")
				}
				got = time.Until(deadline)
				return &version.Info{}, nil
			}}
			if err := o.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got > tc.want || got < tc.want-time.Second {
				t.Errorf("deadline in %s, want %s", got, tc.want)
			}
		})
	}
}
