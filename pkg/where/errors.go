package where

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
)

// Error is a --where expression that does not compile. Its message is one
// line naming the flag and the expression; when the problem has a place in
// the expression, two more lines show the expression's line and a caret under
// the place:
//
//	--where "object.spec..replicas": syntax error at column 13: no viable alternative at input '..'
//	  object.spec..replicas
//	              ^
type Error struct {
	// Expression is the --where value, as given.
	Expression string
	// Message says what is wrong, without the flag or the expression.
	Message string
	// Line and Column are 1-based and count characters; zero when the problem
	// has no place in the expression.
	Line, Column int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "--where %s: %s", strconv.Quote(e.Expression), e.Message)
	if e.Column > 0 {
		lines := strings.Split(e.Expression, "\n")
		if e.Line >= 1 && e.Line <= len(lines) {
			line := strings.ReplaceAll(lines[e.Line-1], "\t", " ")
			fmt.Fprintf(&b, "\n  %s\n  %s^", line, strings.Repeat(" ", min(e.Column-1, utf8.RuneCountInString(line))))
		}
	}
	return b.String()
}

// oneLine escapes line breaks and tabs in a message: CEL quotes the input
// it could not read, which may hold them, and an error or a warning is one
// line.
var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace

// place formats where a problem is: "column 13", or "line 2, column 5" in an
// expression of several lines.
func place(expr string, line, column int) string {
	if strings.Contains(expr, "\n") {
		return fmt.Sprintf("line %d, column %d", line, column)
	}
	return fmt.Sprintf("column %d", column)
}

// issueError turns the first of CEL's issues into an Error. Only the first is
// reported: a syntax error usually brings others along that only repeat it,
// and one line per problem is what the flag's user can act on.
func issueError(expr string, what string, iss *cel.Issues, parsed *ast.AST) *Error {
	errs := iss.Errors()
	if len(errs) == 0 {
		return &Error{Expression: expr, Message: what + ": " + oneLine(iss.String())}
	}
	first := errs[0]
	msg := oneLine(strings.TrimPrefix(first.Message, "Syntax error: "))
	if what == "" {
		what, msg = describeCheckError(msg, first.ExprID, parsed)
	}
	line, column := first.Location.Line(), first.Location.Column()+1
	if what == "unknown field" {
		// CEL places a selection at its dot: point at the field's name.
		column += fieldOffset(expr, line, column)
	}
	if line <= 0 {
		// No place: say what is wrong without one.
		return &Error{Expression: expr, Message: what + ": " + msg}
	}
	m := fmt.Sprintf("%s at %s", what, place(expr, line, column))
	if msg != "" {
		m += ": " + msg
	}
	return &Error{Expression: expr, Message: m, Line: line, Column: column}
}

// describeCheckError names the kind of a type checker error and rewords the
// messages a --where user meets most: an unknown variable, function or field.
func describeCheckError(msg string, id int64, parsed *ast.AST) (string, string) {
	const undeclared = "undeclared reference to '"
	if rest, ok := strings.CutPrefix(msg, undeclared); ok {
		name, _, _ := strings.Cut(rest, "'")
		if parsed != nil && isCall(parsed.Expr(), id) {
			return "unknown function", strconv.Quote(name)
		}
		return "unknown variable", fmt.Sprintf("%q (the variables are %s)", name, strings.Join(variables, ", "))
	}
	const undefinedField = "undefined field '"
	if rest, ok := strings.CutPrefix(msg, undefinedField); ok {
		name, _, _ := strings.Cut(rest, "'")
		return "unknown field", strconv.Quote(name)
	}
	return "type error", msg
}

// fieldOffset is how far past the place CEL gives a selection (its "." or
// the "?" of ".?") the selected field's name starts.
func fieldOffset(expr string, line, column int) int {
	lines := strings.Split(expr, "\n")
	if line < 1 || line > len(lines) {
		return 0
	}
	runes := []rune(lines[line-1])
	n := 0
	for i := column - 1 + n; i >= 0 && i < len(runes) && (runes[i] == '.' || runes[i] == '?'); i++ {
		n++
	}
	return n
}

// isCall reports whether the expression with the given id is a function
// call, for telling an unknown function from an unknown variable.
func isCall(e ast.Expr, id int64) bool {
	found := false
	ast.PreOrderVisit(e, ast.NewExprVisitor(func(e ast.Expr) {
		if e.ID() == id && e.Kind() == ast.CallKind {
			found = true
		}
	}))
	return found
}
