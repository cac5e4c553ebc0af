package cmd

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// The relation commands' tests: their arguments and flags, and what they
// print of the engine's answers. What the answers hold is pkg/query's to test
// (TestSessionTree, TestSessionOwners, ...), on the same fixtures.

// relationCase is a relation command's Options wired to fakes.
type relationCase struct {
	server        *fakeapi.Server
	allNamespaces bool
	output        string
	sortBy        string
	stdout        *strings.Builder
	stderr        *strings.Builder
}

func newRelationCase(objs []runtime.Object, output string) *relationCase {
	return &relationCase{server: fakeapi.New(nil, objs...), output: output, stdout: &strings.Builder{}, stderr: &strings.Builder{}}
}

// options returns RelationOptions wired to the fakes, in namespace shop (the
// context's namespace under -A), with fixtures.RelationAPIResources as the
// server's types; Complete resolves the printer and the object.
func (c *relationCase) options(t *testing.T) *RelationOptions {
	t.Helper()
	ns := "shop"
	if c.allNamespaces {
		ns = ""
	}
	o := fakeRelationOptions(c.output, c.stdout, c.stderr, faketarget.New(t, "", c.server, ns, fixtures.RelationAPIResources()))
	*o.PrintFlags.HumanReadableFlags.SortBy = c.sortBy
	o.AllNamespaces = c.allNamespaces
	return o
}

// fakeRelationOptions are RelationOptions that ask targets (fakes) and print
// with -o output to stdout and stderr.
func fakeRelationOptions(output string, stdout, stderr io.Writer, targets ...query.Target) *RelationOptions {
	o := newRelationOptions(nil, genericiooptions.IOStreams{In: strings.NewReader(""), Out: stdout, ErrOut: stderr})
	*o.PrintFlags.OutputFormat = output
	o.SyncTimeout = 20 * time.Second
	o.resolved = targets
	return o
}

// command returns the Options of the relation command name over the fakes.
func (c *relationCase) command(t *testing.T, name string) command {
	t.Helper()
	ro := c.options(t)
	switch name {
	case "tree":
		return treeCommand.newOptions(ro)
	case "owners":
		return ownersCommand.newOptions(ro)
	case "orphans":
		return &OrphansOptions{RelationOptions: ro}
	case "events":
		return &EventsOptions{RelationOptions: ro}
	case "selects", "selected-by":
		ro.sortable, ro.graphs = true, true
		return &SelectsOptions{RelationOptions: ro, inverse: name == "selected-by"}
	case "uses":
		return usesCommand.newOptions(ro)
	}
	t.Fatalf("no relation command %q", name)
	return nil
}

func TestRelationObjectErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/web"},
		{[]string{"deployment"}, `you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/NAME; got "deployment"`},
		{[]string{"deployment/"}, `arguments in resource/name form must have a single resource and name, got "deployment/"`},
		{[]string{"deployment/a/b"}, `arguments in resource/name form must have a single resource and name, got "deployment/a/b"`},
		{[]string{"deployment/a", "pod/b"}, `you must specify one object to show the tree of as TYPE/NAME or TYPE NAME, got "deployment/a pod/b"`},
		{[]string{"deploy,po/x"}, `you must specify one object to show the tree of, not a list of types: "deploy,po"`},
		{[]string{"podz/x"}, `the server doesn't have a resource type "podz"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := newRelationCase(nil, "").options(t)
			o.verb, o.args = "show the tree of", tc.args
			err := o.Validate()
			if err == nil {
				_, err = query.NewSession(query.Config{Target: o.resolved[0]}).Object(o.typ, o.name)
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRelationValidate: flag values are refused by Validate, and objects of a
// kind a command cannot answer for by Run once the kind is known (run), both
// before any list.
func TestRelationValidate(t *testing.T) {
	tests := []struct {
		command string
		args    []string
		types   []string // events --types
		run     bool     // the error comes from Run, after Validate passed
		want    string
	}{
		{
			command: "selects", args: []string{"configmap/app-config"}, run: true,
			want: "selects needs an object with a pod selector (Service, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ReplicationController, PodDisruptionBudget, NetworkPolicy); configmap/app-config has none",
		},
		{
			command: "uses", args: []string{"svc/web"}, run: true,
			want: "uses needs a ConfigMap, Secret, PersistentVolumeClaim or ServiceAccount, or an object with a pod spec (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController, PodTemplate); service/web is neither",
		},
		{command: "events", args: []string{"deployment/web"}, types: []string{"Normal", "Bogus"}, want: "valid --types are Normal or Warning"},
		{command: "tree", args: []string{"deployment/web"}, want: ""},
		{command: "events", args: []string{"deployment/web"}, types: []string{"normal", "WARNING"}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.command+" "+strings.Join(tc.args, " ")+" "+strings.Join(tc.types, ","), func(t *testing.T) {
			c := newRelationCase(nil, "")
			o := c.command(t, tc.command)
			if e, ok := o.(*EventsOptions); ok {
				e.Types = tc.types
			}
			err := o.Complete(nil, tc.args)
			if err == nil {
				err = o.Validate()
			}
			if tc.run {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				err = o.Run(context.Background())
			}
			if got := errorText(err); got != tc.want {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
			if c.server.Requests() != nil || len(c.server.Metadata.Actions()) != 0 {
				t.Errorf("the server was asked: %v %v", c.server.Requests(), c.server.Metadata.Actions())
			}
		})
	}
}

// TestRelationRun runs each relation command as its RunE does (Complete,
// Validate, Run) against the fakes and compares what it prints, graphs
// included.
func TestRelationRun(t *testing.T) {
	selection := fixtures.SelectionObjects()
	tests := []struct {
		name      string
		command   string
		args      []string
		output    string
		sortBy    string
		types     []string
		allNS     bool
		objects   []runtime.Object // default fixtures.RelationObjects()
		forbidden []string         // resources whose metadata lists are forbidden

		wantOut    string // exact stdout, unless golden or check is set
		golden     string
		check      func(t *testing.T, stdout string)
		wantErrOut string
		wantErr    string // errtext.Format of the error
	}{
		{name: "tree", command: "tree", args: []string{"deployment/web"}, golden: "testdata/tree_deployment.golden"},
		{name: "tree, TYPE NAME", command: "tree", args: []string{"rollout", "checkout"}, output: "name", wantOut: "rollout.example.com/checkout\nreplicaset.apps/checkout-1\n"},
		{name: "tree, json", command: "tree", args: []string{"node/worker-1"}, output: "json", golden: "testdata/tree_node.json.golden"},
		{
			name: "tree, a type the user may not list", command: "tree", args: []string{"deploy/web"}, output: "name", forbidden: []string{"replicasets"},
			wantOut:    "deployment.apps/web\n",
			wantErrOut: "warning: cannot list replicasets.apps, the answer may be incomplete: Error from server (Forbidden): replicasets.apps is forbidden: User \"jane\" cannot list resource \"replicasets\" in API group \"apps\" in the namespace \"shop\"\n",
		},
		{name: "tree, not found", command: "tree", args: []string{"deployment/x"}, wantErr: `Error from server (NotFound): deployments.apps "x" not found`},
		{
			// The error says it all: no warnings of the answer there is not.
			name: "tree, the object's own type cannot be listed", command: "tree", args: []string{"deployment/web"}, forbidden: []string{"deployments"},
			wantErr: "error: cannot list deployments.apps, so deployment/web cannot be found",
		},
		{
			name: "tree, custom columns: a row per node", command: "tree", args: []string{"deployment/web"}, output: "custom-columns=KIND:.kind,NAME:.name,READY:.ready,STATUS:.status",
			wantOut: "KIND         NAME         READY   STATUS\nDeployment   web          2/2     Available\nReplicaSet   web-7d9c     2/2     <none>\nPod          web-7d9c-a   1/1     Running\nPod          web-7d9c-b   0/1     Pending\n",
		},
		{name: "owners", command: "owners", args: []string{"pod/web-7d9c-a"}, golden: "testdata/owners_pod.golden"},
		{
			name: "owners, custom columns: a row per node", command: "owners", args: []string{"pod/web-7d9c-a"}, output: "custom-columns=NAMESPACE:.namespace,KIND:.kind,NAME:.name,CONTROLLER:.controller",
			wantOut: "NAMESPACE   KIND         NAME         CONTROLLER\nshop        Pod          web-7d9c-a   <none>\nshop        ReplicaSet   web-7d9c     true\nshop        Deployment   web          true\n",
		},
		{name: "owners, missing owner", command: "owners", args: []string{"rs/legacy-1"}, golden: "testdata/owners_missing.golden"},
		{name: "orphans", command: "orphans", golden: "testdata/orphans.golden"},
		{name: "orphans, names", command: "orphans", output: "name", allNS: true, wantOut: "replicaset.apps/legacy-1\nreplicaset.apps/old-1\n"},
		{name: "events, names", command: "events", args: []string{"deployment/web"}, output: "name", wantOut: "event/e1\nevent/e2\nevent/e3\n"},
		{
			name: "events, warnings", command: "events", args: []string{"deployment/web"}, types: []string{"Warning"},
			check: func(t *testing.T, stdout string) {
				// LAST SEEN is relative to the clock.
				lines := strings.Split(strings.TrimSpace(stdout), "\n")
				if len(lines) != 2 || !strings.HasPrefix(lines[0], "LAST SEEN") ||
					!strings.Contains(lines[1], "Warning   FailedScheduling   Pod/web-7d9c-b   FailedScheduling happened") {
					t.Errorf("stdout:\n%s", stdout)
				}
			},
		},
		{
			name: "events, a type the user may not list", command: "events", args: []string{"deployment/web"}, output: "name", forbidden: []string{"replicasets"},
			wantOut:    "event/e1\n",
			wantErrOut: "warning: cannot list replicasets.apps, the answer may be incomplete: Error from server (Forbidden): replicasets.apps is forbidden: User \"jane\" cannot list resource \"replicasets\" in API group \"apps\" in the namespace \"shop\"\n",
		},
		{name: "selects", command: "selects", args: []string{"svc/web"}, objects: selection, golden: "testdata/selects_service.golden"},
		{
			name: "selects, sorted", command: "selects", args: []string{"svc/web"}, objects: selection, output: "name", sortBy: "{.status.phase}",
			// Pending before Running.
			wantOut: "pod/web-7d9c-b\npod/web-7d9c-a\n",
		},
		{
			name: "selects every pod", command: "selects", args: []string{"pdb/all"}, objects: selection, output: "name",
			wantOut:    "pod/probe-worker-1\npod/web-7d9c-a\npod/web-7d9c-b\n",
			wantErrOut: "warning: poddisruptionbudget/all selects every pod in namespace shop\n",
		},
		{
			name: "selects nothing", command: "selects", args: []string{"svc/external"}, objects: selection,
			wantErrOut: "warning: service/external has no selector, so it selects no pods\nNo resources found in shop namespace.\n",
		},
		{
			name: "selected-by", command: "selected-by", args: []string{"pod/web-7d9c-a"}, objects: selection, output: "name",
			wantOut: "service/web\ndeployment.apps/web\npoddisruptionbudget.policy/all\npoddisruptionbudget.policy/web\n",
		},
		{name: "uses, users", command: "uses", args: []string{"configmap/app-config"}, objects: selection, golden: "testdata/uses_configmap.golden"},
		{name: "uses, what a template uses", command: "uses", args: []string{"deployment/web"}, objects: selection, golden: "testdata/uses_deployment.golden"},
		{name: "uses, secret json", command: "uses", args: []string{"secret/db"}, objects: selection, output: "json", golden: "testdata/uses_secret.json.golden"},
		{name: "uses, not found", command: "uses", args: []string{"secret/nope"}, objects: selection, wantErr: `Error from server (NotFound): secrets "nope" not found`},
		// The graphs: -o dot and -o mermaid.
		{name: "tree dot", command: "tree", args: []string{"deployment/web"}, output: "dot", golden: "testdata/tree_deployment.dot.golden"},
		{name: "tree mermaid", command: "tree", args: []string{"deployment/web"}, output: "mermaid", golden: "testdata/tree_deployment.mermaid.golden"},
		{
			name: "tree, a type the user may not list", command: "tree", args: []string{"deploy/web"}, output: "dot", forbidden: []string{"replicasets"},
			golden:     "testdata/tree_deployment_forbidden.dot.golden",
			wantErrOut: "warning: cannot list replicasets.apps, the answer may be incomplete: Error from server (Forbidden): replicasets.apps is forbidden: User \"jane\" cannot list resource \"replicasets\" in API group \"apps\" in the namespace \"shop\"\n",
		},
		{name: "owners dot", command: "owners", args: []string{"pod/web-7d9c-a"}, output: "dot", golden: "testdata/owners_pod.dot.golden"},
		{name: "owners, missing owner, mermaid", command: "owners", args: []string{"rs/legacy-1"}, output: "mermaid", golden: "testdata/owners_missing.mermaid.golden"},
		{name: "selects dot", command: "selects", args: []string{"svc/web"}, objects: selection, output: "dot", golden: "testdata/selects_service.dot.golden"},
		{
			name: "selects nothing, mermaid", command: "selects", args: []string{"svc/external"}, objects: selection, output: "mermaid",
			golden:     "testdata/selects_nothing.mermaid.golden",
			wantErrOut: "warning: service/external has no selector, so it selects no pods\n",
		},
		{name: "selected-by mermaid", command: "selected-by", args: []string{"pod/web-7d9c-a"}, objects: selection, output: "mermaid", golden: "testdata/selected_by_pod.mermaid.golden"},
		{name: "uses, users, dot", command: "uses", args: []string{"configmap/app-config"}, objects: selection, output: "dot", golden: "testdata/uses_configmap.dot.golden"},
		{name: "uses, what a template uses, mermaid", command: "uses", args: []string{"deployment/web"}, objects: selection, output: "mermaid", golden: "testdata/uses_deployment.mermaid.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objects := tc.objects
			if objects == nil {
				objects = fixtures.RelationObjects()
			}
			c := newRelationCase(objects, tc.output)
			c.sortBy, c.allNamespaces = tc.sortBy, tc.allNS
			fixtures.ForbidMetadataList(c.server, tc.forbidden...)
			o := c.command(t, tc.command)
			if e, ok := o.(*EventsOptions); ok {
				e.Types = tc.types
			}
			prepare(t, o, tc.args)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := o.Run(ctx)
			assertRun(t, err, c.stdout.String(), c.stderr.String(), tc.golden, tc.check, tc.wantOut, tc.wantErrOut, tc.wantErr)
			if strings.Contains(c.stdout.String()+c.stderr.String(), fixtures.SecretValue) {
				t.Errorf("secret data in the output:\n%s", c.stdout)
			}
		})
	}
}

// TestListsEvents: `kubectl idx events` without an object lists Event objects
// (the root command's type), with one it is the events subcommand.
func TestListsEvents(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"events"}, true},
		{[]string{"events", "-n", "shop", "-o", "json"}, true},
		{[]string{"-n", "shop", "events", "-A"}, true},
		{[]string{"events", "-l", "app=web", "--sort-by", ".lastTimestamp"}, true},
		{[]string{"events", "deployment/web", "-n", "shop"}, false},
		{[]string{"events", "-n", "shop", "deployment", "web"}, false},
		{[]string{"events", "--types", "Warning"}, false},
		{[]string{"events", "--help"}, false},
		{[]string{"events,pods", "-A"}, false},
		{[]string{"pods", "-A"}, false},
		{[]string{"tree", "deployment/web"}, false},
		{[]string{"__complete", "events", ""}, false},
	}
	for _, tc := range tests {
		if got := listsEvents(tc.args); got != tc.want {
			t.Errorf("listsEvents(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
