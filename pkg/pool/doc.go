// Package pool is the warm pool of the cache server: informers kept running
// across questions, lent to each question's informer.Factory, shown current
// as of the question's start before it reads them (read-your-writes), and
// read only once the one who asks may read them. pkg/warm moves a command to
// the cache process and its output back, pkg/served runs it there, and this
// package is what it answers from. It builds on pkg/informer, which knows the
// pool only as an informer.Lender: nothing in pkg/informer imports this
// package.
//
// Vocabulary:
//   - Pool: the informers of one cache server, each in an informer.Factory of
//     its own, keyed by what decides what it holds: resource, mode, namespace
//     (none for a cluster-scoped type), label and field selectors, and
//     whether managedFields are kept. An informer no question has held for
//     Options.DropAfter is stopped and forgotten, and so is one whose list
//     failed for good.
//   - Source: the pool as the informer.Source of one question (Pool.Source).
//     Its factories are informer.NewFactoryWithLender's, their lender the
//     pool's side of the factory (borrower): Borrow lends a warm informer
//     (started, with its first list handed to a streamed listing as it
//     arrives, by the first question that asks for its key), Settle makes
//     it fit to read, Release hands it back, running.
//   - Freshness: how current a question's stores must be: every write the
//     API server acknowledged before Freshness.Start, or, with
//     Freshness.MaxStaleness (--max-staleness), a store shown so that long
//     before. The proof (fresh.go) reads the server's current resourceVersion
//     with a LIST of at most one object, then shows the store has applied
//     every change of its objects up to it: at once when it has applied that
//     version, by comparing a small store with a LIST of its objects, or with
//     a short watch of its objects and the wait for the store to apply the
//     last change it saw. Concurrent questions share one proof (a round); a
//     store that cannot be shown current (410 Gone, resourceVersions that are
//     not numbers, a type the server does not cache, such as Events) is
//     listed afresh for the question (relist).
//   - AsOf: what each type of an answer is current as of: the
//     resourceVersion and the time the server had it.
//   - Signature: the name of a question (its arguments). The informers the
//     last question of a signature borrowed are shown current for the next
//     one in the background as soon as it starts (prefetch).
//   - Asker: who asks the question, as the API server knows them by the
//     credential the question carries (NewAsker).
//
// Security: a warm informer was listed with the cache server's own
// credentials, maybe long ago. Every informer a question reads, lent by the
// pool or run by its factory for it alone (a feed's), is authorized for the
// question's asker, by the API server, during that question, before
// anything of it is read or streamed: a metadata-only LIST of at most one
// object of the type, in the informer's namespace and with its selectors,
// made with the asker's credential (Asker.Check), begun as soon as the
// question asks for the informer. A warm informer's first list streamed to
// the question that started it waits for the check page by page; an
// informer of the factory's own does not list before it. A check refused
// fails the question with the API server's error, as a direct run's LIST
// fails, or, for a question over many types (WaitForSyncPartial), skips the
// type, which then reads as an empty informer, its event handlers never
// registered. --max-staleness skips the freshness proof, never the check.
// Checks are not kept across questions: the API server's own authorization
// cache is the most that is reused. What the pool holds is kept in memory
// only; Status reports counts, times and resourceVersions, never an object.
//
// Contract: a Pool and a Source are safe for concurrent use; the stores a
// question reads are shared with every question that borrows them, and are
// read-only (DeepCopyObject before changing anything). A question's factory
// is configured from one goroutine, as any informer.Factory is.
package pool
