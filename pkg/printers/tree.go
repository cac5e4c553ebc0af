package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
)

// Kinds of the tree documents.
const (
	// TreeKind is the document of `kubectl idx tree`: Root and its descendants
	// under children.
	TreeKind = "Tree"
	// OwnerTreeKind is the document of `kubectl idx owners`: Root and its
	// owners, and theirs, under owners.
	OwnerTreeKind = "OwnerTree"
)

// TreeDocument is what -o json|yaml|jsonpath|go-template print for tree and
// owners. Its shape is documented in README.md; keep them in step.
type TreeDocument struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Root       *TreeItem `json:"root"`
	// Warnings say what the answer may be missing, such as types the user may
	// not list. Empty means the answer is complete.
	Warnings []string `json:"warnings"`
}

// TreeItem is one object of a tree document.
type TreeItem struct {
	APIVersion        string       `json:"apiVersion"`
	Kind              string       `json:"kind"`
	Namespace         string       `json:"namespace,omitempty"`
	Name              string       `json:"name"`
	UID               string       `json:"uid,omitempty"`
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
	// Ready and Status are as ObjectStatus gives them; empty when unknown.
	Ready  string `json:"ready,omitempty"`
	Status string `json:"status,omitempty"`
	// Controller is true for an owner that is its dependent's controller.
	Controller bool `json:"controller,omitempty"`
	// Missing marks an owner that does not exist; Unknown one whose kind could
	// not be read; Cycle an object already shown above on the same branch.
	Missing bool `json:"missing,omitempty"`
	Unknown bool `json:"unknown,omitempty"`
	Cycle   bool `json:"cycle,omitempty"`
	// Children are the objects this one owns (tree); Owners the objects that
	// own it (owners).
	Children []*TreeItem `json:"children,omitempty"`
	Owners   []*TreeItem `json:"owners,omitempty"`
}

// next returns the item's branches in the document's direction.
func (t *TreeItem) next() []*TreeItem {
	if len(t.Owners) > 0 {
		return t.Owners
	}
	return t.Children
}

// label is how a tree line names the object: Kind/name, with the group for
// kinds outside the core and apps groups so same-named kinds stay apart.
func (t *TreeItem) label() string {
	gv, _ := schema.ParseGroupVersion(t.APIVersion)
	kind := t.Kind
	if gv.Group != "" && gv.Group != "apps" && gv.Group != "batch" {
		kind += "." + gv.Group
	}
	return kind + "/" + t.Name
}

// PrintTree writes a tree document: an indented table for human output, one
// name per line for -o name (each object once), the document otherwise.
func PrintTree(w io.Writer, doc *TreeDocument, delegate printers.ResourcePrinter, opts Options) error {
	switch {
	case IsHuman(opts.Format):
		return printTreeTable(w, doc, opts)
	case opts.Format == "name":
		seen := map[string]bool{}
		var err error
		walkTree(doc.Root, "", true, true, func(t *TreeItem, _ string) {
			if err != nil || t.Missing || t.Unknown || seen[t.UID+t.label()] {
				return
			}
			seen[t.UID+t.label()] = true
			gv, _ := schema.ParseGroupVersion(t.APIVersion)
			kind := strings.ToLower(t.Kind)
			if gv.Group != "" {
				kind += "." + gv.Group
			}
			_, err = fmt.Fprintf(w, "%s/%s\n", kind, t.Name)
		})
		return err
	}
	if doc.Warnings == nil {
		// Scripts iterate .warnings[]: an array, never null, as in a GroupList.
		// The caller's document is left as it is.
		d := *doc
		d.Warnings = []string{}
		doc = &d
	}
	data, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return fmt.Errorf("encoding the %s document: %w", doc.Kind, err)
	}
	if opts.Format == "json" {
		_, err = w.Write(append(data, '\n'))
		return err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		return fmt.Errorf("decoding the %s document: %w", doc.Kind, err)
	}
	return delegate.PrintObj(u, w)
}

// walkTree visits t and its branches depth first, passing the tree-drawing
// prefix of each line.
func walkTree(t *TreeItem, indent string, root, last bool, visit func(t *TreeItem, prefix string)) {
	if t == nil {
		return
	}
	prefix := ""
	if !root {
		if last {
			prefix = indent + "└─"
		} else {
			prefix = indent + "├─"
		}
	}
	visit(t, prefix)
	childIndent := indent
	if !root {
		if last {
			childIndent += "  "
		} else {
			childIndent += "│ "
		}
	}
	next := t.next()
	for i, c := range next {
		walkTree(c, childIndent, false, i == len(next)-1, visit)
	}
}

var treeColumns = []metav1.TableColumnDefinition{
	{Name: "Namespace", Type: "string"},
	{Name: "Name", Type: "string"},
	{Name: "Ready", Type: "string"},
	{Name: "Status", Type: "string"},
	{Name: "Age", Type: "string"},
	{Name: "UID", Type: "string", Priority: 1},
}

func printTreeTable(w io.Writer, doc *TreeDocument, opts Options) error {
	table := &metav1.Table{ColumnDefinitions: treeColumns}
	walkTree(doc.Root, "", true, true, func(t *TreeItem, prefix string) {
		age := ""
		if t.CreationTimestamp != nil {
			age = ageSince(*t.CreationTimestamp, opts.Now)
		}
		status := t.Status
		switch {
		case t.Missing:
			status = "<missing>"
		case t.Unknown:
			status = "<unknown>"
		case t.Cycle:
			status = "<cycle>"
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{t.Namespace, prefix + t.label(), t.Ready, status, age, t.UID}})
	})
	var buf bytes.Buffer
	p := printers.NewTablePrinter(printers.PrintOptions{NoHeaders: opts.NoHeaders, Wide: opts.Format == "wide"})
	if err := p.PrintObj(table, &buf); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// TreeItemFor describes an object of a tree; full, when not nil, is the whole
// object to read readiness and status from.
func TreeItemFor(gvk schema.GroupVersionKind, obj metav1.Object, full runtime.Object, now time.Time) *TreeItem {
	t := &TreeItem{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
		UID:        string(obj.GetUID()),
	}
	if ts := obj.GetCreationTimestamp(); !ts.IsZero() {
		t.CreationTimestamp = &ts
	}
	if full != nil {
		t.Ready, t.Status = ObjectStatus(full, now)
	}
	return t
}
