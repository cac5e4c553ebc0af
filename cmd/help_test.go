package cmd

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// optionsTip is kubectl's closing line of a runnable command's help.
const optionsTip = `Use "kubectl idx options" for a list of global command-line options (applies to all commands).`

// TestHelpLeavesGlobalFlagsToOptions runs every command's --help: its own
// flags, -A and --all-contexts where the command asks clusters, none of
// the global ones (kubectl's connection flags, -v, --profile), and kubectl's
// line naming kubectl idx options.
func TestHelpLeavesGlobalFlagsToOptions(t *testing.T) {
	tests := []struct {
		args []string
		// asks: the command asks clusters, so -A and --all-contexts are its.
		asks bool
		// own is one of the command's own flags.
		own string
		// runnable commands end with the tip; groups of commands do not.
		runnable bool
	}{
		{args: nil, asks: true, own: "by-owner", runnable: true},
		{args: []string{"tree"}, asks: true, own: "sync-timeout", runnable: true},
		{args: []string{"owners"}, asks: true, own: "where", runnable: true},
		{args: []string{"orphans"}, asks: true, own: "sync-timeout", runnable: true},
		{args: []string{"events"}, asks: true, own: "for-kind", runnable: true},
		{args: []string{"uses"}, asks: true, own: "output", runnable: true},
		{args: []string{"selects"}, asks: true, own: "sort-by", runnable: true},
		{args: []string{"selected-by"}, asks: true, own: "no-headers", runnable: true},
		{args: []string{"watch"}, asks: true, own: "watch-only", runnable: true},
		{args: []string{"version"}, own: "client", runnable: true},
		{args: []string{"completion"}, own: "help", runnable: true},
		{args: []string{"cache"}, own: "help", runnable: true},
		{args: []string{"cache", "status"}, own: "help", runnable: true},
	}
	global := []string{"kubeconfig", "context", "namespace", "request-timeout", "token", "v", "profile", "cache-dir"}
	for _, tc := range tests {
		t.Run(strings.Join(append([]string{"kubectl idx"}, tc.args...), " "), func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			root := NewCmdRoot(streams)
			root.SetArgs(append(tc.args, "--help"))
			root.SetOut(streams.Out)
			root.SetErr(streams.ErrOut)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			help := out.String()
			flags := helpFlags(help)
			for _, g := range global {
				if slices.Contains(flags, g) {
					t.Errorf("help lists the global --%s:\n%s", g, help)
				}
			}
			if strings.Contains(help, "Global Flags") {
				t.Errorf("help has a Global Flags section:\n%s", help)
			}
			if !slices.Contains(flags, tc.own) {
				t.Errorf("help lacks the command's own --%s:\n%s", tc.own, help)
			}
			for _, f := range []string{"all-namespaces", "all-contexts"} {
				if slices.Contains(flags, f) != tc.asks {
					t.Errorf("help lists --%s: %v, want %v:\n%s", f, !tc.asks, tc.asks, help)
				}
			}
			if strings.HasSuffix(help, "\n\n"+optionsTip+"\n") != tc.runnable {
				t.Errorf("help ends with %q: %v, want %v:\n%s", optionsTip, !tc.runnable, tc.runnable, help)
			}
			if strings.Contains(help, "\n  options ") {
				t.Errorf("options is listed among the commands; the closing line names it:\n%s", help)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr: %q", errOut)
			}
		})
	}
}

// TestOptions: kubectl idx options prints the flags every command takes, in
// kubectl's words, and nothing of any one command.
func TestOptions(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams)
	root.SetArgs([]string{"options"})
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	want := "The following options can be passed to any command:\n\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("stdout does not start with %q:\n%s", want, got)
	}
	flags := helpFlags("Flags:\n" + strings.TrimPrefix(got, want))
	for _, f := range []string{"kubeconfig", "context", "namespace", "request-timeout", "token", "v", "profile", "all-namespaces", "all-contexts"} {
		if !slices.Contains(flags, f) {
			t.Errorf("options lacks --%s:\n%s", f, got)
		}
	}
	for _, f := range []string{"sync-timeout", "output", "help", "by-owner"} {
		if slices.Contains(flags, f) {
			t.Errorf("options lists the command flag --%s:\n%s", f, got)
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %q", errOut)
	}
}

// flagLine is a flag's line in help: "  -A, --all-namespaces ..." or
// "      --all-contexts ...".
var flagLine = regexp.MustCompile(`^ +(?:-\w, )?--([\w-]+)`)

// helpFlags are the names of the flags the Flags section of help lists.
func helpFlags(help string) []string {
	_, section, _ := strings.Cut(help, "\nFlags:\n")
	if strings.HasPrefix(help, "Flags:\n") {
		section = strings.TrimPrefix(help, "Flags:\n")
	}
	section, _, _ = strings.Cut(section, "\n\n")
	var names []string
	for _, l := range strings.Split(section, "\n") {
		if m := flagLine.FindStringSubmatch(l); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}
