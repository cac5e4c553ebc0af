// Package query is kubectl-idx's query engine: one function per question the
// commands ask, each answered from client-go informers, of one cluster or of
// several: short-lived ones of its own in a direct run, warm ones borrowed
// from the cache server's pool in a served run (a Target's Source).
//
// # Layering
//
// A change belongs in exactly one room:
//
//   - cmd/ turns flags into Targets, a Config and a question (GetQuery,
//     FeedQuery, an ObjectRef, a GroupBy), asks it of every target through
//     Ask (Follow for a FeedQuery) and reports the answers. It decides only what the output needs
//     (Request.Mode, the server's tables for human output).
//   - pkg/query (this package) owns the informer orchestration of a question:
//     which factories and informers, with which indexers and selectors,
//     waiting for them, turning a type that cannot be listed into a warning,
//     the per-namespace fallback of an -A query the user may not run at the
//     cluster scope, owner resolution, assembling the answer document, and
//     asking several clusters at once.
//   - pkg/informer builds factories, lists and watches, transforms and syncs;
//     pkg/index holds pure index functions and the queries over indexes
//     (groups, the owner graph, selectors, references); pkg/feed turns
//     informer notifications into the change feed; pkg/diagnose names the
//     causes of a diagnosis from objects already read; pkg/history holds the
//     pure parts of history and blame (diffs by merge key, managedFields
//     attribution, gaps, YAML lines).
//   - pkg/apis/v1alpha1 holds the answer documents (GroupList, Tree,
//     RelationList, Diagnosis, History, Blame, WatchEvent, CacheStatus), API
//     objects that know nothing of informers; pkg/printers prints them, the objects, Listings and
//     Answers, importing this package for those types and nothing of
//     pkg/informer: the engine matches the server's table rows to their
//     objects (TableFetch) and merges several contexts' groupings
//     (MergeGroupLists).
//
// Nothing here imports cobra, pflag or pkg/printers or writes to the
// process's stdout: questions take a context and return documents, objects
// and warnings.
//
// # Questions and the methods that answer them
//
// Each command builds its question and asks it of every target through Ask;
// the question is one call on the target's Session. A feed is a FeedQuery,
// which Follow plans per target and follows:
//
//	kubectl idx TYPE[,TYPE] [NAME...]   Session.Get(GetQuery): List, Stream (one
//	                                    type printed as it arrives), TopOwners
//	                                    (--show-owner); Tables for human output
//	  --by-owner|node|label|namespace   Session.Get with GetQuery.GroupBy:
//	  --by JSONPATH                     Group; MergeGroupLists joins contexts
//	kubectl idx tree TYPE/NAME          Session.Tree
//	kubectl idx owners TYPE/NAME        Session.Owners
//	kubectl idx orphans                 Session.Orphans
//	kubectl idx uses TYPE/NAME          Session.Uses
//	kubectl idx selects TYPE/NAME       Session.Selection (Selects)
//	kubectl idx selected-by TYPE/NAME   Session.Selection, inverse (SelectedBy)
//	kubectl idx events TYPE/NAME        Session.EventList (Events)
//	kubectl idx why TYPE/NAME           Session.Why: the subtree's kinds and what
//	                                    a diagnosis looks up (whyReader), the
//	                                    causes named by package diagnose
//	kubectl idx why [-A]                Session.WhyAll: every top-level owner
//	                                    and Service of the scope, the pods
//	                                    the server's table says run ready
//	                                    read as metadata (whytriage.go)
//	kubectl idx history TYPE/NAME       Session.History: the tree as Tree
//	                                    finds it, the root, its revisions and
//	                                    (--uses) what it uses read whole with
//	                                    their managedFields, the scope's events,
//	                                    a checkpoint read (checkpoint.Read)
//	kubectl idx blame TYPE/NAME         Session.Blame: one object, its
//	                                    managedFields kept
//	kubectl idx watch TYPE[,TYPE]       Follow(FeedQuery): per target its plan
//	                                    (the types, --owner's UID through
//	                                    Session.UID, the checkpoint's stream
//	                                    and cluster), then Session.Watch;
//	                                    TopOwners for the OWNER column
//	kubectl idx events TYPE/NAME -w     Follow(FeedQuery with Object set):
//	                                    Session.WatchEvents
//	completion                          TypeNames, ObjectNames
//	kubectl idx cache serve / status    NewPool (the warm pool), CacheInformers:
//	                                    pkg/served asks them
//
// The object argument of tree, owners, uses, selects, events, why, history
// and blame resolves through the target's discovery first (Session.Object).
//
// managedFields are stripped by every informer (informer.Config's
// KeepManagedFields) but those of the objects history and blame explain:
// the root, its ReplicaSets or ControllerRevisions and, with --uses, what
// its pod spec uses, each read by a factory of its own that keeps them, so
// that a warm pool holds them apart (its key has KeepManagedFields) and
// never hands them to another question.
//
// # Targets and answers
//
// A Target is one kubeconfig context resolved (REST config, mapper,
// discovery, namespace); one context is the list of one, and several are
// asked by the same code. Ask asks a question of every target concurrently,
// at most MaxConcurrentTargets at once, each through a Session of its own,
// and returns one Answer per target: its value, its warnings and its error
// (beside a value, for an answer in part). Follow runs a feed per target and
// merges them into one stream, each target's feed reconnecting on its own and
// one that fails reported while the others go on. A Target's Hooks stand in
// for its clients in tests.
//
// # Sessions
//
// A Session is one cluster and one question: its Config (the Target, the
// selectors, the sync timeout) and the warnings of a partial answer. Each
// question gets the informers it needs from its Target's Source and shuts
// them down before it returns (Watch when it ends): a direct run's stop; a
// served run's go back, running, to the pool they were borrowed from, which
// made sure they were current as of the question's start before it read
// them. The objects returned are read-only cache objects, to be deep-copied
// before anything changes them. An answer from the cache says what each type
// it read is current as of (Session.AsOf, the documents' and Listing's AsOf);
// a direct run's says nothing of it. Every session's clients get a rate of
// 50 requests a second, in bursts of 300, unless the target's config sets one
// (client-go's 5 would throttle a question that lists fifty types). The
// informers of questions that read many types (tree, owners, orphans, uses,
// selects, selected-by, why, history, blame: newWideFactory) list at most 16
// at once and drop the server's warnings (Warning headers) about types nobody
// named; a listing's clients keep them, for the process's warning writer to
// print.
//
// Each request is read as much as the output needs (Request.Mode):
// metadata only for names and for human output, whose cells come from the
// API server's table (read beside the objects, TableFetch); Summary for the
// pods of grouped tables; Rows and FullRows for a feed's table, whose events
// carry their server's row; whole objects otherwise. A listing of one whole
// type in an output that prints each object on its own is streamed (Stream):
// handed over a page at a time as the server sends it, in List's order, and
// never held whole.
//
// # --where
//
// The --where expressions (Config.Where, parsed by the command layer) enter
// the engine in where.go and nowhere else: each question compiles them for
// the kinds it lists, typed by the target's OpenAPI schemas, before it lists
// anything; reads each request in the mode the expressions need (Request.Mode
// raised from metadata to whole objects when they read beyond metadata); and
// judges objects where it has them: a one-shot listing's LIST pages as they
// arrive when the expressions read the object alone (informer.Config.Keep),
// stores and streams once synced when they name owner or node, tree and
// owner nodes before the tree is pruned, a feed's objects as its Scope.
// Run-time errors are counted per session and said with its warnings.
//
// # Owners
//
// informer.OwnerResolver is the one owner lookup (Session.OwnerResolver): one
// metadata-only informer per owner kind, indexed by UID and for the owner
// graph, started on first use. --by-owner walks controller references up
// through it, tree, owners and orphans add its stores to their graph, and the
// watch's --owner scope reads references and hears of owner changes through it.
//
// # Feeds and checkpoints
//
// Watch and WatchEvents run every type on a feed informer (informer
// FeedInformer) followed by a cursor, whose marks tell the feed where each
// type's history stands and which events a relist folds (FeedNotices.OnGap
// hears of each relist). With a checkpoint (pkg/checkpoint, one handle per
// target), the feed records its state after every flush and, when the
// checkpoint holds one, resumes: the informers' first lists print nothing,
// their watches start from the positions recorded, and a relist the previous
// run was printing when it stopped is done again.
package query
