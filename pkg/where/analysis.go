package where

import (
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
)

// Uses says what expressions read. A command decides from it which informers
// to start and in which mode.
type Uses struct {
	// Object is set when an expression names object at all.
	Object bool
	// ObjectBeyondMetadata is set when some use of object may read more than
	// its apiVersion, kind and metadata: object.spec, object alone, object
	// passed to a function or a macro, object indexed by a computed key. When
	// it is false a metadata-only informer holds everything the expressions
	// read.
	ObjectBeyondMetadata bool
	// Owner is set when an expression names owner. An owner is only ever
	// read as metadata.
	Owner bool
	// Node is set when an expression names node, NodeBeyondMetadata when
	// some use of it may read more than its apiVersion, kind and metadata,
	// as ObjectBeyondMetadata for object: node.metadata.labels needs a
	// metadata-only nodes informer, node.status a full one.
	Node               bool
	NodeBeyondMetadata bool
	// Now is set when an expression names now.
	Now bool
}

// MetadataOnly reports whether the expressions read nothing of the object
// beyond what a metadata-only informer keeps (apiVersion, kind, metadata).
func (u Uses) MetadataOnly() bool {
	return !u.ObjectBeyondMetadata
}

// NodeMetadataOnly is MetadataOnly for the node.
func (u Uses) NodeMetadataOnly() bool {
	return !u.NodeBeyondMetadata
}

func (u Uses) or(v Uses) Uses {
	return Uses{
		Object:               u.Object || v.Object,
		ObjectBeyondMetadata: u.ObjectBeyondMetadata || v.ObjectBeyondMetadata,
		Owner:                u.Owner || v.Owner,
		Node:                 u.Node || v.Node,
		NodeBeyondMetadata:   u.NodeBeyondMetadata || v.NodeBeyondMetadata,
		Now:                  u.Now || v.Now,
	}
}

// metadataFields are the fields of object a metadata-only informer serves:
// apiVersion and kind come from the type being listed, metadata from the
// server's PartialObjectMetadata.
var metadataFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// fields are the top-level fields expressions select of a variable: object
// typed by a schema trimmed to them needs only their schemas decoded and typed
// (a phase predicate reads Pod's status, not its spec). all is set when some
// use may read any field: the variable on its own, a computed key.
type fields struct {
	all   bool
	names map[string]bool
}

func (f *fields) add(name string) {
	if f.names == nil {
		f.names = map[string]bool{}
	}
	f.names[name] = true
}

func (f fields) or(g fields) fields {
	out := fields{all: f.all || g.all}
	for _, s := range []fields{f, g} {
		for n := range s.names {
			out.add(n)
		}
	}
	return out
}

// reads are the fields expressions select of object and of node.
type reads struct {
	object, node fields
}

func (r reads) or(s reads) reads {
	return reads{object: r.object.or(s.object), node: r.node.or(s.node)}
}

// analyze reports which variables a parsed expression names, and whether
// every use of object, and of node, selects one of metadataFields first, and
// which of their fields it selects. It walks the parsed, unchecked tree, so
// that it needs no schema: macros are already expanded into comprehensions
// there, and a comprehension variable that shadows a variable's name is
// tracked by scope.
func analyze(e ast.Expr) (Uses, reads) {
	a := analyzer{}
	a.visit(e)
	return a.uses, a.reads
}

type analyzer struct {
	uses  Uses
	reads reads
	// shadowed counts, per name, the enclosing comprehensions that bind it.
	shadowed map[string]int
}

// field records that variable v is read through its field name; known is
// false when which field cannot be told (v alone, a computed key).
func (a *analyzer) field(v, name string, known bool) {
	var f *fields
	switch v {
	case ObjectVar:
		f = &a.reads.object
	case NodeVar:
		f = &a.reads.node
	default:
		return
	}
	if !known {
		f.all = true
		return
	}
	f.add(name)
}

// variable returns the variable an expression is, if it is an identifier
// naming one and no comprehension binds that name around it.
func (a *analyzer) variable(e ast.Expr) string {
	if e.Kind() != ast.IdentKind {
		return ""
	}
	name := e.AsIdent()
	if a.shadowed[name] > 0 {
		return ""
	}
	switch name {
	case ObjectVar, OwnerVar, NodeVar, NowVar:
		return name
	}
	return ""
}

func (a *analyzer) mark(name string, beyondMetadata bool) {
	switch name {
	case ObjectVar:
		a.uses.Object = true
		a.uses.ObjectBeyondMetadata = a.uses.ObjectBeyondMetadata || beyondMetadata
	case OwnerVar:
		a.uses.Owner = true
	case NodeVar:
		a.uses.Node = true
		a.uses.NodeBeyondMetadata = a.uses.NodeBeyondMetadata || beyondMetadata
	case NowVar:
		a.uses.Now = true
	}
}

// selectsMetadata reports whether v.field reads only what a metadata-only
// informer has of v. Metadata-only is only a question for object and node.
func selectsMetadata(v, field string) bool {
	return (v != ObjectVar && v != NodeVar) || metadataFields[field]
}

// constantKey returns the string constant an index or optional selection
// uses as its key, if it is one.
func constantKey(e ast.Expr) (string, bool) {
	if e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

func (a *analyzer) visit(e ast.Expr) {
	switch e.Kind() {
	case ast.IdentKind:
		// A variable on its own, not the operand of a selection handled
		// below: all of it may be read.
		if v := a.variable(e); v != "" {
			a.mark(v, true)
			a.field(v, "", false)
		}
	case ast.SelectKind:
		sel := e.AsSelect()
		if v := a.variable(sel.Operand()); v != "" {
			a.mark(v, !selectsMetadata(v, sel.FieldName()))
			a.field(v, sel.FieldName(), true)
			return
		}
		a.visit(sel.Operand())
	case ast.CallKind:
		call := e.AsCall()
		args := call.Args()
		switch call.FunctionName() {
		case operators.Index, operators.OptIndex, operators.OptSelect:
			// object['metadata'], object[?'metadata'] and object.?metadata
			// read what object.metadata reads; a computed key may read
			// anything.
			if len(args) == 2 {
				if v := a.variable(args[0]); v != "" {
					key, ok := constantKey(args[1])
					a.mark(v, !(ok && selectsMetadata(v, key)))
					a.field(v, key, ok)
					a.visit(args[1])
					return
				}
			}
		}
		if call.IsMemberFunction() {
			a.visit(call.Target())
		}
		for _, arg := range args {
			a.visit(arg)
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		a.visit(c.IterRange())
		a.visit(c.AccuInit())
		bound := []string{c.IterVar(), c.AccuVar()}
		if c.HasIterVar2() {
			bound = append(bound, c.IterVar2())
		}
		if a.shadowed == nil {
			a.shadowed = map[string]int{}
		}
		for _, name := range bound {
			a.shadowed[name]++
		}
		a.visit(c.LoopCondition())
		a.visit(c.LoopStep())
		a.visit(c.Result())
		for _, name := range bound {
			a.shadowed[name]--
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			a.visit(el)
		}
	case ast.MapKind:
		for _, entry := range e.AsMap().Entries() {
			me := entry.AsMapEntry()
			a.visit(me.Key())
			a.visit(me.Value())
		}
	case ast.StructKind:
		for _, field := range e.AsStruct().Fields() {
			a.visit(field.AsStructField().Value())
		}
	}
}
