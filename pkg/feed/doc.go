// Package feed turns shared informer notifications into a change feed that
// loses nothing and repeats nothing, for `kubectl idx watch` and `kubectl idx
// events -w`. A Feed is one cluster's: pkg/query runs one per target and
// merges them (query.Follow), setting each event's Context.
//
// Vocabulary:
//   - Notification: one call of an informer's event handler (OnAdd, OnUpdate,
//     OnDelete), as received.
//   - Event: what the feed emits for a notification: ADDED, MODIFIED or DELETED,
//     with the object, the time it was received and, for MODIFIED, the state
//     emitted before and optionally the changed fields (see Diff).
//   - Source: the index of the resource a notification came from, in the
//     caller's list of resources; the initial snapshot is ordered by it.
//   - Relist: an informer whose watch could not resume (410 Gone, an API server
//     restart) lists again and calls OnUpdate for every object, OnAdd for new
//     ones and OnDelete with a cache.DeletedFinalStateUnknown tombstone for the
//     ones deleted meanwhile.
//
// How nothing is lost or repeated: event handlers only append to an unbounded
// FIFO queue, so a slow writer never blocks an informer and the notifications of
// one object stay in the order the informer delivered them. One goroutine (Run)
// takes them off the queue and remembers, per object, the UID and
// resourceVersion it last emitted. A notification whose resourceVersion is the
// one emitted last is dropped: that is how a relist's OnUpdate for every
// unchanged object disappears. A changed object becomes one MODIFIED, however
// many times it changed while the watch was down; a tombstone becomes DELETED
// marked DetectedOnRelist; an object deleted and recreated under the same name
// while the watch was down becomes DELETED then ADDED.
//
// A Scope narrows the feed beyond what the server-side selectors do:
// NameScope keeps named objects, a --where predicate (pkg/query's) decides by
// the object alone, and AllOf joins several. An object that enters the scope
// is ADDED, one that leaves it while it exists is DELETED with LeftScope.
//
// With an OwnerScope (`--owner`), membership is what the garbage collector
// goes by, and the feed keeps it in the same queue order: an owner that is
// deleted still counts with its last ownerReferences while something it owned
// remains, so a dependent deleted after its owner is DELETED as a member in any
// cascade mode; an owner orphaned or adopted (reported by the feed's own
// informers or by the OwnerLookup's) has the feed's objects below it judged
// again, and those that left are DELETED with LeftScope, those that entered
// ADDED. The OwnerLookup's reports take the same queue as the informers'
// notifications; nothing is emitted from an informer goroutine.
// NewInvolvedObjectScope is the OwnerScope of `events -w`: an Event belongs
// when its involvedObject is the root or below it, and Config.Order lists the
// initial Events oldest first.
//
// Marks and checkpoints: fed through MarkedHandler by a feed informer's cursor
// (informer.Cursor), each notification says where its resource's history
// stands once it is handled (a position, a resourceVersion) and, for a relist,
// the gap the list fills; the events of a relist carry that Gap. With
// Config.Record the feed hands, after every flush, a Delta of its State: the
// positions, and per object its UID and resourceVersion (with an OwnerScope,
// the ownerReferences it follows, and the owners it remembers), never the
// object itself. A feed started with Config.Restore takes that State up: the
// objects stand as stubs, the informers' first lists (which print nothing)
// replace those that did not change, and the watches resumed from the
// positions bring every change since, which is printed as it would have been
// live. The first MODIFIED of an object that changed since has no old state
// (OldUnknown); an object deleted meanwhile and found by a relist is DELETED
// with its stub. A resumed watch may deliver again what was handled before
// the last position recorded (positions are never ahead of what was handled,
// and may lag); older versions (resourceVersions compare as integers),
// deletions of objects no longer known and of earlier objects of a name are
// dropped, so nothing is printed twice.
//
// Contract: objects in events are the informers' shared cache objects and are
// read-only: deep-copy before changing anything, printing included. Handlers
// are safe for concurrent use by any number of informers; Run must be called
// once, and the Scope it consults is only used from Run's goroutine.
//
// Nothing here imports cobra or writes to os.Stdout: Run hands events to a
// callback.
package feed
