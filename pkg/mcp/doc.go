// Package mcp is `kubectl idx mcp`: the questions of kubectl idx, served to
// agents over the Model Context Protocol (the official Go SDK,
// github.com/modelcontextprotocol/go-sdk, over stdio). It is a thin
// transport over pkg/query: each tool call asks the same engine question a
// command asks (Session.Get, Tree, Owners, Uses, Selection, Orphans,
// EventList, Watch, Why) of every context the process serves, and turns the
// answers into small documents (pkg/apis/v1alpha1's QueryAnswer,
// RelationsAnswer, EventsAnswer, ChangesAnswer, ContextsAnswer, WhyAnswer).
//
// # Tools
//
//   - query: objects of types, narrowed by namespace, selectors and --where
//     CEL expressions, listed or grouped (owner, node, namespace, label:KEY),
//     each object projected (kind, namespace, name, ready, status, top-level
//     owner, node, and the JSONPath fields asked for).
//   - relations: tree, owners, uses, selects, selectedBy, orphans.
//   - events: the events of a subtree, or of a namespace.
//   - changes: a change feed (kubectl idx watch's) read in steps: the current
//     state, then the changes after each cursor.
//   - why: kubectl idx why's diagnosis (Session.Why, or WhyAll without an
//     object), its causes paged worst first, each of plain strings.
//   - contexts: the contexts served, reachable or not, and their versions.
//
// # Freshness
//
// The process is long-lived: its informers stay warm in one pool.Pool
// per context, as the cache server's do, and every call borrows them through
// Pool.Source with pool.Freshness{Start: the call's start}: the answer
// holds every write the API server acknowledged before the call, unless the
// call passes maxStalenessSeconds. A feed of the changes tool runs between
// calls; a call with a cursor first shows the feed current as of the call
// (feedproof.go) before it answers.
//
// # Security model
//
//   - Who it answers: the one process that started it, over its stdin and
//     stdout. It listens on nothing.
//   - With whose rights: the kubeconfig's user's, the same credentials
//     kubectl would use. Every informer a call reads is authorized for that
//     call, by the API server, with an pool.Asker built from the
//     process's own rest.Config (a metadata LIST of at most one object per
//     type, namespace and selectors): access revoked since the informers were
//     listed is refused with the API server's own Forbidden, as an error.
//     The feed of the changes tool checks its types again at every call.
//   - Read-only: no tool writes to the cluster.
//   - What it never emits: Secret data and stringData, environment variable
//     values (env[].value, in pods and in every pod template), and the
//     kubectl.kubernetes.io/last-applied-configuration annotation (which
//     repeats both) are replaced by a note of their size before anything is
//     projected; --where expressions that read them (a yes/no oracle on a
//     secret) are refused. Strings longer than Config.MaxString are cut, with
//     their length. Object text (messages, ConfigMap data, annotations) is
//     data, never instructions: it appears only in structured fields, never
//     in a tool's text rendering, which says only counts and where the rest
//     is.
//   - Bounded: every answer holds at most its limit of items and at most
//     Config.MaxBytes of JSON (truncated, with a cursor to the rest); a feed
//     holds at most Config.MaxFeedEvents changes not yet read, past which it
//     stops and says so as an error.
//   - What it keeps: objects in memory only, in the pool's informers and the
//     feeds' logs, for as long as they are used (the pool's drop time, the
//     feeds' idle time); nothing on disk.
package mcp
