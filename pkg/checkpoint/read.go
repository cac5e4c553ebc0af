package checkpoint

import (
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Recording is a checkpoint as `kubectl idx history --from-checkpoint` reads
// it: what the feed that wrote it recorded, read without taking its lock or
// writing anything, so that a feed still running keeps it. Every record is
// appended in one write and a rewrite replaces the file by a rename, so a
// read sees whole records, but for a last one being appended, which is
// passed over as Open passes over a record cut short.
type Recording struct {
	// f holds what the file holds; it has no descriptor and is never
	// written.
	f *File
}

// Recorded is one stream of a checkpoint as history folds it in.
type Recorded struct {
	Stream Stream
	// Recorded is when the stream's last record was written, by the
	// writer's clock; zero when the file does not say (a kubectl idx that
	// did not stamp its records wrote it).
	Recorded time.Time
	// Clean is set when the feed stopped cleanly; otherwise it runs, or was
	// killed, after Recorded.
	Clean bool
	// Sources are the stream's types, in its order.
	Sources []RecordedSource
}

// RecordedSource is what a stream recorded of one type.
type RecordedSource struct {
	// Resource is the type as kubectl names it: pods, deployments.apps.
	Resource string
	// ResourceVersion is the position: every change up to it was printed.
	ResourceVersion string
	// Since is since when every change of the type was printed one by one,
	// up to Recorded: the feed's first position or its last relist, which
	// printed what came before folded. Zero when the file does not say.
	Since time.Time
	// Relisting is set when a relist was being printed at the last record.
	Relisting bool
	// Objects are the objects the feed knew at its last record, by name.
	Objects []RecordedObject
}

// RecordedObject is one object a feed knew: its version, never its content.
type RecordedObject struct {
	Namespace, Name string
	UID             types.UID
	ResourceVersion string
	// At is when the record that put the object in this version was
	// written: about when the feed printed its last change, or for an
	// object of the first list, when the feed started. Zero when unknown.
	At time.Time
	// Refs are the ownerReferences --owner followed from it, nil without
	// --owner.
	Refs []metav1.OwnerReference
	// Printed is set when the feed printed the object in this version: an
	// object --owner only follows, out of its scope, is not.
	Printed bool
}

// Read reads the checkpoint at path for history: a regular file of the
// user's own, as Open takes, but opened for reading only, never created,
// locked or rewritten. A damaged file, or one of an unknown format, is the
// error Open gives.
func Read(path string) (*Recording, error) {
	fd, err := processHost().openRead(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	f := &File{path: path, file: fd}
	if err := f.read(); err != nil {
		return nil, err
	}
	if f.fresh {
		return nil, fmt.Errorf("checkpoint %s is empty: no feed has recorded in it", path)
	}
	return &Recording{f: f}, nil
}

// Path is the checkpoint's path.
func (r *Recording) Path() string { return r.f.path }

// Warnings say what reading the file found: a last record cut short.
func (r *Recording) Warnings() []string {
	if r.f.cut {
		return []string{fmt.Sprintf("checkpoint %s: its last record was cut short, as when a feed is writing it or was killed while writing it; read up to the record before", r.f.path)}
	}
	return nil
}

// Contexts are the contexts of the checkpoint's streams, in its order.
func (r *Recording) Contexts() []string {
	out := make([]string, len(r.f.streams))
	for i, m := range r.f.streams {
		out[i] = m.stream.Context
	}
	return out
}

// For returns the stream of context, after checking that the checkpoint was
// written for cluster (nil leaves the check out) by `kubectl idx watch` over
// namespace ("" for all of them) or all namespaces, watching at least one
// of resources. What differs is refused as Resume refuses another feed or
// another cluster, in the same words: the cluster first. A stream recorded
// without its cluster (format version 1) is returned with a warning saying
// it was not checked.
func (r *Recording) For(context string, cluster *Cluster, namespace string, resources []string) (*Recorded, []string, error) {
	f := r.f
	var m *streamModel
	for _, s := range f.streams {
		if s.stream.Context == context {
			m = s
		}
	}
	if m == nil {
		return nil, nil, f.mismatch("the contexts", contextList(r.Contexts()), contextName(context))
	}
	var warnings []string
	if m.stream.Cluster == nil {
		warnings = append(warnings, fmt.Sprintf("checkpoint %s: %s was recorded without its cluster, by a kubectl idx that wrote format version 1: read without checking that it is the same cluster", f.path, streamName(context)))
	} else if err := f.sameCluster(context, m.stream.Cluster, cluster); err != nil {
		return nil, nil, err
	}
	in := ""
	if context != "" {
		in = " in context " + contextName(context)
	}
	switch s := m.stream; {
	case s.Command != "watch":
		return nil, nil, f.mismatch("the command"+in, "kubectl idx "+shown(s.Command), "kubectl idx watch")
	case s.Namespace != "" && s.Namespace != namespace:
		return nil, nil, f.mismatch("the namespace"+in, namespaceName(s.Namespace), namespaceName(namespace))
	case !slices.ContainsFunc(s.Resources, func(res string) bool { return slices.Contains(resources, res) }):
		return nil, nil, f.mismatch("the types"+in, shownList(s.Resources), shownList(resources))
	}
	out := &Recorded{Stream: m.stream, Recorded: m.recorded, Clean: f.clean}
	for _, res := range m.stream.Resources {
		sm := m.sources[res]
		src := RecordedSource{Resource: res, ResourceVersion: sm.resourceVersion, Since: sm.since, Relisting: sm.relisting != nil}
		for _, k := range slices.Sorted(maps.Keys(sm.objects)) {
			o := sm.objects[k]
			ro := RecordedObject{Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion, At: o.At.Time, Printed: !o.Unprinted}
			if o.Refs != nil {
				ro.Refs = *o.Refs
			}
			src.Objects = append(src.Objects, ro)
		}
		out.Sources = append(out.Sources, src)
	}
	return out, warnings, nil
}
