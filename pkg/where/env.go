package where

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"

	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The variables an expression may name.
const (
	// ObjectVar is the object being filtered, as -o json prints it.
	ObjectVar = "object"
	// OwnerVar is the object's top-level controller: apiVersion, kind and
	// metadata, or null.
	OwnerVar = "owner"
	// NodeVar is, for a pod, the Node named by spec.nodeName, or null.
	NodeVar = "node"
	// NowVar is the time the command started, as a timestamp.
	NowVar = "now"
)

// variables lists the variables in the order messages name them.
var variables = []string{ObjectVar, OwnerVar, NodeVar, NowVar}

// CompatibilityVersion is the Kubernetes version whose CEL environment
// expressions compile in: the API server's base environment
// (environment.MustBaseEnvSet) at this version offers the same libraries,
// language options and validators that a v1.37 API server offers new
// ValidatingAdmissionPolicy and CRD validation expressions. It matches the
// k8s.io/apiserver module this package is built with (v0.37.2).
//
// The API server's own default is one minor version lower, so that a policy
// written today survives a rollback. --where expressions are never stored, so
// nothing is rolled back under them, and an older cluster does not matter
// either: they run here, not on the server.
var CompatibilityVersion = version.MajorMinor(1, 37)

// baseEnv is the API server's base environment with no variables.
func baseEnv() *environment.EnvSet {
	return environment.MustBaseEnvSet(CompatibilityVersion)
}

// varTypes are the declared types of the variables for one compilation. A nil
// DeclType declares the variable as dyn.
type varTypes struct {
	object, owner, node *apiservercel.DeclType
}

// dynamicEnv declares every variable with no schema. Parse checks
// expressions in it: it finds syntax errors, unknown variables and functions,
// and expressions whose result cannot be a bool whatever the schema.
var dynamicEnv = sync.OnceValues(func() (*cel.Env, error) {
	return newEnv(varTypes{})
})

// newEnv extends the base environment with the variables, typed by the given
// declarations.
func newEnv(vt varTypes) (*cel.Env, error) {
	var decls []*apiservercel.DeclType
	declare := func(name string, t *apiservercel.DeclType) cel.EnvOption {
		if t == nil || t.CelType() == cel.DynType {
			return cel.Variable(name, cel.DynType)
		}
		decls = append(decls, t)
		return cel.Variable(name, t.CelType())
	}
	opts := []cel.EnvOption{
		declare(ObjectVar, vt.object),
		declare(OwnerVar, vt.owner),
		declare(NodeVar, vt.node),
		cel.Variable(NowVar, cel.TimestampType),
	}
	set, err := baseEnv().Extend(environment.VersionedOptions{
		// Always present, as the API server's admission plugins declare theirs.
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         decls,
	})
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	return set.NewExpressionsEnv(), nil
}
