package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// whyObjects are fixtures.WhyObjects on node n1.
func whyObjects(crashing, unknown bool) []runtime.Object {
	return fixtures.WhyObjects("n1", crashing, unknown)
}

// whyCase runs why over fakes: one context (names nil) or one per name,
// each holding objs.
func whyCase(t *testing.T, objs []runtime.Object, names []string, output string, forbidden []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	o := whyOptions(t, objs, names, output, forbidden, &out, &errOut, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = o.Run(ctx)
	return out.String(), errOut.String(), err
}

// whyOptions are why's options over fakes, as whyCase runs them, printing
// to out and errOut.
func whyOptions(t *testing.T, objs []runtime.Object, names []string, output string, forbidden []string, out, errOut *bytes.Buffer, args ...string) *WhyOptions {
	t.Helper()
	if names == nil {
		names = []string{""}
	}
	var targets []query.Target
	for _, name := range names {
		s := fakeapi.New(nil, objs...)
		fixtures.ForbidMetadataList(s, forbidden...)
		targets = append(targets, faketarget.New(t, name, s, "shop", fixtures.RelationAPIResources()))
	}
	o := &WhyOptions{RelationOptions: fakeRelationOptions(output, out, errOut, targets...)}
	prepare(t, o, args)
	return o
}

// TestWhyRaisesTheHeapFloorOfItsOwnProcess: why, which keeps what it reads
// until it answers, raises its process's heap floor, once; a run without
// one (a cache server's) raises none.
func TestWhyRaisesTheHeapFloorOfItsOwnProcess(t *testing.T) {
	for _, args := range [][]string{{"deployment/web"}, nil} {
		raised := 0
		var out, errOut bytes.Buffer
		o := whyOptions(t, whyObjects(false, false), nil, "", nil, &out, &errOut, args...)
		o.run = &runContext{heapFloor: func() { raised++ }}
		if err := o.Run(context.Background()); err != nil {
			t.Fatalf("why %v: %v", args, err)
		}
		if raised != 1 {
			t.Errorf("why %v raised the heap floor %d times, want once", args, raised)
		}
		o = whyOptions(t, whyObjects(false, false), nil, "", nil, &out, &errOut, args...)
		o.run = &runContext{}
		if err := o.Run(context.Background()); err != nil {
			t.Fatalf("why %v in a run without a heap floor: %v", args, err)
		}
	}
}

// exitCode is the code the process exits with for err, as finish decides
// it, and what it prints.
func exitCode(err error) (int, string) {
	var b bytes.Buffer
	code := finish(context.Background(), err, &b, "")
	return code, b.String()
}

func TestWhyRun(t *testing.T) {
	tests := []struct {
		name      string
		objs      []runtime.Object
		contexts  []string
		output    string
		forbidden []string
		args      []string
		wantOut   string
		golden    string
		check     func(t *testing.T, stdout string)
		wantErr   string
		code      int
	}{
		{name: "causes, one line each", objs: whyObjects(true, false), args: []string{"deployment/web"}, golden: "testdata/why_deployment.golden", code: ExitUnhealthy},
		{name: "causes, wide", objs: whyObjects(true, false), args: []string{"deployment/web"}, output: "wide", golden: "testdata/why_deployment_wide.golden", code: ExitUnhealthy},
		{
			name: "healthy", objs: whyObjects(false, false), args: []string{"deploy", "web"},
			wantOut: "REASON    OBJECT           MESSAGE                                         EVIDENCE\n" +
				"Healthy   Deployment/web   2/2 available, 2 updated: nothing found wrong   looked at 1 Deployment, 1 Node, 2 Pods, 1 ReplicaSet, 1 Service, 1 ServiceAccount\n",
		},
		{name: "the culprits", objs: whyObjects(true, false), args: []string{"deployment/web"}, output: "name", wantOut: "pod/web-1-a\nservice/web\n", code: ExitUnhealthy},
		{name: "healthy, no culprit", objs: whyObjects(false, false), args: []string{"deployment/web"}, output: "name"},
		{
			name: "the document", objs: whyObjects(true, false), args: []string{"deployment/web"}, output: "json", code: ExitUnhealthy,
			check: func(t *testing.T, stdout string) {
				var doc v1alpha1.Diagnosis
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Kind != "Diagnosis" || doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Status != v1alpha1.DiagnosisUnhealthy || len(doc.Causes) != 2 ||
					doc.Causes[0].Reason != "CrashLoopBackOff" || doc.Causes[0].Object.Name != "web-1-a" || len(doc.Causes[0].Evidence) == 0 || doc.Subject.Name != "web" {
					t.Errorf("document:\n%s", stdout)
				}
			},
		},
		{
			name: "every top-level owner of the namespace", objs: whyObjects(true, true), golden: "testdata/why_namespace.golden", code: ExitUnhealthy,
		},
		{
			name: "something wrong that nothing names", objs: whyObjects(false, true), args: []string{"pod/lone"}, code: ExitUnknown,
			wantOut: "REASON    OBJECT     MESSAGE                                                  EVIDENCE\n" +
				"Unknown   Pod/lone   Pending, 0/1 ready, and no evidence read names a cause   looked at 1 Pod, 1 ServiceAccount\n",
		},
		{
			name: "two contexts", objs: whyObjects(true, false), contexts: []string{"east", "west"}, args: []string{"deployment/web"}, output: "name",
			wantOut: "east/pod/web-1-a\neast/service/web\nwest/pod/web-1-a\nwest/service/web\n", code: ExitUnhealthy,
		},
		{
			name: "two contexts, one table", objs: whyObjects(true, false), contexts: []string{"east", "west"}, args: []string{"deployment/web"},
			golden: "testdata/why_contexts.golden", code: ExitUnhealthy,
		},
		{
			name: "two contexts, a v1 List of diagnoses", objs: whyObjects(false, false), contexts: []string{"east", "west"}, args: []string{"deployment/web"}, output: "json",
			check: func(t *testing.T, stdout string) {
				var list struct {
					Kind  string               `json:"kind"`
					Items []v1alpha1.Diagnosis `json:"items"`
				}
				if err := json.Unmarshal([]byte(stdout), &list); err != nil {
					t.Fatal(err)
				}
				if list.Kind != "List" || len(list.Items) != 2 || list.Items[0].Context != "east" || list.Items[1].Context != "west" || list.Items[1].Status != v1alpha1.DiagnosisHealthy {
					t.Errorf("list:\n%s", stdout)
				}
			},
		},
		{
			name: "secrets may not be listed: a warning, the same answer", objs: whyObjects(true, false), args: []string{"deployment/web"}, output: "name",
			forbidden: []string{"secrets"}, wantOut: "pod/web-1-a\nservice/web\n", code: ExitUnhealthy,
		},
		{name: "not found", objs: whyObjects(false, false), args: []string{"deployment/nope"}, wantErr: `Error from server (NotFound): deployments.apps "nope" not found`, code: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := whyCase(t, tc.objs, tc.contexts, tc.output, tc.forbidden, tc.args...)
			code, printed := exitCode(err)
			var exit *exitError
			wantErr := tc.wantErr
			if errors.As(err, &exit) {
				wantErr = ""
			}
			if errs := errorString(err); wantErr != "" && errs != wantErr {
				t.Errorf("error %s, want %s", errs, wantErr)
			}
			if code != tc.code {
				t.Errorf("exit code %d (printed %q), want %d", code, printed, tc.code)
			}
			if exit != nil && printed != "" {
				t.Errorf("a verdict printed %q, want nothing more", printed)
			}
			wantErrOut := ""
			if len(tc.forbidden) > 0 {
				wantErrOut = "warning: cannot list secrets, the answer may be incomplete: Error from server (Forbidden): secrets is forbidden: User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"shop\"\n"
			}
			assertRun(t, nil, stdout, stderr, tc.golden, tc.check, tc.wantOut, wantErrOut, "")
		})
	}
}

// TestWhyOutcome: the verdicts of the contexts' answers, and their
// failures, give the exit code.
func TestWhyOutcome(t *testing.T) {
	doc := func(s v1alpha1.DiagnosisStatus) *v1alpha1.Diagnosis { return &v1alpha1.Diagnosis{Status: s} }
	partial := contextsOutcome(1, 3)
	tests := []struct {
		name    string
		answers []*v1alpha1.Diagnosis
		err     error
		code    int
	}{
		{"healthy", []*v1alpha1.Diagnosis{doc(v1alpha1.DiagnosisHealthy)}, nil, 0},
		{"unhealthy", []*v1alpha1.Diagnosis{doc(v1alpha1.DiagnosisUnhealthy)}, nil, ExitUnhealthy},
		{"unknown", []*v1alpha1.Diagnosis{doc(v1alpha1.DiagnosisUnknown)}, nil, ExitUnknown},
		{"unhealthy before unknown", []*v1alpha1.Diagnosis{doc(v1alpha1.DiagnosisUnknown), doc(v1alpha1.DiagnosisUnhealthy)}, nil, ExitUnhealthy},
		{"a context failed, the others healthy", []*v1alpha1.Diagnosis{doc(v1alpha1.DiagnosisHealthy), nil, doc(v1alpha1.DiagnosisHealthy)}, partial, ExitPartial},
		{"a context failed, another unhealthy", []*v1alpha1.Diagnosis{doc(v1alpha1.DiagnosisHealthy), nil, doc(v1alpha1.DiagnosisUnhealthy)}, partial, ExitUnhealthy},
		{"every context failed", []*v1alpha1.Diagnosis{nil, nil}, contextsOutcome(2, 2), ExitError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var answers []query.Answer[*v1alpha1.Diagnosis]
			for _, d := range tc.answers {
				answers = append(answers, query.Answer[*v1alpha1.Diagnosis]{Value: d})
			}
			if code, _ := exitCode(whyOutcome(answers, tc.err)); code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
		})
	}
}

func TestWhyFlags(t *testing.T) {
	runFlagCases(t, []flagCase{
		{name: "two objects", args: []string{"why", "deployment/a", "pod/b"}, wantErr: `you must specify one object to diagnose as TYPE/NAME or TYPE NAME, got "deployment/a pod/b"`},
		{name: "a list of types", args: []string{"why", "deploy,po/x"}, wantErr: `you must specify one object to diagnose, not a list of types: "deploy,po"`},
		{name: "a type alone", args: []string{"why", "deployment"}, wantErr: `you must specify the object to diagnose as TYPE/NAME, e.g. deployment/NAME; got "deployment"`},
		{name: "a graph", args: []string{"why", "deployment/web", "-o", "dot"}, wantErr: "-o dot draws relation graphs: use it with kubectl idx tree, owners, selects, selected-by or uses"},
		{name: "sorted", args: []string{"why", "deployment/web", "--sort-by", ".reason"}, wantErr: "--sort-by is not supported by kubectl idx why"},
		{name: "an unknown format", args: []string{"why", "-o", "wat"}, wantErr: `unable to match a printer suitable for the output format "wat", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,wide,yaml`},
	})
}
