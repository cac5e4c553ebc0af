package where

import (
	"fmt"
	"strconv"
	"sync"
)

// maxDistinct bounds the distinct errors kept per expression. An error that
// quotes object data (a missing key computed from the object's name) differs
// on every object; past the bound such errors are counted together.
const maxDistinct = 5

// Warning is one distinct run-time error of one expression, and the number of
// objects the expression was false for because of it.
type Warning struct {
	// Expression is the --where value.
	Expression string
	// Message is CEL's error, or "other errors" for the errors past the
	// first few distinct ones.
	Message string
	// Objects is the number of objects it happened on.
	Objects int
}

// String formats the warning as a command prints it after "warning: ":
//
//	--where "object.spec.foo > 1": no such key: foo (on 37 objects)
func (w Warning) String() string {
	unit := "objects"
	if w.Objects == 1 {
		unit = "object"
	}
	return fmt.Sprintf("--where %s: %s (on %d %s)", strconv.Quote(w.Expression), w.Message, w.Objects, unit)
}

// errorCounts counts run-time errors by expression and message. Errors are
// rare next to evaluations, so one mutex serves every Filter.
type errorCounts struct {
	exprs []string
	mu    sync.Mutex
	by    []map[string]*Warning
	order []*Warning
	other []*Warning
}

func newErrorCounts(exprs []string) *errorCounts {
	return &errorCounts{exprs: exprs, by: make([]map[string]*Warning, len(exprs)), other: make([]*Warning, len(exprs))}
}

func (e *errorCounts) add(expr int, msg string) {
	msg = oneLine(msg)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.by[expr] == nil {
		e.by[expr] = map[string]*Warning{}
	}
	w, ok := e.by[expr][msg]
	if !ok {
		if len(e.by[expr]) < maxDistinct {
			w = &Warning{Expression: e.exprs[expr], Message: msg}
			e.by[expr][msg] = w
			e.order = append(e.order, w)
		} else {
			if e.other[expr] == nil {
				e.other[expr] = &Warning{Expression: e.exprs[expr], Message: "other errors"}
			}
			w = e.other[expr]
		}
	}
	w.Objects++
}

// warnings lists the errors by expression, each expression's in the order
// they first happened, the other errors last.
func (e *errorCounts) warnings() []Warning {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Warning
	for i, expr := range e.exprs {
		for _, w := range e.order {
			if w.Expression == expr && e.by[i][w.Message] == w {
				out = append(out, *w)
			}
		}
		if e.other[i] != nil {
			out = append(out, *e.other[i])
		}
	}
	return out
}
