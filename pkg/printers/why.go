package printers

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// PrintDiagnosis writes a diagnosis: one line per cause, worst first, for
// human output (a line saying so when there is none, and one per subject
// whose verdict is Unknown); the culprits as kind/name for -o name; a row
// per cause for custom columns; the document otherwise.
func PrintDiagnosis(w io.Writer, doc *v1alpha1.Diagnosis, delegate printers.ResourcePrinter, opts Options) error {
	return documentForms{
		table: func() (*metav1.Table, error) { return diagnosisTable(doc, opts), nil },
		names: func() []string {
			return objectNames(doc.Causes, func(c *v1alpha1.Cause) (string, string, string) {
				return c.Object.APIVersion, c.Object.Kind, c.Object.Name
			})
		},
		rows: func() error {
			return printItems(w, doc.APIVersion, doc.Kind, doc.Causes, func(c *v1alpha1.Cause, _ int) string { return "cause " + c.Reason }, delegate)
		},
	}.print(w, doc, delegate, opts)
}

// diagnosisTable is a diagnosis's lines: REASON, OBJECT (the culprit),
// MESSAGE and the first EVIDENCE; wide adds SEVERITY, the SUBJECT a cause
// was found under and every piece of evidence. -A adds NAMESPACE first.
func diagnosisTable(doc *v1alpha1.Diagnosis, opts Options) *metav1.Table {
	table := &metav1.Table{}
	col := func(name string, priority int32) {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: name, Type: "string", Priority: priority})
	}
	if opts.WithNamespace {
		col("Namespace", 0)
	}
	col("Reason", 0)
	col("Object", 0)
	col("Message", 0)
	col("Evidence", 0)
	col("Severity", 1)
	col("Subject", 1)
	wide := opts.Format == "wide"
	row := func(ns, reason, object, message, evidence, severity, subject string) {
		cells := []any{reason, object, message, evidence, severity, subject}
		if opts.WithNamespace {
			cells = append([]any{ns}, cells...)
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells})
	}
	for _, c := range doc.Causes {
		subject := "<none>"
		if c.Subject != nil {
			subject = c.Subject.String()
		} else if doc.Subject != nil {
			subject = doc.Subject.String()
		}
		object := c.Object.String()
		if c.Object.Missing {
			object += " (missing)"
		}
		// A cluster-scoped culprit (a Node, a ValidatingAdmissionPolicy) is in
		// the namespace of what it keeps from running.
		ns := c.Object.Namespace
		if ns == "" && c.Subject != nil {
			ns = c.Subject.Namespace
		}
		row(ns, c.Reason, object, c.Message, evidenceWords(c.Evidence, wide), string(c.Severity), subject)
	}
	// What has no cause says its verdict: each Unknown subject, with what
	// was looked at; all healthy in one line.
	checked := checkedWords(doc)
	unknown := 0
	for _, s := range doc.Subjects {
		if s.Status != v1alpha1.DiagnosisUnknown || hasCauseUnder(doc, s.Object) {
			continue
		}
		unknown++
		row(s.Object.Namespace, string(v1alpha1.DiagnosisUnknown), s.Object.String(),
			fmt.Sprintf("%s, and no evidence read names a cause", orNone(s.Summary, "not as its spec asks")), "looked at "+checked, "", s.Object.String())
	}
	if len(doc.Causes) == 0 && unknown == 0 {
		object, summary := "<none>", fmt.Sprintf("%s, nothing found wrong", plural(len(doc.Subjects), "subject", "subjects"))
		switch {
		case doc.Subject != nil:
			object = doc.Subject.String()
			if len(doc.Subjects) > 0 {
				summary = doc.Subjects[0].Summary + ": nothing found wrong"
			}
		case doc.Namespace != "":
			object = "Namespace/" + doc.Namespace
			summary = fmt.Sprintf("%s, each top-level owner and Service: nothing found wrong", plural(len(doc.Subjects), "subject", "subjects"))
		}
		row(doc.Namespace, string(v1alpha1.DiagnosisHealthy), object, summary, "looked at "+checked, "", object)
	}
	return table
}

// hasCauseUnder reports whether a cause of doc was found under subject.
func hasCauseUnder(doc *v1alpha1.Diagnosis, subject v1alpha1.ObjectReference) bool {
	for _, c := range doc.Causes {
		if c.Subject != nil && c.Subject.UID == subject.UID && subject.UID != "" {
			return true
		}
	}
	return false
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// evidenceWords words a cause's evidence for a line: the first piece, or
// with all every piece, "; " apart.
func evidenceWords(evs []v1alpha1.Evidence, all bool) string {
	var parts []string
	for _, e := range evs {
		parts = append(parts, e.String())
		if !all {
			break
		}
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, "; ")
}

// checkedWords says what a diagnosis looked at: "1 Deployment, 2
// ReplicaSets, 3 Pods", then the types it could not see.
func checkedWords(doc *v1alpha1.Diagnosis) string {
	var parts []string
	for _, c := range doc.Checked {
		kind := c.Kind
		if c.Count != 1 {
			kind = pluralKind(kind)
		}
		parts = append(parts, fmt.Sprintf("%d %s", c.Count, kind))
	}
	out := strings.Join(parts, ", ")
	if out == "" {
		out = "nothing"
	}
	if len(doc.Unseen) > 0 {
		out += "; could not see " + strings.Join(doc.Unseen, ", ")
	}
	return out
}

// pluralKind is a kind's plural in a sentence.
func pluralKind(kind string) string {
	switch {
	case strings.HasSuffix(kind, "ss"), strings.HasSuffix(kind, "s"):
		return kind + "es"
	case strings.HasSuffix(kind, "y"):
		return strings.TrimSuffix(kind, "y") + "ies"
	}
	return kind + "s"
}
