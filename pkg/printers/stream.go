package printers

import (
	"bufio"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// Streams reports whether a listing in format can be printed while it is
// listed, a batch of objects at a time (ListStream): -o json, -o yaml and -o
// name print each object on its own. Tables align columns over every row,
// and JSONPath and templates read the whole List.
func Streams(format string) bool {
	return format == "json" || format == "yaml" || format == "name"
}

// ListStream prints a listing of one kind whose objects arrive a batch at a
// time, byte for byte as Print prints the whole listing. Each batch is
// written out before Write returns.
type ListStream struct {
	w        *bufio.Writer
	format   string
	delegate printers.ResourcePrinter
	gvk      schema.GroupVersionKind
	n        int
	// omitEmpty leaves out the List of no object (OmitEmpty).
	omitEmpty bool
	// Encodings, when set, keeps the objects' JSON encodings for the next
	// answer that prints them (the cache process's).
	Encodings *Encodings
}

// NewListStream returns a ListStream of objects of kind gvk in format (one
// for which Streams is true); delegate is the printer cli-runtime's flags
// chose, which prints names.
func NewListStream(w io.Writer, format string, delegate printers.ResourcePrinter, gvk schema.GroupVersionKind) *ListStream {
	return &ListStream{w: bufio.NewWriterSize(w, 256<<10), format: format, delegate: delegate, gvk: gvk}
}

// Write prints objs after those printed so far.
func (s *ListStream) Write(objs []runtime.Object) error {
	if len(objs) == 0 {
		return nil
	}
	switch s.format {
	case "json":
		if s.n == 0 {
			if _, err := s.w.WriteString(jsonListHead); err != nil {
				return err
			}
		}
		err := writeJSONItems(s.w, len(objs), s.n, "        ", s.Encodings, func(i int) (runtime.Object, schema.GroupVersionKind) {
			return objs[i], s.gvk
		})
		if err != nil {
			return err
		}
	case "yaml":
		if s.n == 0 {
			if _, err := s.w.WriteString(yamlListHead(true)); err != nil {
				return err
			}
		}
		for _, o := range objs {
			if err := writeYAMLItem(s.w, o, s.gvk); err != nil {
				return err
			}
		}
	default:
		for _, o := range objs {
			if err := s.delegate.PrintObj(readOnlyPrintable(o, s.gvk), s.w); err != nil {
				return err
			}
		}
	}
	s.n += len(objs)
	return s.w.Flush()
}

// OmitEmpty makes Close print nothing when no object was printed, rather
// than an empty List: kubectl get --ignore-not-found prints nothing when it
// finds nothing.
func (s *ListStream) OmitEmpty() { s.omitEmpty = true }

// Close ends the listing, with warnings and asOf in the List as
// Options.Warnings and Options.AsOf, and returns the number of objects
// printed.
func (s *ListStream) Close(warnings []string, asOf []v1alpha1.AsOf) (int, error) {
	if s.n == 0 && s.omitEmpty {
		return 0, nil
	}
	fields := listFields(warnings, asOf)
	switch s.format {
	case "json":
		if s.n == 0 {
			if _, err := s.w.WriteString(jsonListHead); err != nil {
				return 0, err
			}
		}
		if err := writeJSONListTail(s.w, s.n > 0, fields, true); err != nil {
			return 0, err
		}
	case "yaml":
		if s.n == 0 {
			if _, err := s.w.WriteString(yamlListHead(false)); err != nil {
				return 0, err
			}
		}
		if err := writeYAMLListTail(s.w, fields); err != nil {
			return 0, err
		}
	}
	return s.n, s.w.Flush()
}
