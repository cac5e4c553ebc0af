// Package informer builds, starts and syncs the shared informers that back
// every kubectl-idx command: informers of its own for a direct run, or
// borrowed from a Lender (package pool's warm pool, in the cache process),
// which settles them for each question (freshness, the asker's checks).
//
// Vocabulary:
//   - Resource: one API resource to watch, identified by its REST mapping
//     (GroupVersionResource, Kind, scope).
//   - Mode: how much of each object is fetched and kept. Full objects come from
//     typed, protobuf-speaking informers for types compiled into client-go and
//     from dynamic (unstructured JSON) informers for everything else;
//     MetadataOnly objects are *metav1.PartialObjectMetadata fetched as
//     protobuf; Summary objects are Full ones with pods stripped to what group
//     summaries read; Rows and FullRows keep a *Row per object, the API server's
//     table row of it with the object's metadata (Rows) or the whole object
//     (FullRows), for change feeds printed in the server's columns. A mode
//     covers another when its objects hold all that one reads (Mode.Covers):
//     a Lender may lend a Full informer for a metadata-only question.
//   - Page: informers list in paged LISTs of DefaultPageSize objects, at the
//     latest resource version (consistent, as kubectl get), never with
//     client-go's streaming watch-list: the pages are what the progress line
//     counts, what Config.MaxConcurrentLists bounds and what a PageSink takes.
//     Each page is decoded, counted and transformed as it arrives, so what the
//     transforms drop never piles up; a protobuf page loses its items'
//     managedFields before it is decoded at all, unless they are kept.
//   - Page ahead: the next page of a list is asked for as soon as its continue
//     token is known, while the page before is still arriving and being
//     decoded: the server sends a list's ListMeta first, and NewFactory's
//     clients read the token from the first bytes of each answer
//     (wire.ListTransport, wire.PageAhead). The server produces a page while
//     the client reads the one before, instead of each waiting for the other.
//     At most one page is asked for ahead of the one the reflector (or a
//     PageSink) waits for, so a list never holds more than two pages besides
//     what it keeps.
//   - PageSink: where a StreamInformer's list goes, page by page, in place of
//     its store: a listing printed as it arrives keeps no object.
//   - Keep: a filter on the objects of every LIST page (Config.Keep, --where
//     on the object alone): what it refuses never reaches a store or a sink.
//   - Sharer: what a warm pool gives its informers (Config.Sharer) so that
//     the objects they keep share their equal parts (the labels, owner
//     references and pod template of the pods of one ReplicaSet, across
//     informers and modes) instead of a copy each: each object is shared once
//     transformed, before the reflector, a PageSink or a tee has it, whether
//     it came by a page, a watch-list or a watch. A direct run shares nothing.
//   - Outage: the time a synced informer cannot see changes because its watch
//     failed, expired (410 Gone) or was cut, until it watches again or has listed
//     again. Config.OnWatchLost and Config.OnWatchRestored report outages to
//     long-running commands; one-shot queries leave them nil and pay nothing.
//   - Cursor: a change feed's informer (FeedInformer) marks each notification
//     with the resourceVersion its resource has been delivered up to and, for
//     a relist, the gap the list fills; it can resume a watch from a
//     checkpoint's resourceVersion (ResumePoint). See Cursor for the order it
//     relies on.
//   - Progress deadline: how the clients of NewFactory apply --request-timeout
//     (wire.ProgressDeadline). A request fails when its answer has not started
//     within it or then stops for a whole timeout; every byte received
//     restarts the clock, so a LIST that is still arriving is never cut off.
//     Watches keep kubectl's overall deadline.
//   - Factory: one per invocation. It de-duplicates informers by resource and mode,
//     registers indexers before start, installs the managedFields transform, and
//     owns start, sync and shutdown.
//   - Source: where a question's factories come from. OneShot, a direct run's,
//     builds factories of informers of their own (NewFactory). The cache
//     server's is a warm pool's (package pool), whose factories
//     (NewFactoryWithLender) borrow informers the pool keeps warm across
//     questions.
//   - Lender: what lends a Factory informers that outlive it, the whole of
//     what this package knows of the warm pool. A factory with a lender asks
//     it for every informer but a feed's; Start starts none of those, and
//     WaitForSync waits for their sync as for its own, then lets the lender
//     settle them (a warm pool shows each store current as of the question's
//     start and has the question's asker authorized to read it) and returns
//     its error, or its skipped types; Shutdown hands them back, running. The
//     lender also says when the factory's own informers may list
//     (Lender.Authorize).
//   - OwnerResolver: the one owner lookup of every command (group-by, the owner
//     graph of tree/owners/orphans, the change feed's --owner scope): one
//     metadata-only informer per owner kind from a factory of its own, started on
//     first use, indexed by UID and for the graph, reporting owner changes to
//     OnOwnerChange handlers. It is safe for concurrent use.
//
// Contract: objects read from an informer's store are shared and read-only,
// and a lent one's are shared with every question that borrows it; with a
// Sharer, parts of one object are also parts of others, so a change to one
// would show in objects of other keys and informers. Callers
// must DeepCopyObject before changing anything, including setting TypeMeta for a
// printer. Informers run in their own goroutines; stores and indexers are safe for
// concurrent reads. A PageSink is called from one goroutine at a time, in page
// order, and may keep what it is given. A Factory itself is not safe for concurrent
// configuration: configure from one goroutine, then Start.
//
// Nothing here imports cobra or writes to os.Stdout: progress goes to the writer in
// Config, and errors are returned.
package informer
