package printers

import (
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Tables are the API server's tables of an answer's kinds (query.Listing's
// Tables), by the context they were read in ("" for the one context of a
// plain run) and kind. Human output prints their columns and cells.
type Tables map[string]map[schema.GroupKind]*metav1.Table

// join is the table of m's objects: each object's row of the server's table
// of its kind, read in its context, matched by UID (TableFromServer), or NAME
// and AGE where that table could not be read (TableFor). It is the one place
// a server's row meets its object.
func (t Tables) join(m v1alpha1.Members, now time.Time) (*metav1.Table, error) {
	if server := t[m.Context][m.GVK.GroupKind()]; server != nil {
		return TableFromServer(server, m.Objects)
	}
	return TableFor(m.GVK.GroupKind(), m.Objects, now)
}

// contextInfo is one context of an answer over several, as its List in -o
// json and -o yaml names it: what it may be missing and, when it failed, why.
type contextInfo struct {
	name     string
	warnings []string
	err      string
}

// PrintListing prints the listings of one context or several (query.Ask's
// answers): `kubectl idx TYPE`, grouped or not, and the objects of selects,
// selected-by and events. Answers without a listing (failed contexts) are
// passed over, but for their "error" in the List of -o json and -o yaml. One
// context of a plain run (Context "") prints as kubectl does; several print
// each object with its context (a CONTEXT column, a context/ prefix, a List
// per context). header words a group's header line of a grouped listing; nil
// for a flat one. It returns the number of objects printed, or of a
// grouping's groups (--by-node has a group for a node without pods); the
// caller closes the listings.
func PrintListing(w io.Writer, answers []query.Answer[*query.Listing], delegate printers.ResourcePrinter, opts Options, header func(*v1alpha1.Group) string) (int, error) {
	several := len(answers) > 0 && answers[0].Context != ""
	tables := Tables{}
	var members []v1alpha1.Members
	var doc *v1alpha1.GroupList
	for _, a := range answers {
		if several {
			text := opts.ErrorText
			if text == nil {
				text = func(err error) string { return err.Error() }
			}
			info := contextInfo{name: a.Context, warnings: a.Warnings}
			if a.Err != nil {
				info.err = text(a.Err)
			}
			opts.contexts = append(opts.contexts, info)
		}
		l := a.Value
		if l == nil {
			continue
		}
		tables[a.Context] = l.Tables
		if l.Owner != nil {
			if opts.owners == nil {
				opts.owners = map[string]func(runtime.Object) string{}
			}
			opts.owners[a.Context] = l.Owner
		}
		if l.Groups != nil {
			doc = l.Groups
		}
		for _, m := range l.Members {
			m.Context = a.Context
			members = append(members, m)
		}
		if !several {
			opts.SingleItem = opts.SingleItem || l.SingleItem
			opts.AsOf = l.AsOf
		}
	}
	if header != nil {
		if several {
			if doc = opts.Groups; doc != nil {
				doc.Warnings = opts.Warnings
			}
		}
		if doc == nil {
			return 0, nil
		}
		// A lone named object still prints in its group.
		opts.SingleItem = false
		return len(doc.Groups), PrintGrouped(w, doc, tables, delegate, GroupedOptions{Options: opts, Header: header})
	}
	if several {
		opts.SingleItem = false
	} else {
		opts.Owner = opts.owners[""]
	}
	return Print(w, members, tables, delegate, opts)
}
