// Package printers prints the query engine's answers in kubectl's output
// formats, as kubectl prints them.
//
// Human output prints the API server's own table of every kind (as=Table),
// which the engine reads beside the objects and matches row by row to them
// (query.Listing's Tables, query.TableFetch): Tables.join puts the rows in
// the order the objects print, and a kind whose table could not be read
// prints NAME and AGE. The tables go to
// cli-runtime's TablePrinter; the tables kubectl-idx makes itself (trees,
// relation lists, several contexts' documents) to printOwnTable, laid out as
// kubectl lays out tables.
//
// Objects print as kubectl prints them: -o json and -o yaml as a v1 List
// written an object at a time (ListStream as the server sends them), -o name,
// jsonpath, templates and custom-columns through cli-runtime's printers. The
// answer documents of pkg/apis/v1alpha1 are API objects and print through
// cli-runtime's printers like any object; a GroupList's -o json is written a
// group at a time, byte for byte what the JSON printer would print.
//
// Feeds print an event at a time: EventPrinter for watch (a table's rows held
// until Flush and aligned with those printed before; a v1alpha1.WatchEvent
// per line in JSON), EventsWatchPrinter for events -w (kubectl events -w's
// table). Event listings print in kubectl events' table (PrintEventTable),
// relation graphs in -o dot and -o mermaid (PrintTreeGraph, PrintUsesGraph,
// PrintSelectionGraph), a diagnosis one line per cause (PrintDiagnosis), and
// `cache status` in a table of its own (PrintCacheStatus).
//
// One context of a plain run prints as kubectl does. An answer over several
// contexts (query.Answer's Context set) names each object's: a CONTEXT column
// first, a context/ prefix with -o name, a List per context (or a "context"
// field) in JSON and YAML, and the feed's events a "context" field.
//
// Objects passed in are shared cache objects and are never mutated: anything
// that must set a field (TypeMeta for the type-aware printers) works on a
// copy.
//
// The package reads the answer types (the documents of pkg/apis/v1alpha1,
// query.Answer, query.Listing, feed.Event) and imports nothing of
// pkg/informer. It keeps no state of its own: a cache process hands its
// answers' printers the Encodings it keeps (Options.Encodings), so that -o
// json does not encode and indent the same informer object again for every
// answer; a direct run hands none.
package printers
