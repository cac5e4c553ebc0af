// Package where compiles, type-checks, analyses and evaluates the CEL
// predicates of --where: `kubectl idx pods --where 'object.status.phase !=
// "Running"'`.
//
// # The language
//
// Expressions are CEL as the Kubernetes API server speaks it in
// ValidatingAdmissionPolicies and CRD validation rules: github.com/google/cel-go
// v0.29.2 with the libraries of k8s.io/apiserver v0.37.2 (quantity, regex,
// lists, URLs, IP and CIDR, format, semver, the strings, sets, lists and
// two-variable comprehension extensions), through the API server's own base
// environment, environment.MustBaseEnvSet, at CompatibilityVersion 1.37: the
// same function names, overloads, language options (cross-type numeric
// comparisons, optional types, homogeneous aggregate literals) and literal
// validators (a bad regex or duration literal is a compile error) that a
// v1.37 API server gives a new policy. Those module versions are the ones that
// go with client-go v0.37.2. A stored policy from an older server compiles
// too: the libraries only grow, compatibly.
//
// # Variables
//
// Four variables are declared; an expression names those it reads, and only
// those are resolved, typed and bound:
//
//	object  the object, as -o json prints it
//	owner   its top-level controller, as --by-owner resolves it: apiVersion,
//	        kind and metadata only; null when it has none
//	node    for a pod, the Node named by spec.nodeName; null when unscheduled.
//	        Naming node for any other kind is a compile error
//	now     a timestamp: the time the command started (Parse's argument), the
//	        same in every evaluation
//
// object reads as the JSON -o json prints, whatever form the informer holds
// it in: metav1.Time fields are RFC 3339 strings, so an age is
// now - timestamp(object.metadata.creationTimestamp) > duration('1h'), as in
// a policy; quantities are strings (quantity(...) parses them); an
// IntOrString is an int or a string; []byte is base64; omitempty and
// omitzero fields that are empty are absent, so has(object.spec.nodeName) is
// false for an unscheduled pod and selecting an absent field is an error for
// that object (see Errors). Its apiVersion and kind are the listed kind's,
// even for typed informer objects that hold none.
//
// # Typing
//
// Compile types the variables from the server's OpenAPI v3 schema of the kind
// (Schemas), with the API server's own conversion of a schema to CEL types
// (common.SchemaDeclType, over the references resolved by
// openapi/resolver.ClientDiscoveryResolver), so that object.spec.replica, a
// typo, is an error before anything is listed rather than an empty answer.
// owner is typed as an object of apiVersion, kind and ObjectMeta; node as a
// Node. Where a schema describes values as the API server's CRD rules see
// them rather than as JSON, the JSON wins: date-time, date, duration and byte
// strings are strings, quantities strings, and what a schema cannot describe
// (x-kubernetes-preserve-unknown-fields, FieldsV1, property names that are
// not CEL identifiers) is dyn. A variable with no schema is dyn, and its
// fields are found, or not, per object at run time: a custom resource without
// a structural schema, an aggregated API that publishes none, a server that
// does not answer /openapi/v3, nil Schemas.
//
// # Informer modes
//
// Parse analyses each expression's syntax tree (Uses) without a schema:
// which variables it names, and whether every use of object selects
// apiVersion, kind or metadata first (object.metadata.name,
// has(object.metadata.labels), object.metadata.labels['app'], object['kind']).
// Then a metadata-only informer holds all the expression reads
// (Uses.MetadataOnly). object on its own, object.spec, object[k] with a key
// computed at run time, object passed to a function or ranged over by a
// macro may read anything. A comprehension variable that shadows a variable's
// name (x.exists(object, ...)) is not a use. Owner informers are needed only
// when Uses.Owner is set, the nodes informer only when Uses.Node is.
//
// # Errors
//
// Every error comes before anything is listed, as an *Error whose message
// names the flag and the expression, in kubectl's style; a Parse error costs
// no request, a Compile error at most the OpenAPI documents of the schemas it
// needs:
//
//	--where "object.spec..replicas": syntax error at column 13: no viable alternative at input '..'
//	  object.spec..replicas
//	              ^
//	--where "objct.metadata.name == 'x'": unknown variable at column 1: "objct" (the variables are object, owner, node, now)
//	--where "object.spec.replica > 1": unknown field at column 13: "replica"
//	--where "object.metadata.name": must evaluate to bool but got string
//	--where "...": estimated cost 1,234 exceeds the limit of 10,000,000,000,000,000 (...)
//
// Errors with a place carry the expression and a caret under it on two more
// lines. Several --where expressions are compiled separately, in order, and
// the first error is returned, so it names the right one.
//
// At run time an expression that fails on one object (a missing key, a
// dynamically typed field of the wrong type, a result that is not a bool, the
// per-evaluation cost limit) is false for that object. The error is counted,
// per expression and distinct message, across every Filter compiled from the
// same Conditions; Warnings lists them once each with their count, for one
// line per distinct error:
//
//	warning: --where "object.spec.foo > 1": no such key: foo (on 37 objects)
//
// # Costs
//
// CostLimit explains the static limit, and the run-time limit of 1,000,000
// units per evaluation, the API server's own.
//
// # Concurrency
//
// Conditions and Filters are immutable once built, except for the error
// counts, which a mutex guards; Match is safe for concurrent use by any number
// of goroutines (the tests run it under the race detector), since cel-go
// programs are, and each evaluation binds its variables in an activation of
// its own. Schemas is safe for concurrent use. Objects are only read: the
// adapter never writes to them (resource.Quantity caches its string in the
// receiver, so it is formatted from a copy), and cached informer objects may
// be passed directly.
//
// # Use
//
// A command parses at Complete time, compiles per listed kind with the
// cluster's schemas, picks informers from Uses, and evaluates per object:
//
//	conds, err := where.Parse(o.Where, time.Now()) // nil when there is no --where
//	if err != nil {
//		return err
//	}
//	dc, err := o.ConfigFlags.ToDiscoveryClient()
//	...
//	schemas := where.NewSchemas(dc.OpenAPIV3())
//	filter, err := conds.Compile(mapping.GroupVersionKind, schemas)
//	if err != nil {
//		return err
//	}
//	mode := informer.MetadataOnly
//	if !conds.Uses().MetadataOnly() {
//		mode = informer.Full
//	}
//	...
//	for _, obj := range objects {
//		if filter.Match(where.Input{Object: obj, Owner: owner, Node: node}) {
//			...
//		}
//	}
//	for _, w := range conds.Warnings() {
//		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
//	}
package where
