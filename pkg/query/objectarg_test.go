package query_test

import (
	"testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

func TestParseObjectArg(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		typ, name, err string
	}{
		{args: []string{"deploy/web"}, typ: "deploy", name: "web"},
		{args: []string{"deploy", "web"}, typ: "deploy", name: "web"},
		{args: nil, err: "you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/web"},
		{args: []string{"deploy"}, err: `you must specify the object to show the tree of as TYPE/NAME, e.g. deploy/NAME; got "deploy"`},
		{args: []string{"deploy/web/x"}, err: `arguments in resource/name form must have a single resource and name, got "deploy/web/x"`},
		{args: []string{"a", "b", "c"}, err: `you must specify one object to show the tree of as TYPE/NAME or TYPE NAME, got "a b c"`},
		{args: []string{"deploy,svc/web"}, err: `you must specify one object to show the tree of, not a list of types: "deploy,svc"`},
	} {
		typ, name, err := query.ParseObjectArg("show the tree of", tc.args)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%q: error %v, want %s", tc.args, err, tc.err)
		case tc.err == "" && (err != nil || typ != tc.typ || name != tc.name):
			t.Errorf("%q = %q, %q, %v; want %q, %q", tc.args, typ, name, err, tc.typ, tc.name)
		}
	}
}
