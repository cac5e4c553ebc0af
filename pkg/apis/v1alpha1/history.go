package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds of the history documents.
const (
	// HistoryKind is the document of `kubectl idx history`.
	HistoryKind = "History"
	// BlameKind is the document of `kubectl idx blame`.
	BlameKind = "Blame"
)

// The sources a History fuses; each entry and each coverage names its own.
const (
	// SourceRevision is the revisions the controllers keep: a Deployment's
	// ReplicaSets, the ControllerRevisions of a StatefulSet or DaemonSet.
	SourceRevision = "revision"
	// SourceEvent is the Events of the objects, while they last.
	SourceEvent = "event"
	// SourceManagedFields is who last wrote which field, and when.
	SourceManagedFields = "managedFields"
	// SourceObject is what objects say of themselves: their creation, a
	// deletion under way.
	SourceObject = "object"
	// SourceCheckpoint is a `kubectl idx watch --checkpoint` file.
	SourceCheckpoint = "checkpoint"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// History is the answer of `kubectl idx history`: what changed under an
// object within a window of time, oldest first, each entry from a source
// that keeps it, who made the change where managedFields say, and the
// stretches of the window that no source covers (Gaps). A direct run is the
// state of the cluster when it asked: every source is read once, at To.
type History struct {
	TypeMeta `json:",inline"`
	// Context is the kubeconfig context the history was read from, in an
	// answer over several contexts (a v1 List of histories).
	Context string `json:"context,omitempty"`
	// Object is the object asked about; the history covers it, what it owns
	// and, with --uses, what its pod template uses.
	Object HistoryObject `json:"object"`
	// From and To are the window: To is when the question was asked, From
	// --since before it, or the object's creation.
	From metav1.Time `json:"from"`
	To   metav1.Time `json:"to"`
	// Entries are what changed, oldest first.
	Entries []HistoryEntry `json:"entries"`
	// Coverage says what each source could see, and over which stretch.
	Coverage []HistoryCoverage `json:"coverage"`
	// Gaps are the stretches of the window no source covers: what happened
	// then is not known.
	Gaps []HistoryGap `json:"gaps"`
	// Its warnings name the sources that could not be read: none when every
	// source could be.
	AnswerMeta `json:",inline"`
}

// HistoryObject names an object of a history.
type HistoryObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
}

// HistoryEntry is one change, or one thing that happened, to one object.
type HistoryEntry struct {
	// Time is when it happened, as its source keeps it (to the second for
	// the revisions, managedFields and objects, to the microsecond for some
	// events). With Until, it happened at some time between the two.
	Time metav1.Time `json:"time"`
	// Until is set when the source says only that it happened between Time
	// and Until: an object a checkpoint recorded that changed, or went, after
	// the checkpoint's last record.
	Until *metav1.Time `json:"until,omitempty"`
	// Object is the object that changed: the workload for a revision, whose
	// ReplicaSet or ControllerRevision Revision names.
	Object HistoryObject `json:"object"`
	// Source is where the entry comes from: revision, event, managedFields,
	// object or checkpoint.
	Source string `json:"source"`
	// Action says what happened: Rollout (a new template revision), Written
	// (a manager's last write), Created, Deleting (a deletion under way),
	// Changed and Deleted (seen through a checkpoint), or an Event's reason.
	Action string `json:"action"`
	// Revision is the template revision of a Rollout.
	Revision *HistoryRevision `json:"revision,omitempty"`
	// Changes are the fields that changed, where the source knows them.
	Changes []HistoryChange `json:"changes,omitempty"`
	// Managers are who made the change, as managedFields say: for a
	// Rollout, those who still own a field it set or whose last write was
	// at its time; for Written, the manager itself.
	Managers []FieldManager `json:"managers,omitempty"`
	// Event is the Event of an entry from that source.
	Event *HistoryEvent `json:"event,omitempty"`
	// ResourceVersion is the object's version, for an entry from a
	// checkpoint: the version it recorded.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Note says what the source cannot: why a change's writer is unknown,
	// why a time is approximate.
	Note string `json:"note,omitempty"`
}

// HistoryRevision is one revision of a workload's pod template.
type HistoryRevision struct {
	// Number is the revision: the deployment.kubernetes.io/revision
	// annotation of a ReplicaSet, a ControllerRevision's revision.
	Number int64 `json:"number"`
	// Object is the ReplicaSet or ControllerRevision that holds it.
	Object HistoryObject `json:"object"`
	// Previous is the revision its changes are counted from, 0 for the
	// first one kept.
	Previous int64 `json:"previous,omitempty"`
	// ChangeCause is the kubernetes.io/change-cause annotation, when set.
	ChangeCause string `json:"changeCause,omitempty"`
}

// HistoryChange is one field that changed.
type HistoryChange struct {
	// Path is the field as a kubectl JSONPath, list entries named by their
	// merge key: .spec.template.spec.containers[?(@.name=="web")].image.
	// `kubectl get -o jsonpath='{PATH}'` reads it.
	Path string `json:"path"`
	// Old and New are the values before and after, as JSON: Old is absent
	// for a field added or a value no source kept (OldUnknown), New for a
	// field removed.
	Old *runtime.RawExtension `json:"old,omitempty"`
	New *runtime.RawExtension `json:"new,omitempty"`
	// OldUnknown says no source kept the value before: a manager's last
	// write is known by the fields it owns now, not by what they held.
	OldUnknown bool `json:"oldUnknown,omitempty"`
	// Managers are who wrote the field, where managedFields say.
	Managers []FieldManager `json:"managers,omitempty"`
}

// FieldManager is one entry of an object's managedFields: a manager, how it
// wrote, and when it last changed something.
type FieldManager struct {
	Manager   string `json:"manager"`
	Operation string `json:"operation"`
	// Subresource is the subresource written through (status, scale), if
	// any.
	Subresource string `json:"subresource,omitempty"`
	// Time is when the manager last changed one of its fields.
	Time *metav1.Time `json:"time,omitempty"`
}

// HistoryEvent is the Event of an entry.
type HistoryEvent struct {
	// Type is Normal or Warning.
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Count is how often it happened, the last time at the entry's time.
	Count int32 `json:"count,omitempty"`
	// Reporter is the component that reported it (deployment-controller).
	Reporter string `json:"reporter,omitempty"`
}

// HistoryCoverage is what one source saw.
type HistoryCoverage struct {
	// Source is revision, event, managedFields, object or checkpoint.
	Source string `json:"source"`
	// From and To bound the stretch the source saw change by change, for the
	// sources that see stretches (revisions, events, a checkpoint); absent
	// for those that only keep the last of something (managedFields, the
	// objects) and for a source that could not be read.
	From *metav1.Time `json:"from,omitempty"`
	To   *metav1.Time `json:"to,omitempty"`
	// Description says what the source sees, and what it does not.
	Description string `json:"description"`
	// Unavailable says why the source could not be read, when it could not
	// (a type the user may not list).
	Unavailable string `json:"unavailable,omitempty"`
}

// HistoryGap is a stretch of the window no source covers.
type HistoryGap struct {
	From metav1.Time `json:"from"`
	To   metav1.Time `json:"to"`
	// Reason says why each source does not reach it.
	Reason string `json:"reason"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Blame is the answer of `kubectl idx blame`: an object and, for each of
// its fields a manager owns, who last wrote it and when, from
// managedFields. List entries are attributed by their merge keys.
type Blame struct {
	TypeMeta `json:",inline"`
	// Context is the kubeconfig context the object was read from, in an
	// answer over several contexts.
	Context string        `json:"context,omitempty"`
	Object  HistoryObject `json:"object"`
	// Managers are the object's managedFields entries, in its order.
	Managers []FieldManager `json:"managers"`
	// Fields are the fields some manager owns, in the order the object's
	// YAML shows them, each with the indices of its managers in Managers.
	Fields []BlameField `json:"fields"`
	// Content is the object as kubectl prints it, without managedFields.
	Content    runtime.RawExtension `json:"content"`
	AnswerMeta `json:",inline"`
}

// BlameField is one field of a Blame and who last wrote it.
type BlameField struct {
	// Path is the field as a kubectl JSONPath, list entries named by their
	// merge key (see HistoryChange).
	Path string `json:"path"`
	// Managers are indices into the Blame's Managers.
	Managers []int `json:"managers"`
}

// NewHistory returns an empty History of obj.
func NewHistory(obj HistoryObject) *History {
	return &History{TypeMeta: typeMetaOf(HistoryKind), Object: obj,
		Entries: []HistoryEntry{}, Coverage: []HistoryCoverage{}, Gaps: []HistoryGap{}, AnswerMeta: AnswerMeta{Warnings: []string{}}}
}

// NewBlame returns an empty Blame of obj.
func NewBlame(obj HistoryObject) *Blame {
	return &Blame{TypeMeta: typeMetaOf(BlameKind), Object: obj,
		Managers: []FieldManager{}, Fields: []BlameField{}, AnswerMeta: AnswerMeta{Warnings: []string{}}}
}

// HistoryObjectFor names obj, of kind gvk, for a History or a Blame.
func HistoryObjectFor(gvk schema.GroupVersionKind, obj metav1.Object) HistoryObject {
	return HistoryObject{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
}
