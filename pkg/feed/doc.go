// Package feed turns shared informer notifications into a change feed that
// loses nothing and repeats nothing, for `kubectl idx watch`.
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
// With an OwnerScope (`--owner`), membership is what the garbage collector
// goes by, and the feed keeps it in the same queue order: an owner that is
// deleted still counts with its last ownerReferences while something it owned
// remains, so a dependent deleted after its owner is DELETED as a member in any
// cascade mode; an owner orphaned or adopted (reported by the feed's own
// informers or by the OwnerLookup's) has the feed's objects below it judged
// again, and those that left are DELETED with LeftScope, those that entered
// ADDED. The OwnerLookup's reports take the same queue as the informers'
// notifications; nothing is emitted from an informer goroutine.
//
// Contract: objects in events are the informers' shared cache objects and are
// read-only: deep-copy before changing anything, printing included. Handlers
// are safe for concurrent use by any number of informers; Run must be called
// once, and the Scope it consults is only used from Run's goroutine.
//
// Nothing here imports cobra or writes to os.Stdout: Run hands events to a
// callback.
package feed
