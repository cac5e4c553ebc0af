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
//   - Cluster: what a stream's context reached when it was written: the API
//     server's URL, the SHA-256 of the CA certificates the client trusts for
//     it, and the UID of its kube-system namespace, read with the feed's own
//     client (left out, without a word, for a user who may not get it). A
//     checkpoint's resourceVersions are positions in that cluster's storage.
//     When both runs know the UID it decides: the same cluster under another
//     URL (a proxy, a load balancer) or a rotated CA resumes, a cluster made
//     anew at the same address does not; otherwise the server and the CA must
//     be the same. Another cluster is refused, naming the file and what
//     differs, before anything else is compared. A resumed stream keeps the
//     UID recorded when the run that resumes it cannot read it. Each context
//     of a feed over several has its own.
//   - Snapshot: a record holding every stream's whole state.
//   - Record: one line of the file, a snapshot or a change (feed.Delta) of one
//     stream, written after the feed has flushed the events it covers.
//
// Format (version 2), text, one record per line:
//
//	kubectl-idx checkpoint v2
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
// Versions: version 2 added each stream's cluster. Version 1 files, which
// earlier kubectl idx wrote, are read: each stream a feed resumes from one
// resumes without the cluster check, with a warning saying so, and the file
// is rewritten as version 2 with the cluster at once; a context unavailable
// then keeps its stream without one (and the warning) until it resumes. The
// version changed rather than a field added to version 1 because an earlier
// kubectl idx would read a version 1 file holding clusters, resume it
// against any cluster and rewrite it without them; it refuses version 2
// ("has format version 2").
//
// Writes: a change is appended after every flush of the feed's output, with
// one write; the file is fsynced at most once a second, and at once when it
// is rewritten. It is rewritten (compacted) when the changes appended since
// the last snapshot outweigh it (and at least 1 MiB), when a feed starts and
// when it stops: a new snapshot goes to a temporary file in the same
// directory, which is fsynced, locked, renamed over the checkpoint, and the
// directory fsynced. A rename is atomic: a reader finds the old file or the
// new one, never a mix. A checkpoint refused to the feed that opened it
// (another feed, another cluster) is not rewritten: it keeps what it held,
// and the warnings it owes its own feed.
//
// Lock: the open checkpoint holds an exclusive flock(2), on the file that is
// at the path (a process that locked a file since renamed away checks and
// tries again), so two feeds never share one; the second is refused with an
// error naming the file and the first one's process. Not supported on
// Windows, which has no flock.
//
// Files: a checkpoint is a regular file of the user's own, and nothing else is
// opened, written or removed for it. The path is looked at without following a
// link (lstat), opened with O_NOFOLLOW (and O_NONBLOCK, lest a named pipe put
// there meanwhile block the open), and the file opened is checked again
// (fstat) and must be the one looked at; a new one is created with O_EXCL. A
// symbolic link (through which a feed would create, lock and read whatever it
// points to, then replace the link), a named pipe, a directory, a device or
// another user's file (holding what that user wrote; root refuses it too) is
// refused with a one-line error naming the file and what it is, and left as it
// was. The rewrite's temporary file is made anew (O_CREATE|O_EXCL, 0600, a
// random name) beside the checkpoint, and the rename that installs it replaces
// what is at the path, never what a link there points to. Only regular files
// of the user's own are removed as stale temporary files, and a checkpoint
// created and never resumed only while it is still at the path. Unix only:
// Windows has no flock, and --checkpoint is refused there.
//
// Security: the file is created 0600 and rewritten 0600. It holds names,
// namespaces, UIDs and resourceVersions of the objects the feed covers, the
// ownerReferences with --owner, the kubeconfig context names and each
// context's cluster (server URL, CA hash, kube-system UID); no object
// content, no credentials.
//
// Concurrency: a File is safe for concurrent use: the feeds of several
// contexts record through their own Feed handles (File.Resume returns one per
// Stream), and informer goroutines mark relists (Feed.Relisting).
package checkpoint
