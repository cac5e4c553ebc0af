// Package checkpoint keeps what a change feed (`kubectl idx watch --checkpoint
// FILE`, `kubectl idx events -w --checkpoint FILE`) needs to resume where it
// stopped: per stream, the resourceVersion delivered up to and, per object,
// its UID and resourceVersion (never its content), with --owner the
// ownerReferences the feed follows.
//
// Vocabulary:
//   - Stream: one kubeconfig context's feed, identified by the context, the
//     command, the types (resources) in order, the namespace and every flag
//     that narrows it (selectors, names, --owner with the owner's UID,
//     --types, --for-kind). A checkpoint resumes only the streams it was
//     written for; any difference is an error naming it. The context is its
//     name as given, "" for a run without one (--server and credentials
//     only), which errors word "(no context)"; a name errors could confuse
//     with another or with that ("(none)", "a,b", one with a space) is quoted.
//     Every string of a stream must be UTF-8, which JSON keeps as it is.
//   - Snapshot: a record holding every stream's whole state.
//   - Record: one line of the file, a snapshot or a change (feed.Delta) of one
//     stream, written after the feed has flushed the events it covers.
//
// Format (version 1), text, one record per line:
//
//	kubectl-idx checkpoint v1
//	<crc32c, 8 hex digits> <JSON snapshot>
//	<crc32c> <JSON change of one stream>
//	...
//	<crc32c> {"closed":true}
//
// The first line names the format and its version; the checksum covers the
// JSON that follows it. The second line is a snapshot; the following ones are
// changes, applied in order. {"closed":true} ends the file of a feed that
// stopped cleanly (Ctrl-C, SIGTERM, a closed stdout): its state covers every
// line it printed. A file without it was left by a feed that was killed or
// whose machine stopped: the lines printed after its last record may be
// printed again when it resumes. A last line cut short (a feed killed while
// appending it) is dropped with a warning; any other damage, a missing or
// unknown version line, or a file cut within its snapshot is an error.
//
// Writes: a change is appended after every flush of the feed's output, with
// one write; the file is fsynced at most once a second, and at once when it
// is rewritten. It is rewritten (compacted) when the changes appended since
// the last snapshot outweigh it (and at least 1 MiB), when a feed starts and
// when it stops: a new snapshot goes to a temporary file in the same
// directory, which is fsynced, locked, renamed over the checkpoint, and the
// directory fsynced. A rename is atomic: a reader finds the old file or the
// new one, never a mix.
//
// Lock: the open checkpoint holds an exclusive flock(2), on the file that is
// at the path (a process that locked a file since renamed away checks and
// tries again), so two feeds never share one; the second is refused with an
// error naming the file and the first one's process. Not supported on
// Windows, which has no flock.
//
// Security: the file is created 0600 and rewritten 0600. It holds names,
// namespaces, UIDs and resourceVersions of the objects the feed covers, the
// ownerReferences with --owner, and the kubeconfig context names; no object
// content, no credentials.
//
// Concurrency: a File is safe for concurrent use: the feeds of several
// contexts record through their own Stream handles, and informer goroutines
// mark relists.
package checkpoint
