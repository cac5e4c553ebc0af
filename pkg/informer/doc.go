// Package informer builds, starts and syncs the short-lived shared informers that
// back every kubectl-idx command.
//
// Vocabulary:
//   - Resource: one API resource to watch, identified by its REST mapping
//     (GroupVersionResource, Kind, scope).
//   - Mode: how much of each object is fetched. Full objects come from typed,
//     protobuf-speaking informers for types compiled into client-go and from
//     dynamic (unstructured JSON) informers for everything else; MetadataOnly
//     objects are *metav1.PartialObjectMetadata fetched as protobuf; Summary
//     objects are Full ones with pods stripped to what group summaries read.
//     Transforms run on each LIST page as it arrives, so what they drop never
//     piles up.
//   - PageSink: where a StreamInformer's list goes, page by page, in place of
//     its store: a listing printed as it arrives keeps no object.
//   - Outage: the time a synced informer cannot see changes because its watch
//     failed, expired (410 Gone) or was cut, until it watches again or has listed
//     again. Config.OnWatchLost and Config.OnWatchRestored report outages to
//     long-running commands; one-shot queries leave them nil and pay nothing.
//   - Progress deadline: how the clients of NewFactory apply --request-timeout. A
//     request fails when its answer has not started within it or then stops for a
//     whole timeout; every byte received restarts the clock, so a LIST that is still
//     arriving is never cut off. Watches keep kubectl's overall deadline.
//   - Factory: one per invocation. It de-duplicates informers by resource and mode,
//     registers indexers before start, installs the managedFields transform, and
//     owns start, sync and shutdown.
//   - OwnerResolver: the one owner lookup of every command (group-by, the owner
//     graph of tree/owners/orphans, the change feed's --owner scope): one
//     metadata-only informer per owner kind from a factory of its own, started on
//     first use, indexed by UID and for the graph, reporting owner changes to
//     OnOwnerChange handlers. It is safe for concurrent use.
//
// Contract: objects read from an informer's store are shared and read-only. Callers
// must DeepCopyObject before changing anything, including setting TypeMeta for a
// printer. Informers run in their own goroutines; stores and indexers are safe for
// concurrent reads. A Factory itself is not safe for concurrent configuration:
// configure from one goroutine, then Start.
//
// Nothing here imports cobra or writes to os.Stdout: progress goes to the writer in
// Config, and errors are returned.
package informer
