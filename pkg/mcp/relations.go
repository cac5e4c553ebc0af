package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// RelationsArgs are the relations tool's arguments.
type RelationsArgs struct {
	Relation      string   `json:"relation" jsonschema:"tree, owners, uses, selects, selectedBy or orphans"`
	Object        string   `json:"object,omitempty" jsonschema:"the object, KIND/NAME as kubectl names it (deployment/web, pod/web-7d9c-x2x, configmap/app); not for orphans"`
	Namespace     string   `json:"namespace,omitempty" jsonschema:"the object's namespace; default: the context's"`
	AllNamespaces bool     `json:"allNamespaces,omitempty" jsonschema:"tree and orphans: look in every namespace"`
	Where         []string `json:"where,omitempty" jsonschema:"CEL expressions the related objects must match, as kubectl idx --where"`
	Limit         int      `json:"limit,omitempty" jsonschema:"most objects in this answer (default 100, at most 5000)"`
	Cursor        string   `json:"cursor,omitempty" jsonschema:"nextCursor of the previous answer to the same arguments"`
	Common
}

// question is what names the question of the arguments: all but the
// cursor, the limit and the staleness bound, which page the answer or bound
// its wait.
func (in RelationsArgs) question() RelationsArgs {
	in.Cursor, in.Limit, in.MaxStalenessSeconds = "", 0, 0
	return in
}

// relations are the relation tool's relations.
var relations = []string{"tree", "owners", "uses", "selects", "selectedBy", "orphans"}

// related is one context's answer: the subject and the related objects.
type related struct {
	subject *v1alpha1.ObjectView
	items   []v1alpha1.RelatedObject
	asOf    []v1alpha1.AsOf
}

func (s *Server) relations(ctx context.Context, in RelationsArgs) (*v1alpha1.RelationsAnswer, error) {
	valid := false
	for _, r := range relations {
		valid = valid || r == in.Relation
	}
	if !valid {
		return nil, badArgument("relation must be one of %s, got %q", strings.Join(relations, ", "), in.Relation)
	}
	var typ, name string
	if in.Relation == "orphans" {
		if in.Object != "" {
			return nil, badArgument("orphans takes no object: it looks at the whole namespace")
		}
	} else {
		var err error
		if typ, name, err = objectArg(in.Object); err != nil {
			return nil, err
		}
	}
	if err := guardWhere(in.Where, true); err != nil {
		return nil, err
	}
	c, p, err := s.open("relations", in.Limit, in.Cursor, in.question(), scope{Context: in.Context, Namespace: in.Namespace, AllNamespaces: in.AllNamespaces, MaxStaleness: seconds(in.MaxStalenessSeconds), Where: in.Where})
	if err != nil {
		return nil, err
	}
	defer c.done()
	v := &viewer{maxString: s.cfg.MaxString, status: s.cfg.Query.ObjectStatus, now: c.start}
	answers := ask(ctx, c, func(ctx context.Context, sess *query.Session) (*related, error) {
		context := sess.Config().Context
		if in.Relation == "orphans" {
			doc, err := sess.Orphans(ctx)
			if err != nil {
				return nil, err
			}
			r := &related{asOf: doc.AsOf}
			for _, it := range doc.Items {
				ro := v1alpha1.RelatedObject{ObjectView: itemView(context, it), Path: []string{it.Kind + "/" + it.Name}}
				ro.MissingOwners, ro.OrphaningOwners = ownerNames(it.MissingOwners), ownerNames(it.OrphaningOwners)
				r.items = append(r.items, ro)
			}
			return r, nil
		}
		obj, err := sess.Object(typ, name)
		if err != nil {
			return nil, err
		}
		if err := c.authorize(ctx, sess, obj); err != nil {
			return nil, err
		}
		subject := obj.Resource.GVK.Kind + "/" + obj.Name
		switch in.Relation {
		case "tree", "owners":
			ask := sess.Tree
			if in.Relation == "owners" {
				ask = sess.Owners
			}
			doc, err := ask(ctx, obj)
			if err != nil {
				return nil, err
			}
			r := &related{asOf: doc.AsOf}
			root := treeView(context, doc.Root)
			r.subject = &root.ObjectView
			var walk func(it *v1alpha1.TreeItem, path []string)
			walk = func(it *v1alpha1.TreeItem, path []string) {
				next := it.Children
				if in.Relation == "owners" {
					next = it.Owners
				}
				for _, n := range next {
					ro := treeView(context, n)
					ro.Path = append(append([]string{}, path...), n.Kind+"/"+n.Name)
					r.items = append(r.items, ro)
					walk(n, ro.Path)
				}
			}
			walk(doc.Root, []string{subject})
			return r, nil
		case "uses":
			doc, err := sess.Uses(ctx, obj)
			if err != nil {
				return nil, err
			}
			r := &related{asOf: doc.AsOf}
			if doc.Subject != nil {
				sv := itemView(context, *doc.Subject)
				r.subject = &sv
			}
			for _, it := range doc.Items {
				ro := v1alpha1.RelatedObject{ObjectView: itemView(context, it), Via: it.Via, Optional: it.Optional, Exists: it.Exists}
				if doc.Direction == "users" {
					ro.Path = []string{it.Kind + "/" + it.Name, subject}
				} else {
					ro.Path = []string{subject, it.Kind + "/" + it.Name}
				}
				r.items = append(r.items, ro)
			}
			return r, nil
		default:
			l, err := sess.Selection(ctx, obj, in.Relation == "selectedBy", false)
			if err != nil {
				return nil, err
			}
			defer l.Close()
			r := &related{asOf: l.AsOf}
			if l.Subject != nil {
				sv := itemView(context, *l.Subject)
				r.subject = &sv
			}
			for _, ko := range objectsOf(l.Members) {
				ov := v.view(context, ko.members.GVK, ko.obj, "")
				path := []string{subject, ov.Kind + "/" + ov.Name}
				if in.Relation == "selectedBy" {
					path = []string{ov.Kind + "/" + ov.Name, subject}
				}
				r.items = append(r.items, v1alpha1.RelatedObject{ObjectView: ov, Path: path})
			}
			return r, nil
		}
	})
	warnings, err := outcome(c, answers)
	if err != nil {
		return nil, err
	}
	answer := v1alpha1.NewRelationsAnswer(in.Relation)
	var items []v1alpha1.RelatedObject
	for _, a := range answers {
		if a.Value == nil {
			continue
		}
		if answer.Subject == nil {
			answer.Subject = a.Value.subject
		}
		items = append(items, a.Value.items...)
	}
	answer.AsOf = asOf(answers, func(r *related) []v1alpha1.AsOf { return r.asOf })
	answer.Warnings = append(answer.Warnings, warnings...)
	for i := range items {
		items[i].Ready, items[i].Status = v.cut(items[i].Ready), v.cut(items[i].Status)
	}
	start, end, next := p.byPosition(len(items))
	return fitPage(s.cfg.MaxBytes, answer, start, len(items), items[start:end],
		func(out *v1alpha1.RelationsAnswer, items []v1alpha1.RelatedObject) { out.Items = items }, next), nil
}

// treeView is one TreeItem as a related object.
func treeView(context string, it *v1alpha1.TreeItem) v1alpha1.RelatedObject {
	return v1alpha1.RelatedObject{
		ObjectView: v1alpha1.ObjectView{Context: context, APIVersion: it.APIVersion, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Ready: it.Ready, Status: it.Status},
		Controller: it.Controller, Missing: it.Missing, Unknown: it.Unknown, Cycle: it.Cycle,
	}
}

// itemView is one RelationItem as an object view.
func itemView(context string, it v1alpha1.RelationItem) v1alpha1.ObjectView {
	return v1alpha1.ObjectView{Context: context, APIVersion: it.APIVersion, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name}
}

// ownerNames names owners as Kind/name.
func ownerNames(refs []v1alpha1.OwnerReference) []string {
	var out []string
	for _, r := range refs {
		out = append(out, fmt.Sprintf("%s/%s", r.Kind, r.Name))
	}
	return out
}
