package where

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Conditions are a command's --where expressions, parsed and checked for all
// that needs no schema. A nil *Conditions (no --where) matches everything:
// its Compile returns a nil *Filter, whose Match is always true.
//
// Conditions are safe for concurrent use once Parse returns.
type Conditions struct {
	exprs []string
	uses  []Uses
	all   Uses
	reads reads
	now   types.Timestamp
	errs  *errorCounts
}

// Parse checks expressions in the order given and returns the first error:
// a syntax error, an unknown variable or function, an empty expression, or one
// that cannot be a bool whatever the object's schema. It makes no request.
// now is the time the now variable holds in every evaluation: the time the
// command started. Parse returns nil Conditions for no expressions.
func Parse(exprs []string, now time.Time) (*Conditions, error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	env, err := dynamicEnv()
	if err != nil {
		return nil, err
	}
	exprs = slices.Clone(exprs)
	c := &Conditions{
		exprs: exprs,
		uses:  make([]Uses, len(exprs)),
		now:   types.Timestamp{Time: now},
		errs:  newErrorCounts(exprs),
	}
	for i, expr := range exprs {
		if strings.TrimSpace(expr) == "" {
			return nil, &Error{Expression: expr, Message: "empty expression"}
		}
		parsed, iss := env.Parse(expr)
		if iss.Err() != nil {
			return nil, issueError(expr, "syntax error", iss, nil)
		}
		var r reads
		c.uses[i], r = analyze(parsed.NativeRep().Expr())
		c.all, c.reads = c.all.or(c.uses[i]), c.reads.or(r)
		// Checking rewrites the parsed tree: parse again for it.
		if _, err := check(env, expr, nil); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// check parses and type-checks one expression and estimates its cost when
// estimator is not nil.
func check(env *cel.Env, expr string, estimator checker.CostEstimator) (*cel.Ast, error) {
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, issueError(expr, "syntax error", iss, nil)
	}
	checked, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, issueError(expr, "", iss, parsed.NativeRep())
	}
	if out := checked.OutputType(); !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, &Error{Expression: expr, Message: "must evaluate to bool but got " + out.String()}
	}
	if estimator != nil {
		est, err := env.EstimateCost(checked, estimator)
		if err != nil {
			return nil, &Error{Expression: expr, Message: "estimating cost: " + err.Error()}
		}
		if est.Max > CostLimit {
			return nil, &Error{Expression: expr, Message: fmt.Sprintf(
				"estimated cost exceeds the limit by a factor of %s: in the worst case it grows faster than the square of the object's size (nest fewer comprehensions over its lists)",
				factor(est.Max, CostLimit))}
		}
	}
	return checked, nil
}

// Fork returns Conditions of the same expressions, parsed once, whose Filters
// count their run-time errors apart from c's: a command over several clusters
// forks its Conditions per cluster, so that each cluster's answer warns of its
// own errors, with its own counts. A nil *Conditions forks to nil.
func (c *Conditions) Fork() *Conditions {
	if c == nil {
		return nil
	}
	f := *c
	f.errs = newErrorCounts(c.exprs)
	return &f
}

// Uses reports what the expressions read, all together. A nil *Conditions
// reads nothing.
func (c *Conditions) Uses() Uses {
	if c == nil {
		return Uses{}
	}
	return c.all
}

// Expressions returns the expressions as given.
func (c *Conditions) Expressions() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.exprs)
}

// Compile types the expressions for objects of kind gvk and returns the
// filter that evaluates them. schemas gives the kind's OpenAPI schema, and
// Node's and ObjectMeta's when node and owner are named; with nil schemas, or
// for a kind the server publishes no schema of, the variables are dyn and
// fields are found, or not, at run time. Compile makes the requests for the
// schemas it needs (at most once per kind for the life of schemas) and no
// other; its errors are Errors naming the expression, in the order given:
// an unknown field, a type error, a result that is not a bool, a cost over
// CostLimit, node named for a kind other than Pod.
//
// Filters compiled from the same Conditions, for several kinds or several
// clusters, count run-time errors together (Warnings).
func (c *Conditions) Compile(gvk schema.GroupVersionKind, schemas *Schemas) (*Filter, error) {
	if c == nil {
		return nil, nil
	}
	if c.all.Node && gvk.GroupKind() != podGK {
		for i, u := range c.uses {
			if u.Node {
				return nil, &Error{Expression: c.exprs[i], Message: fmt.Sprintf("node is set only for pods, not for %s", gvk.Kind)}
			}
		}
	}
	vt := schemas.types(gvk, c.all, c.reads)
	env, err := dynamicEnv()
	if vt != (varTypes{}) {
		env, err = newEnv(vt)
	}
	if err != nil {
		return nil, err
	}
	f := &Filter{
		conds:    c,
		programs: make([]cel.Program, len(c.exprs)),
		typeMeta: typeMeta{apiVersion: types.String(gvk.GroupVersion().String()), kind: types.String(gvk.Kind)},
		typed:    vt.object != nil,
	}
	estimator := newCostEstimator(vt)
	for i, expr := range c.exprs {
		checked, err := check(env, expr, estimator)
		if err != nil {
			return nil, err
		}
		if f.programs[i], err = env.Program(checked); err != nil {
			return nil, fmt.Errorf("--where %q: %w", expr, err)
		}
	}
	return f, nil
}

// factor formats how many times cost exceeds limit, as the API server does
// for CRD rules.
func factor(cost, limit uint64) string {
	return strconv.FormatFloat(float64(cost)/float64(limit), 'f', 1, 64)
}

// Warnings returns the run-time errors of every Filter compiled from c, one
// per distinct error of each expression, with the number of objects it was
// false for because of it. A nil *Conditions has none.
func (c *Conditions) Warnings() []Warning {
	if c == nil {
		return nil
	}
	return c.errs.warnings()
}

// Filter is Conditions compiled for one kind. A nil *Filter matches
// everything. Match is safe for concurrent use.
type Filter struct {
	conds    *Conditions
	programs []cel.Program
	typeMeta typeMeta
	typed    bool
}

// Typed reports whether object is typed by the kind's schema rather than
// dynamically.
func (f *Filter) Typed() bool { return f != nil && f.typed }

// Input is one object and what its expressions may read beside it.
type Input struct {
	// Object is the object: a pointer to a typed API struct (*corev1.Pod),
	// a *metav1.PartialObjectMetadata, an *unstructured.Unstructured, or a
	// cache.DeletedFinalStateUnknown holding one, of the kind the Filter was
	// compiled for. A typed or metadata-only object reads as having that
	// kind's apiVersion and kind, whatever it holds (objects from typed
	// informers hold none); an unstructured one has its own.
	Object any
	// Owner is the object's top-level controller; nil reads as null.
	Owner *Owner
	// Node is, for a pod, its Node (*corev1.Node,
	// *metav1.PartialObjectMetadata or *unstructured.Unstructured); nil reads
	// as null.
	Node any
}

// Owner is what the owner variable holds: the apiVersion and kind of the
// top-level controller, as its owner reference names them, and its metadata.
type Owner struct {
	APIVersion string
	Kind       string
	// Object is the owner, of any form Input.Object takes, or its
	// *metav1.ObjectMeta: only its metadata is read.
	Object any
}

// Match reports whether every expression is true for in. An expression that
// fails (a missing key, a type error in a dynamically typed field, a result
// that is not a bool) is false for this object, and the error is counted for
// Warnings.
func (f *Filter) Match(in Input) bool {
	if f == nil {
		return true
	}
	act := newActivation(f, in)
	defer act.release()
	for i, p := range f.programs {
		out, _, err := p.Eval(act)
		if err != nil {
			f.conds.errs.add(i, err.Error())
			return false
		}
		b, ok := out.(types.Bool)
		if !ok {
			f.conds.errs.add(i, "must evaluate to bool but got "+out.Type().TypeName())
			return false
		}
		if !b {
			return false
		}
	}
	return true
}
