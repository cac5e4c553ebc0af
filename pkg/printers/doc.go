// Package printers turns objects read from informer caches into kubectl's output
// formats: client-side tables handed to cli-runtime's TablePrinter for human
// output, a streamed v1 List for -o json and -o yaml, and cli-runtime's own
// printers (name, jsonpath, templates, custom-columns) for the rest.
//
// Objects passed in are shared cache objects and are never mutated: anything that
// must set a field (TypeMeta for the type-aware printers) works on a deep copy.
package printers
