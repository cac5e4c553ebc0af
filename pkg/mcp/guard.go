package mcp

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
)

// guardWhere refuses --where expressions that read what an answer never
// carries: a filter is a yes/no oracle, and an agent that may not read a
// Secret's data could still find it one question at a time. Refused: a
// Secret's data (when Secrets may be read) and stringData, environment
// variables (env), the last-applied-configuration annotation, and
// annotations read by a key the expression computes or iterates. The
// expressions are parsed, not typed: the rule is about the fields named.
func guardWhere(exprs []string, secrets bool) error {
	if len(exprs) == 0 {
		return nil
	}
	env, err := cel.NewEnv()
	if err != nil {
		return err
	}
	for _, expr := range exprs {
		parsed, iss := env.Parse(expr)
		if iss.Err() != nil {
			// where.Parse words syntax errors.
			continue
		}
		if why := forbiddenRead(parsed.NativeRep().Expr(), secrets); why != "" {
			return &toolError{kind: "InvalidWhere", err: fmt.Errorf("where %q reads %s, which answers never carry: a filter on it would tell it one question at a time", expr, why)}
		}
	}
	return nil
}

// forbiddenRead returns what e reads that it may not, "" for nothing.
func forbiddenRead(e ast.Expr, secrets bool) string {
	why := ""
	named := func(name string) string {
		switch {
		case name == "stringData", name == "data" && secrets:
			return "a Secret's " + name
		case name == "env":
			return "environment variables"
		case name == LastAppliedAnnotation:
			return "the " + LastAppliedAnnotation + " annotation"
		}
		return ""
	}
	ast.PreOrderVisit(e, ast.NewExprVisitor(func(x ast.Expr) {
		if why != "" {
			return
		}
		switch x.Kind() {
		case ast.SelectKind:
			why = named(x.AsSelect().FieldName())
		case ast.LiteralKind:
			if s, ok := x.AsLiteral().(types.String); ok && string(s) == LastAppliedAnnotation {
				why = named(string(s))
			}
		case ast.CallKind:
			call := x.AsCall()
			if call.FunctionName() != operators.Index && call.FunctionName() != operators.OptIndex || len(call.Args()) != 2 {
				return
			}
			target, key := call.Args()[0], call.Args()[1]
			if key.Kind() == ast.LiteralKind {
				if s, ok := key.AsLiteral().(types.String); ok {
					why = named(string(s))
				}
				return
			}
			if isAnnotations(target) {
				why = "annotations by a computed key"
			}
		case ast.ComprehensionKind:
			if isAnnotations(x.AsComprehension().IterRange()) {
				why = "every annotation"
			}
		}
	}))
	return why
}

// isAnnotations reports whether e selects a field named annotations.
func isAnnotations(e ast.Expr) bool {
	return e.Kind() == ast.SelectKind && e.AsSelect().FieldName() == "annotations"
}
