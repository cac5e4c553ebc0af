package where

import (
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"

	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/library"
)

// CostLimit is the largest estimated cost, in CEL cost units, an expression
// may have.
//
// The estimate is the API server's: cel-go's checker with the Kubernetes
// libraries' call costs (library.CostEstimator), over sizes from the
// variables' declared types as apiextensions gives them for CRD rules: the
// worst object is 3 MiB (the largest request the API server takes) and every
// list, map and string the schema leaves unbounded fills it. One change makes
// it fit a filter: a collection reached through a comprehension's variable
// gets its share of the object, not a whole object of its own (over all the
// containers, their ports are as many as one object holds). Without it, the
// checker prices containers.exists(c, c.ports.exists(...)) like a cross
// product, 10^13, and any comprehension with a string function inside like a
// quadratic one.
//
// With it the estimates fall in bands that say how the worst case grows with
// the object: linear expressions (a comprehension, comprehensions nested along
// the object, string functions inside) are estimated below 10^8; quadratic
// ones (a comprehension over one list for each element of another: volumes
// for each volume mount, annotations against labels) between 10^11 and 10^14;
// cubic ones above 10^18. The limit, 10^16, admits the first two and rejects
// the third. The API server's own limits do not fit: its static limit for a
// CRD rule (10^7) rejects a single comprehension over a list that declares no
// maxItems, as built-in kinds' lists do not, and its per-call limit is a
// run-time budget.
//
// That run-time budget applies here too: each evaluation is stopped after
// spending 1,000,000 units (celconfig.PerCallLimit, about 0.1 s), and
// counted as an error on that object.
const CostLimit uint64 = 10_000_000_000_000_000

// maxCollection bounds a dyn list, map or string: nothing in an object is
// longer than the largest request the API server accepts.
const maxCollection = uint64(celconfig.MaxRequestSizeBytes)

// sizeEstimator gives the checker the size of what expressions read, from
// the variables' declared types, as apiextensions' estimator does for CRD
// rules. Dyn values, and values reached through them, are bounded by
// maxCollection.
type sizeEstimator struct {
	roots map[string]*apiservercel.DeclType
}

func newCostEstimator(vt varTypes) checker.CostEstimator {
	roots := map[string]*apiservercel.DeclType{}
	for name, t := range map[string]*apiservercel.DeclType{ObjectVar: vt.object, OwnerVar: vt.owner, NodeVar: vt.node} {
		if t != nil {
			roots[name] = t
		}
	}
	return &library.CostEstimator{SizeEstimator: &sizeEstimator{roots: roots}}
}

func (e *sizeEstimator) EstimateSize(element checker.AstNode) *checker.SizeEstimate {
	path := element.Path()
	switch {
	case len(path) == 0, path[0] != ObjectVar && path[0] != OwnerVar && path[0] != NodeVar:
		// Not read from a variable by selections alone: an element of a
		// list an expression built, a function's result. CEL sizes
		// literals and what it builds from them itself; anything else is
		// object data or made of it, and an object bounds it.
		return &checker.SizeEstimate{Min: 0, Max: maxCollection}
	}
	size := func(t *apiservercel.DeclType) uint64 {
		if t == nil || t.MaxElements <= 0 || uint64(t.MaxElements) > maxCollection {
			return maxCollection
		}
		return uint64(t.MaxElements)
	}
	node := e.roots[path[0]]
	// The sizes of the collections the path goes into, in order.
	var collections []uint64
	for _, name := range path[1:] {
		switch name {
		case "@items", "@values", "@keys":
			collections = append(collections, size(node))
			if node != nil {
				if name == "@keys" {
					node = node.KeyType
				} else {
					node = node.ElemType
				}
			}
		default:
			if node == nil {
				continue
			}
			if field, ok := node.Fields[name]; ok {
				node = field.Type
			} else {
				node = nil
			}
		}
	}
	n := size(node)
	// The last collections on the path are entered by index
	// (containers[0]); the one before them, if any, by a comprehension's
	// variable. All the instances of what lies below an iterated collection
	// share one object: over all the containers, their ports are as many as
	// one object holds, not that many each. The checker multiplies the
	// sizes of nested comprehensions, so the inner one gets its share.
	if iterated := len(collections) - indexSteps(element.Expr()); iterated > 0 {
		enclosing := collections[iterated-1]
		n = max(1, (n+enclosing-1)/enclosing)
	}
	return &checker.SizeEstimate{Min: 0, Max: n}
}

// indexSteps counts the indexes (containers[0], requests['cpu']) on the way
// from an expression down its selections to the variable it reads.
func indexSteps(e ast.Expr) int {
	n := 0
	for {
		switch e.Kind() {
		case ast.SelectKind:
			e = e.AsSelect().Operand()
		case ast.CallKind:
			call := e.AsCall()
			switch call.FunctionName() {
			case operators.Index:
				n++
				e = call.Args()[0]
			case operators.OptSelect:
				e = call.Args()[0]
			default:
				return n
			}
		default:
			return n
		}
	}
}

func (e *sizeEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}
