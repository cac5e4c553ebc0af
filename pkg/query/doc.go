// Package query is kubectl-idx's query engine: one function per question the
// commands ask, each answered from short-lived client-go informers.
//
// # Layering
//
// A change belongs in exactly one room:
//
//   - cmd/ turns flags into a Config and a question (a []Request, an
//     ObjectRef, a GroupBy), calls one Session method and prints what comes
//     back. It decides only what the output needs (metadata-only objects for
//     -o name, a CRD's printer columns).
//   - pkg/query (this package) owns the informer orchestration of a question:
//     which factories and informers, with which indexers and selectors,
//     waiting for them, turning a type that cannot be listed into a warning,
//     the per-namespace fallback of an -A query the user may not run at the
//     cluster scope, owner resolution, and assembling the answer document.
//   - pkg/informer builds factories, lists and watches, transforms and syncs;
//     pkg/index holds pure index functions and the queries over indexes
//     (groups, the owner graph, selectors, references); pkg/feed turns
//     informer notifications into the change feed.
//   - pkg/apis/v1alpha1 holds the answer documents (GroupList, Tree,
//     RelationList); pkg/printers prints them and the objects. Neither knows
//     about informers.
//
// Nothing here imports cobra, pflag or pkg/printers or writes to the
// process's stdout: questions take a context and return documents, objects
// and warnings.
//
// # Sessions
//
// A Session is one cluster and one invocation: its Config (REST config,
// mapper, namespace scope, selectors, sync timeout) and the warnings of a
// partial answer. Each question starts the informers it needs and shuts them
// down before it returns (Watch when it ends); the objects returned are
// read-only cache objects, to be deep-copied before anything changes them.
// Questions over every type (tree, owners, orphans, events) use a client rate
// of 50 requests a second and at most 16 LISTs in flight.
//
// # Owners
//
// informer.OwnerResolver is the one owner lookup (Session.OwnerResolver): one
// metadata-only informer per owner kind, indexed by UID and for the owner
// graph, started on first use. --by-owner walks controller references up
// through it, tree, owners and orphans add its stores to their graph, and the
// watch's --owner scope reads references and hears of owner changes through it.
package query
