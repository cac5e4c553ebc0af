package printers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cliprinters "k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// groupings are the groupings of contexts a and b, each doc's own.
func groupings(a, b *v1alpha1.GroupList) []query.Answer[*query.Listing] {
	return []query.Answer[*query.Listing]{{Context: "a", Value: &query.Listing{Groups: a}}, {Context: "b", Value: &query.Listing{Groups: b}}}
}

// TestWriteGroupListJSONIsThePrintersJSON: -o json of a grouping, written a
// group at a time, is byte for byte what cli-runtime's JSON printer prints
// of the document, of one context or of several merged.
func TestWriteGroupListJSONIsThePrintersJSON(t *testing.T) {
	merged := query.MergeGroupLists(groupings(labelDoc(), nodeDoc()))
	merged.Warnings = []string{`context "b": forbidden`}
	// Many groups, some empty: their members are encoded as one stream
	// on every core, chunks spanning groups.
	many := v1alpha1.NewGroupList("owner")
	for i := range 300 {
		var pods []runtime.Object
		for j := range i % 4 {
			pods = append(pods, outPod(fmt.Sprintf("web-%d-%d", i, j), "worker-1"))
		}
		many.Groups = append(many.Groups, podGroup(fmt.Sprintf("ReplicaSet/web-%d", i), v1alpha1.GroupKey{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: fmt.Sprintf("web-%d", i)}, pods...))
	}
	for name, doc := range map[string]*v1alpha1.GroupList{
		"label": labelDoc(), "node": nodeDoc(), "owner": ownerDoc(), "empty": v1alpha1.NewGroupList("namespace"), "merged": merged, "many": many,
	} {
		var streamed, printed bytes.Buffer
		if err := printers.WriteGroupListJSON(&streamed, doc, nil); err != nil {
			t.Fatal(err)
		}
		if err := (&cliprinters.JSONPrinter{}).PrintObj(doc, &printed); err != nil {
			t.Fatal(err)
		}
		if streamed.String() != printed.String() {
			t.Errorf("%s: WriteGroupListJSON and the JSON printer differ: %s", name, lineDiff(streamed.String(), printed.String()))
		}
	}
}

// TestPrintListingGroups: a grouping over several contexts, merged by the
// engine, is printed with the report's warnings; one context's prints its
// own.
func TestPrintListingGroups(t *testing.T) {
	header := printers.GroupHeader("label")
	one := []query.Answer[*query.Listing]{{Value: &query.Listing{Groups: ownerDoc()}}}
	var out bytes.Buffer
	n, err := printers.PrintListing(&out, one, outPrinter(t, "json", ""), printers.Options{Format: "json", Warnings: []string{"ignored"}}, header)
	if err != nil || n != len(ownerDoc().Groups) {
		t.Fatalf("PrintListing() = %d, %v", n, err)
	}
	var doc struct {
		Warnings []string `json:"warnings"`
		Groups   []struct {
			Contexts []any `json:"contexts"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Warnings, ownerDoc().Warnings) {
		t.Errorf("one context's warnings %q, want its document's %q", doc.Warnings, ownerDoc().Warnings)
	}

	two := append(groupings(labelDoc(), labelDoc()), query.Answer[*query.Listing]{Context: "down", Err: errors.New("refused")})
	warnings := []string{`context "down": refused`}
	out.Reset()
	if _, err := printers.PrintListing(&out, two, outPrinter(t, "json", ""), printers.Options{Format: "json", Warnings: warnings, Groups: query.MergeGroupLists(two)}, header); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Warnings, warnings) || len(doc.Groups) != len(labelDoc().Groups) || len(doc.Groups[0].Contexts) != 2 {
		t.Errorf("two contexts: warnings %q, %d groups, first of %d contexts; want %q and the label groups of a and b", doc.Warnings, len(doc.Groups), len(doc.Groups[0].Contexts), warnings)
	}

	out.Reset()
	if _, err := printers.PrintListing(&out, two, outPrinter(t, "name", ""), printers.Options{Format: "name", Groups: query.MergeGroupLists(two)}, header); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "app=web a/pod/web-0\napp=web a/pod/web-1\napp=web a/service/web\napp=web b/pod/web-0\n") {
		t.Errorf("-o name:\n%s", out.String())
	}
}

// TestPrintListingOneContext: the answer of a plain run prints as Print
// prints its members, a lone named object by itself.
func TestPrintListingOneContext(t *testing.T) {
	pod := outPod("web-0", "worker-1")
	one := []query.Answer[*query.Listing]{{Value: &query.Listing{SingleItem: true, Members: []v1alpha1.Members{{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{pod}}}}}}
	var got, want bytes.Buffer
	if _, err := printers.PrintListing(&got, one, outPrinter(t, "json", ""), printers.Options{Format: "json"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := printers.Print(&want, one[0].Value.Members, nil, outPrinter(t, "json", ""), printers.Options{Format: "json", SingleItem: true}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || !strings.Contains(got.String(), `"kind": "Pod"`) || strings.Contains(got.String(), `"kind": "List"`) {
		t.Errorf("PrintListing:\n%s\nwant the pod alone:\n%s", got.String(), want.String())
	}
}

func TestWatchSources(t *testing.T) {
	pod, svc, ct := outPodGVK, outServiceGVK, outCronTabGVK
	sources, of := printers.WatchSources([][]schema.GroupVersionKind{{pod, svc}, {ct, pod}, nil})
	var kinds []string
	for _, s := range sources {
		kinds = append(kinds, s.GVK.Kind)
	}
	if !slices.Equal(kinds, []string{"Pod", "Service", "CronTab"}) || !reflect.DeepEqual(of, [][]int{{0, 1}, {2, 0}, nil}) {
		t.Errorf("sources %q, indexes %v", kinds, of)
	}
}
