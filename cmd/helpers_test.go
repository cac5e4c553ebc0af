package cmd

import (
	"context"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// executeFails runs the command line through Execute, as the process does,
// and checks that it exits 1 with wantErrOut on stderr and nothing on stdout.
// It returns stderr for further checks.
func executeFails(t *testing.T, args []string, wantErrOut string) string {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(streams, args); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if got := errOut.String(); got != wantErrOut {
		t.Errorf("stderr:\n%q\nwant:\n%q", got, wantErrOut)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", out)
	}
	return errOut.String()
}

// rootFails runs the root command on args, connected to kubeconfig, and
// checks that it returns wantErr having printed nothing: the error is
// Execute's to print, once. The connection flags go first: a flag missing
// its value must be the last argument, or pflag takes the next one as the
// value.
func rootFails(t *testing.T, kubeconfig string, args []string, wantErr string) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams)
	root.SetArgs(append([]string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, args...))
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.ExecuteContext(context.Background())
	if err == nil || err.Error() != wantErr {
		t.Errorf("error = %v\nwant    %s", err, wantErr)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", out)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q, want nothing (errors are printed once, by Execute)", errOut)
	}
}

// flagCase is a command line that fails in Complete or Validate, before any
// list or watch, and the error it fails with.
type flagCase struct {
	name string
	args []string
	// discovery lets the case read the server's discovery; without it the
	// server must not be contacted at all.
	discovery bool
	wantErr   string
}

// runFlagCases runs each case through rootFails, against a server that
// serves discovery alone or one that must not be contacted.
func runFlagCases(t *testing.T, tests []flagCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := unreachableKubeconfig(t)
			if tc.discovery {
				kubeconfig = discoveryServer(t)
			}
			rootFails(t, kubeconfig, tc.args, tc.wantErr)
		})
	}
}

// prepare runs o's Complete on args and its Validate, as the command's RunE
// does before Run, failing the test on an error.
func prepare(t *testing.T, o command, args []string) {
	t.Helper()
	if err := o.Complete(nil, args); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

// errorText is err's text, "" for none.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
