// Package where compiles, type-checks, analyses and evaluates the CEL
// predicates of --where, such as
//
//	kubectl idx pods --where 'object.status.phase != "Running"'
//
// # The language
//
// Expressions are CEL as the Kubernetes API server speaks it in
// ValidatingAdmissionPolicies and CRD validation rules, built on the API
// server's own base environment: environment.MustBaseEnvSet at
// CompatibilityVersion 1.37, from k8s.io/apiserver v0.37.2 (the version that
// goes with client-go v0.37.2) and the cel-go it is built with, v0.29.2. So the
// functions, overloads and language options are a v1.37 API server's for a
// new policy, and stay in step with it when the module is upgraded instead of
// being listed here: the Kubernetes libraries (quantity, regex, lists, URLs,
// IP and CIDR, format, semver), cel-go's strings, sets, lists and
// two-variable comprehension extensions, optional types, cross-type numeric
// comparisons, and the validators that make a bad regular expression,
// duration or timestamp literal a compile error. The compatibility version is
// the module's, not the API server's default one release behind: that default
// keeps a stored policy valid across a rollback, and --where expressions are
// never stored. An expression valid in a policy on an older server is valid
// here, since the libraries only grow.
//
// # Variables
//
// An expression may name four variables; only those it names are resolved,
// typed and bound:
//
//	object  the object, as -o json prints it
//	owner   its top-level controller, as --by-owner resolves it: apiVersion,
//	        kind and metadata, nothing else; null when it has none
//	node    for a pod, the Node named by spec.nodeName; null when unscheduled.
//	        Naming it for another kind is a compile error
//	now     a timestamp, the time the command started (Parse's argument), the
//	        same in every evaluation
//
// object reads as the JSON -o json prints, whatever form the informer holds
// it in (typed, metadata-only, unstructured): metav1.Time fields are RFC 3339
// strings, so an age reads as in a policy,
// now - timestamp(object.metadata.creationTimestamp) > duration('1h');
// quantities are strings (quantity(...) parses them); an IntOrString is an int
// or a string; []byte is base64; a float that is a whole number is an int, as
// JSON decodes it (comparisons with doubles work; write double(x) before
// arithmetic with one); omitempty and omitzero fields that are empty are
// absent, so has(object.spec.nodeName) is false for an unscheduled pod and
// selecting an absent field is an error on that object (see Errors). Its
// apiVersion and kind are those of the kind the Filter was compiled for,
// although typed informer objects hold none.
//
// # Typing
//
// Compile types the variables from the server's OpenAPI v3 schemas (Schemas),
// with the API server's own conversion of a schema to CEL types
// (common.SchemaDeclType over openapi.Schema, the kind found as
// openapi/resolver finds it), so that object.spec.replica, a typo, is an error
// before anything is listed rather than an empty answer. owner is typed as an
// object of apiVersion, kind and ObjectMeta, node as a Node. Where a schema
// describes a value as CRD validation rules see it rather than as JSON, the
// JSON wins, so that an expression means the same with and without a schema:
// date-time, date, duration and byte strings are strings, quantities are
// strings, and what a schema cannot describe (x-kubernetes-preserve-unknown-
// fields, FieldsV1, property names that are not CEL identifiers) is dyn. A
// variable without a schema is dyn and its fields are found, or not, per
// object at run time: a custom resource without a structural schema, an
// aggregated API that publishes none, a server that does not answer
// /openapi/v3, nil Schemas. Filter.Typed says which happened.
//
// # Informer modes
//
// Parse analyses each expression's syntax tree, with no schema, into Uses:
// which variables it names, and whether every use of object (and of node)
// selects apiVersion, kind or metadata first, as in object.metadata.name,
// has(object.metadata.labels), object.metadata.labels['app'],
// object['kind'] or object.?metadata. Then a metadata-only informer holds all
// the expressions read (Uses.MetadataOnly, Uses.NodeMetadataOnly). object on
// its own, object.spec, object[k] with a key computed at run time, object
// passed to a function or ranged over by a macro may read anything. A
// comprehension variable that shadows a variable's name
// (x.exists(object, ...)) is not a use. Owner informers are needed only when
// Uses.Owner is set, and may be metadata-only; a nodes informer only when
// Uses.Node is.
//
// # Errors
//
// Every error comes before anything is listed. Parse makes no request;
// Compile makes only those for the OpenAPI documents it needs. Errors are
// *Error, one line naming the flag and the expression; when the problem has a
// place, two more lines show the expression and a caret under it:
//
//	--where "object.spec..replicas": syntax error at column 13: no viable alternative at input '..'
//	  object.spec..replicas
//	              ^
//	--where "objct.metadata.name == 'web'": unknown variable at column 1: "objct" (the variables are object, owner, node, now)
//	--where "object.metadata.name.startswith('web')": unknown function at column 32: "startswith"
//	--where "object.spec.replica > 1": unknown field at column 13: "replica"
//	--where "object.spec.replicas == '3'": type error at column 22: found no matching overload for '_==_' applied to '(int, string)'
//	--where "object.metadata.name": must evaluate to bool but got string
//	--where "node.metadata.name == 'n1'": node is set only for pods, not for Deployment
//	--where "object.spec.volumes.exists(a, ...)": estimated cost exceeds the limit by a factor of 1037.6: in the worst case it grows faster than the square of the object's size (nest fewer comprehensions over its lists)
//
// Several --where are compiled separately, in order, and the first error is
// returned, so that it names the right one; together they are a conjunction.
//
// At run time an expression that fails on one object (a missing key, a
// dynamically typed field of the wrong type, a result that is not a bool, the
// per-evaluation cost limit) is false for that object, and its error is
// counted per expression and distinct message, over every Filter compiled
// from the same Conditions (several kinds); a command over several clusters
// forks its Conditions per cluster (Fork), so that each cluster's answer
// warns of its own errors with its own counts. Warnings lists
// each once with its count, for one line per distinct error, never one per
// object; past five distinct errors per expression the rest are counted
// together:
//
//	warning: --where "object.spec.nodeName.startsWith('node-')": no such key: nodeName (on 37 objects)
//
// # Costs
//
// Compiling: the schemas of a kind come from one OpenAPI document per group
// version, fetched through kubectl's cached discovery client (NewSchemas) and
// decoded once per command. Against a v1.37 kube-apiserver (envtest, on 2
// cores shared with other work), compiling a pod filter that names object,
// owner and node (Pod, ObjectMeta and Node, all in the core/v1 document) took,
// with a cold cache, 2 requests (/openapi/v3, then the core/v1 document: 1.6
// MB of JSON, about 230 KB gzipped) and 38-70 ms; with a warm cache, 1 request
// (/openapi/v3, answered 304 Not Modified with no body; the document itself
// is cached as immutable under its hash) and 26-40 ms, most of it decoding the
// document (10-20 ms). A Deployment filter (the apps/v1 document, 0.7 MB) took
// 23-35 ms cold and 17-24 ms warm. With no schemas, compiling takes about a
// millisecond. A document is since decoded only as far as the expressions
// read: its schemas stay JSON until a kind refers to them, and object (node
// too) is typed by the kind's schema trimmed to apiVersion, kind, metadata and
// the top-level fields the expressions select, or whole when some use may read
// any (object alone, a computed key). The types of what they read are the
// same, and so are the errors: a field the kind has not is as unknown in the
// trimmed schema as in the whole one. On client-go's copy of the core/v1
// document, compiling a pod filter on labels takes 14-21 ms, allocates 2.7 MB
// and keeps 0.6 MB; on status.phase 15 ms, 3.3 MB and 0.7 MB; over
// spec.containers 26 ms, 8.7 MB and 1.7 MB. With the whole document decoded
// and the whole Pod typed, each took about 11 MB and kept about 2 MB.
// Allocations before the list matter: the garbage a command makes early sets
// the heap its list grows into.
//
// Evaluating (BenchmarkMatch, on the realistic pod of testdata, 12 KB of JSON;
// the same on 2 shared cores): a label or phase predicate 0.6-0.9 µs and 10-11
// allocations, an age 1.3-1.6 µs, a condition search with exists() 4.2-4.6 µs,
// a quantity comparison over containers 3.5-3.8 µs; unstructured objects cost
// about the same. Over 20,000 pods that is 15-90 ms of CPU and no memory kept.
// Typed objects are read lazily (value.go): converting each to a map first
// would cost 0.3-0.4 ms per pod (BenchmarkConvert).
//
// CostLimit explains the static limit on an expression's estimated cost. At
// run time each evaluation is also held to the API server's per-call limit,
// 1,000,000 cost units.
//
// # Concurrency
//
// Conditions, Filters and Schemas are safe for concurrent use: Compile may run
// for several kinds and clusters at once, and Match from any number of
// goroutines on one Filter (tested under the race detector). cel-go programs
// are safe for concurrent evaluation; each Match binds its variables in an
// activation of its own, and the error counts take a mutex. Objects are only
// read, never written (resource.Quantity caches its string in the receiver,
// so it is formatted from a copy), so objects from an informer's cache may be
// passed as they are.
//
// # Use
//
// The command parses, at Complete time, and hands the Conditions to the
// engine (query.Config.Where); the engine does the rest for each cluster and
// question (pkg/query's where.go): it forks the Conditions, picks informer
// modes from Uses, compiles per listed kind with the cluster's Schemas,
// evaluates per object, and returns the warnings with the answer's, which the
// command prints once at the end. In short:
//
//	// cmd: Complete
//	conds, err := where.Parse(o.Where, time.Now()) // nil Conditions when there is no --where
//	if err != nil {
//		return err
//	}
//	cfg.Where = conds
//
//	// pkg/query: per cluster and question
//	conds = conds.Fork()
//	uses := conds.Uses()
//	mode := informer.MetadataOnly
//	if !uses.MetadataOnly() {
//		mode = informer.Full
//	}
//	schemas := target.Schemas // where.NewSchemas(dc.OpenAPIV3()), one per cluster, made with the Target
//	filter, err := conds.Compile(mapping.GroupVersionKind, schemas) // one per kind
//	if err != nil {
//		return err
//	}
//	// per object: owner only if uses.Owner, node only if uses.Node
//	in := where.Input{Object: obj}
//	if uses.Owner {
//		in.Owner = &where.Owner{APIVersion: ref.APIVersion, Kind: ref.Kind, Object: ownerMeta}
//	}
//	if filter.Match(in) { // a nil Filter matches everything
//		...
//	}
//	// after the answer: the session's warnings
//	for _, w := range conds.Warnings() {
//		warnings = append(warnings, w.String())
//	}
package where
