package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
)

// TestBadFlagValues runs every command that takes flags through Execute, as
// main does, with bad flag values, against a server that fails the test when
// contacted (or, for checks that need the resource type, answers discovery
// only): a bad value is a usage error, found before any list or watch. Each
// must exit 1 with exactly one line on stderr (the one case of two is an
// aggregate of two configuration errors, one line each), nothing on stdout and
// no stack trace.
func TestBadFlagValues(t *testing.T) {
	const (
		getFormats   = "custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,wide,yaml"
		watchFormats = "go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"
		labelKey     = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
		relaxed      = "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'"
		duration     = "must be a duration such as 30s, 5m or 1h"
		// discovery marks the cases checked once the types are resolved.
		discovery = true
	)
	// missing is a path that does not exist; {missing} in a case stands for it.
	missing := filepath.Join(t.TempDir(), "missing")
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		// want is stderr without its final newline.
		want      string
		discovery bool
	}{
		// The root command, kubectl idx TYPE: output.
		{name: "-o unknown", args: []string{"pods", "-o", "bogus"}, want: `error: unable to match a printer suitable for the output format "bogus", allowed formats are: ` + getFormats},
		{name: "-o jsonpath without template", args: []string{"pods", "-o", "jsonpath"}, want: "error: template format specified but no template given"},
		{name: "-o jsonpath unclosed", args: []string{"pods", "-o", "jsonpath={.bad"}, want: "error: error parsing jsonpath {.bad, unclosed action"},
		{name: "-o go-template unclosed", args: []string{"pods", "-o", "go-template", "--template", "{{"}, want: "error: error parsing template {{, template: output:1: unclosed action"},
		{name: "--template alone unclosed", args: []string{"pods", "--template", "{{"}, want: "error: error parsing template {{, template: output:1: unclosed action"},
		{name: "-o custom-columns without path", args: []string{"pods", "-o", "custom-columns=A"}, want: "error: unexpected custom-columns spec: A, expected <header>:<json-path-expr>"},
		{name: "-o custom-columns-file missing", args: []string{"pods", "-o", "custom-columns-file={missing}"}, want: "error: error reading template {missing}, open {missing}: no such file or directory"},
		{name: "-o jsonpath-file missing", args: []string{"pods", "-o", "jsonpath-file={missing}"}, want: "error: error reading --template {missing}, open {missing}: no such file or directory"},
		{name: "--sort-by unclosed", args: []string{"pods", "--sort-by", "{.bad"}, want: `error: invalid JSONPath in --sort-by: invalid JSONPath expression "{.bad": ` + relaxed},
		{name: "--sort-by unterminated array", args: []string{"pods", "--sort-by", ".spec.containers["}, want: `error: invalid JSONPath in --sort-by: invalid JSONPath expression ".spec.containers[": unterminated array`},
		{name: "--sort-by with a grouping", args: []string{"pods", "--sort-by", "bad", "--by-owner"}, want: "error: --sort-by cannot be used with grouping: groups and their members are sorted by key and name"},
		{name: "--no-headers not a bool", args: []string{"pods", "--no-headers=maybe"}, want: `error: invalid argument "maybe" for "--no-headers" flag: must be true or false`},
		{name: "--show-managed-fields not a bool", args: []string{"pods", "--show-managed-fields=x"}, want: `error: invalid argument "x" for "--show-managed-fields" flag: must be true or false`},

		// Selectors and the cache.
		{name: "-l three words", args: []string{"pods", "-l", "a b c"}, want: `error: invalid label selector "a b c": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`},
		{name: "-l unclosed set", args: []string{"pods", "-l", "app in (web"}, want: `error: invalid label selector "app in (web": unable to parse requirement: found '', expected: ',' or ')'`},
		{name: "-l without value", args: []string{"pods", "-l"}, want: `error: flag needs an argument: 'l' in -l`},
		{name: "--field-selector without operator", args: []string{"pods", "--field-selector", "a"}, want: `error: invalid field selector "a": invalid selector: 'a'; can't understand 'a'`},
		{name: "--field-selector with a line break", args: []string{"pods", "--field-selector", "a\nb"}, want: `error: invalid field selector "a\nb": invalid selector: 'a\nb'; can't understand 'a\nb'`},
		{name: "--field-selector bad escape", args: []string{"pods", "--field-selector", `a=\x`}, want: `error: invalid field selector "a=\\x": invalid field selector: invalid escape sequence: \x`},
		{name: "--sync-timeout negative", args: []string{"pods", "--sync-timeout=-1s"}, want: "error: --sync-timeout must not be negative, got -1s"},
		{name: "--sync-timeout not a duration", args: []string{"pods", "--sync-timeout", "soon"}, want: `error: invalid argument "soon" for "--sync-timeout" flag: ` + duration},
		{name: "--sync-timeout without unit", args: []string{"pods", "--sync-timeout", "1"}, want: `error: invalid argument "1" for "--sync-timeout" flag: ` + duration},

		// Grouping.
		{name: "--by unclosed", args: []string{"pods", "--by", "{.bad"}, want: `error: invalid JSONPath in --by: invalid JSONPath expression "{.bad": ` + relaxed},
		{name: "--by empty", args: []string{"pods", "--by="}, want: "error: invalid JSONPath in --by: empty JSONPath expression"},
		{name: "--by two paths", args: []string{"pods", "--by", "{.a}{.b}"}, want: `error: invalid JSONPath in --by: invalid JSONPath expression "{.a}{.b}": ` + relaxed},
		{name: "--by without value", args: []string{"pods", "--by"}, want: "error: flag needs an argument: --by"},
		{name: "--by-label empty", args: []string{"pods", "--by-label", ""}, want: "error: --by-label needs a label key, e.g. --by-label app"},
		{name: "--by-label not a key", args: []string{"pods", "--by-label", "a b"}, want: `error: invalid label key "a b" in --by-label: ` + labelKey},
		{name: "--by-owner and --by-node", args: []string{"pods", "--by-owner", "--by-node"}, want: "error: --by-owner and --by-node cannot be used together: choose one grouping"},
		{name: "--include-completed alone", args: []string{"pods", "--include-completed"}, want: "error: --include-completed only applies to --by-node"},
		{name: "--by-node on services", args: []string{"svc", "--by-node"}, want: "error: --by-node groups objects by the node they run on; services have no node (use it with pods)", discovery: discovery},

		// Connection flags, klog's -v and cobra's own checks.
		{name: "--request-timeout garbage", args: []string{"pods", "--request-timeout", "garbage"}, want: "error: Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"},
		{name: "--context unknown", args: []string{"pods", "--context", "nope"}, want: `error: context "nope" does not exist`},
		{name: "--cluster unknown", args: []string{"pods", "--cluster", "nope"}, want: `error: no server found for cluster "nope"`},
		{name: "--user unknown", args: []string{"pods", "--user", "nope"}, want: `error: auth info "nope" does not exist`},
		{name: "--kubeconfig missing", args: []string{"pods", "--kubeconfig", "{missing}"}, want: "error: stat {missing}: no such file or directory\n" + errtext.DemoHint},
		{name: "--server not a URL", args: []string{"pods", "-s", "http://[::1"}, want: `error: host must be a URL or a host:port pair: "http://[::1"`},
		{name: "--as-group without --as", args: []string{"pods", "--as-group", "g"}, want: "error: requesting uid, groups or user-extra for test without impersonating a user"},
		{name: "--insecure-skip-tls-verify with a CA", args: []string{"pods", "-s", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--certificate-authority", ca}, want: "error: specifying a root certificates file with the insecure flag is not allowed"},
		{
			name: "--client-certificate missing", args: []string{"pods", "--client-certificate", "{missing}"},
			want: "error: client-key-data or client-key must be specified for test to use the clientCert authentication method.\n" +
				"error: unable to read client-cert {missing} for test due to open {missing}: no such file or directory",
		},
		{name: "-v not a number", args: []string{"pods", "-v", "x"}, want: `error: invalid argument "x" for "-v, --v" flag: must be an integer`},
		{name: "-v out of range", args: []string{"pods", "-v", "99999999999"}, want: `error: invalid argument "99999999999" for "-v, --v" flag: out of range`},
		{name: "-A not a bool", args: []string{"pods", "-A=x"}, want: `error: invalid argument "x" for "-A, --all-namespaces" flag: must be true or false`},
		{name: "unknown flag", args: []string{"pods", "--bogus"}, want: "error: unknown flag: --bogus"},
		{name: "unknown shorthand", args: []string{"pods", "-Z"}, want: "error: unknown shorthand flag: 'Z' in -Z"},
		{name: "no type", args: nil, want: `error: you must specify the type of resource to get; use "kubectl api-resources" for a complete list of supported resources`},

		// kubectl idx watch.
		{name: "watch: no type", args: []string{"watch"}, want: `error: you must specify the type of resource to watch; use "kubectl api-resources" for a complete list of supported resources`},
		{name: "watch: -o unknown", args: []string{"watch", "pods", "-o", "bogus"}, want: `error: unable to match a printer suitable for the output format "bogus", allowed formats are: ` + watchFormats},
		{name: "watch: -o custom-columns", args: []string{"watch", "pods", "-o", "custom-columns=A"}, want: `error: unable to match a printer suitable for the output format "custom-columns=A", allowed formats are: ` + watchFormats},
		{name: "watch: --sort-by is get's", args: []string{"watch", "pods", "--sort-by", ".x"}, want: "error: unknown flag: --sort-by"},
		{name: "watch: --by-owner is get's", args: []string{"watch", "pods", "--by-owner"}, want: "error: unknown flag: --by-owner"},
		{name: "watch: --owner without name", args: []string{"watch", "pods", "--owner", "x"}, want: `error: --owner must be TYPE/NAME, e.g. deployment/web, got "x"`},
		{name: "watch: --owner without type", args: []string{"watch", "pods", "--owner", "/web"}, want: `error: --owner must be TYPE/NAME, e.g. deployment/web, got "/web"`},
		{name: "watch: --owner of an unknown type", args: []string{"watch", "pods", "--owner", "podz/web"}, want: `error: the server doesn't have a resource type "podz"`, discovery: discovery},
		{name: "watch: --diff with -o name", args: []string{"watch", "pods", "--diff", "-o", "name"}, want: "error: --diff cannot be used with -o name: names carry no fields; use -o json or the default table"},
		{name: "watch: --diff not a bool", args: []string{"watch", "pods", "--diff=3"}, want: `error: invalid argument "3" for "--diff" flag: must be true or false`},
		{name: "watch: --watch-only not a bool", args: []string{"watch", "pods", "--watch-only=x"}, want: `error: invalid argument "x" for "--watch-only" flag: must be true or false`},
		{name: "watch: -l three words", args: []string{"watch", "pods", "-l", "a b c"}, want: `error: invalid label selector "a b c": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`},
		{name: "watch: --field-selector without operator", args: []string{"watch", "pods", "--field-selector", "a"}, want: `error: invalid field selector "a": invalid selector: 'a'; can't understand 'a'`},
		{name: "watch: --sync-timeout negative", args: []string{"watch", "pods", "--sync-timeout=-1s"}, want: "error: --sync-timeout must not be negative, got -1s"},
		{name: "watch: --sync-timeout not a duration", args: []string{"watch", "pods", "--sync-timeout", "soon"}, want: `error: invalid argument "soon" for "--sync-timeout" flag: ` + duration},
		{name: "watch: -v not a number", args: []string{"watch", "pods", "-v", "x"}, want: `error: invalid argument "x" for "-v, --v" flag: must be an integer`},
		{name: "watch: --request-timeout garbage", args: []string{"watch", "pods", "--request-timeout", "garbage"}, want: "error: Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"},

		// The relation commands share their flags.
		{name: "tree: -o unknown", args: []string{"tree", "deploy/web", "-o", "bogus"}, want: `error: unable to match a printer suitable for the output format "bogus", allowed formats are: ` + graphFormats},
		{name: "tree: --sort-by", args: []string{"tree", "deploy/web", "--sort-by", ".metadata.name"}, want: `error: --sort-by is not supported by kubectl idx tree`},
		{name: "events: --sort-by", args: []string{"events", "deploy/web", "--sort-by", ".metadata.name"}, want: `error: --sort-by is not supported by kubectl idx events`},
		{name: "owners: --sync-timeout negative", args: []string{"owners", "pod/web", "--sync-timeout=-1s"}, want: "error: --sync-timeout must not be negative, got -1s"},
		{name: "orphans: --sync-timeout not a duration", args: []string{"orphans", "--sync-timeout", "soon"}, want: `error: invalid argument "soon" for "--sync-timeout" flag: ` + duration},
		{name: "uses: -o jsonpath unclosed", args: []string{"uses", "secret/db", "-o", "jsonpath={.bad"}, want: "error: error parsing jsonpath {.bad, unclosed action"},
		{name: "selects: unknown flag", args: []string{"selects", "svc/web", "--bogus"}, want: "error: unknown flag: --bogus"},
		{name: "selected-by: --no-headers not a bool", args: []string{"selected-by", "pod/web", "--no-headers=x"}, want: `error: invalid argument "x" for "--no-headers" flag: must be true or false`},
		{name: "events: --types unknown", args: []string{"events", "pod/web", "--types", "Bogus"}, want: "error: valid --types are Normal or Warning", discovery: discovery},

		// kubectl idx version and completion.
		{name: "version: -o yaml", args: []string{"version", "-o", "yaml"}, want: `error: --output must be 'json' or empty, got "yaml"`},
		{name: "version: --client not a bool", args: []string{"version", "--client=x"}, want: `error: invalid argument "x" for "--client" flag: must be true or false`},
		{name: "version: an argument", args: []string{"version", "extra"}, want: `error: unknown command "extra" for "kubectl idx version"`},
		{name: "completion: no shell", args: []string{"completion"}, want: "error: shell not specified; one of: bash, zsh, fish, powershell"},
		{name: "completion: unknown shell", args: []string{"completion", "tcsh"}, want: `error: unsupported shell type "tcsh"; one of: bash, zsh, fish, powershell`},
		{name: "completion: unknown flag", args: []string{"completion", "bash", "--bogus"}, want: "error: unknown flag: --bogus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := unreachableKubeconfig(t)
			if tc.discovery {
				kubeconfig = discoveryServer(t)
			}
			// The connection flags go first: a flag missing its value must be
			// the last argument, and a case's own --kubeconfig must win.
			args := []string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "{missing}", missing))
			}
			want := strings.ReplaceAll(tc.want, "{missing}", missing) + "\n"
			if errOut := executeFails(t, args, want); strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
				t.Errorf("stderr has a stack trace:\n%s", errOut)
			}
		})
	}
}
