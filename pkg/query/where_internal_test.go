package query

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// TestReadMode: the informer mode follows from what the expressions read,
// not from the flag's presence.
func TestReadMode(t *testing.T) {
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	all := []informer.Mode{informer.MetadataOnly, informer.Summary, informer.Full, informer.Rows, informer.FullRows}
	tests := []struct {
		name  string
		where []string
		gk    schema.GroupKind
		// want maps each of all to its mode; nil leaves every mode as it is.
		want map[informer.Mode]informer.Mode
	}{
		{name: "no --where", gk: podKind},
		{name: "labels", where: []string{`object.metadata.labels["app"] == "web"`}, gk: podKind},
		{name: "name, kind and age", where: []string{`object.kind == "Pod"`, `now - timestamp(object.metadata.creationTimestamp) > duration("1h")`}, gk: podKind},
		{name: "owner reads metadata only", where: []string{`owner != null && owner.kind == "StatefulSet"`}, gk: podKind},
		{name: "a node's labels read the pod's node name", where: []string{`node.metadata.labels["zone"] == "a"`}, gk: podKind, want: raised},
		{name: "status", where: []string{`object.status.phase == "Running"`}, gk: podKind, want: raised},
		{name: "the whole object", where: []string{`object.metadata.name == "a"`, `size(object) > 3`}, gk: deploy, want: raised},
		{name: "a computed key", where: []string{`object[object.metadata.name] == 1`}, gk: deploy, want: raised},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conds, err := where.Parse(tc.where, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			s := NewSession(Config{Where: conds})
			for _, m := range all {
				want := m
				if to, ok := tc.want[m]; ok {
					want = to
				}
				if got := s.readMode(tc.gk, m); got != want {
					t.Errorf("%s read in %s, want %s", m, got, want)
				}
			}
		})
	}
}

// raised is every mode read so that the expressions see whole objects.
var raised = map[informer.Mode]informer.Mode{
	informer.MetadataOnly: informer.Full,
	informer.Summary:      informer.Full,
	informer.Rows:         informer.FullRows,
}
