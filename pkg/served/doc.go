// Package served answers commands in the warm cache process (`kubectl idx
// cache serve`): pkg/warm carries a command's arguments, credential and
// output over the socket and never looks at them; this package decides whom
// the process answers and with what, and lends the commands it runs the
// process's warm informers.
//
// # Who is answered, with whose rights
//
// A Server serves one warm.Identity: the API server, how it is trusted, and
// the user the API server says the process's own credentials belong to.
// Serve asks that (warm.IdentityOf) before it answers anything, and stops
// unless it is the identity the starter found. A command it runs is a Run:
// before the command reads anything, Run.Verify asks the API server, with
// the asker's own credential (warm.Credential, handed over with the
// request), whether it is the server's user (once per credential: its user
// never changes, only whether it is still accepted), and Run.Bind lends the
// command the pool's informers through a Source whose every informer is
// authorized for the asker, with that credential, during the question
// (pkg/pool's Asker), --max-staleness or not. Another user is declined
// (ErrDecline): the command is answered directly, by that user's own
// process.
//
// # What the process does with its own credentials
//
// The pool lists and watches with the credentials the process was started
// with. Credentials an exec plugin or an auth provider gives are renewed by
// client-go after a 401, so the process bears 401s on them as long as a
// request after one succeeds; a token, certificate or password is never
// renewed, and the first 401 ends the process. Every recheckEvery it asks
// who its credentials belong to, and ends once the API server rejects them
// or names another user: what it read with them is dropped with it.
//
// # What is kept
//
// The pool's informers (pkg/pool's Pool, by its rules of freshness and
// dropping), the JSON encodings -o json answers printed
// (printers.Encodings, compressed with a dictionary of each kind's first
// encodings, which is kept as long as an encoding of its kind is, even
// after its own objects are gone), the requests and limits of the pods its
// groupings added up (index.PodResourcesCache, each of one pod object, held
// with it), and the identities of the credentials
// verified, by a hash of each: all in memory, none written anywhere. A Run's credential
// lives as long as its request.
//
// # Concurrency
//
// A Server answers many Runs at once; each Run belongs to one command and is
// used from that command's goroutines.
package served
