// Package wire is what the informers' clients do with the bytes between the
// API server and a decoded object: the transports under pkg/informer's
// REST clients, the page pipeline over them, and the readers of formats the
// general decoders read too slowly or too faithfully. Each piece exists
// because it made a measured difference on pods as heavy as a real
// cluster's; each reads exactly what the general code would, or hands the
// input to it.
//
// Vocabulary:
//   - Answer: the body of one HTTP response of the API server. A protobuf
//     answer is the magic number "k8s\x00" and a runtime.Unknown envelope
//     holding the object's bytes; a JSON answer is the object.
//   - List transport (ListTransport): a transport wrapper for LIST page
//     requests. It reads a page's continue token from the answer's first
//     bytes (the server writes the ListMeta first) and hands it on while the
//     rest arrives; and it takes the managedFields of a protobuf page's items
//     out of the answer's bytes before the REST client decodes them, about
//     nine tenths of a realistic pod's metadata. The stripper walks the
//     protobuf wire format with google.golang.org/protobuf/encoding/protowire
//     and writes over the answer in place, item by item as they arrive
//     (readStripped), so that what is held is the stripped answer; bytes of
//     any other shape are served as they came.
//   - List reader (ReadList): a protobuf LIST answer of a built-in kind, or
//     of any kind's metadata (PartialObjectMetadataList), decoded item by
//     item as it arrives, each without its managedFields, where the REST
//     client reads the whole answer before it decodes any of it: the client
//     decodes while the server still encodes, and never holds the answer.
//   - Page ahead (PageAhead): the next page of a list is asked for as soon as
//     its token is known, so that the server produces it while the client
//     reads and decodes the one before; at most one page is in flight ahead
//     of the caller.
//   - Progress deadline (ProgressDeadline, WithRequest): --request-timeout
//     as a user means it, on every request but watches: an answer must start
//     within the timeout and never stop for a whole one, so a LIST that keeps
//     arriving is never cut off.
//   - Table reader (DecodeTable): the API server's meta.k8s.io/v1 Table read
//     by hand in the form the server writes it, anything else through the
//     general JSON decoder, so that both read every input alike.
//   - Keys reader (ReadListKeys): a protobuf LIST answer read as it arrives
//     for only each item's namespace, name and resourceVersion, the rest
//     skipped undecoded: what the freshness proof compares a warm store with
//     (pkg/pool). On a metadata-only page of realistic pods it reads about
//     ten times faster than the general decoder decodes.
//   - Embedded TypeMeta (EmbedsTypeMeta): the built-in kinds protobuf cannot
//     carry whole (an embedded object's apiVersion and kind), which the
//     informers read as JSON.
//
// The byte readers are fuzzed (FuzzStripManagedFields, FuzzReadStripped,
// FuzzDecodeTable, FuzzReadListKeys, FuzzReadList, `make fuzz`): whatever the bytes, they never panic, a stripped answer
// decodes to the answer's list without its items' managedFields, and the
// table reader reads every input as the general decoder does. The benchmarks (go test -bench
// 'DecodeTable|Strip|Pipeline|ReadList') read a page of 2,000 pods like
// testdata/pod-realistic.json, the bench's: light fixtures make every figure
// look better than a user sees.
//
// Contract: ListTransport and ProgressDeadline are safe for concurrent use
// by every request of a client; a PageAhead serves one list, its pages asked
// for one at a time; DecodeTable and EmbedsTypeMeta are pure. Nothing here
// imports pkg/informer, which builds on this package, nor keeps anything of
// an answer past its request.
package wire
