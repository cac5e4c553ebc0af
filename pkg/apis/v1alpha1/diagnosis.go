package v1alpha1

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DiagnosisStatus is what a diagnosis found of its subjects.
type DiagnosisStatus string

// The statuses of a diagnosis, from best to worst for a script: nothing
// wrong; causes named; something wrong that no evidence names.
const (
	// DiagnosisHealthy: every subject is as its spec asks and no cause was
	// found.
	DiagnosisHealthy DiagnosisStatus = "Healthy"
	// DiagnosisUnhealthy: at least one cause was found.
	DiagnosisUnhealthy DiagnosisStatus = "Unhealthy"
	// DiagnosisUnknown: a subject is not as its spec asks, yet no evidence
	// read names a cause; Checked says what was looked at.
	DiagnosisUnknown DiagnosisStatus = "Unknown"
)

// Severity is how much a cause matters.
type Severity string

// The severities of a cause, worst first.
const (
	// SeverityError: the cause keeps the subject from running or serving as
	// its spec asks (pods not created, not scheduled, not started, not
	// ready).
	SeverityError Severity = "Error"
	// SeverityWarning: the subject runs, but something stands in the way of
	// what comes next (a drain, the next rollout, the next scheduled Job).
	SeverityWarning Severity = "Warning"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Diagnosis is the answer of `kubectl idx why`: why an object, or every
// top-level owner of a namespace, is not serving, walked down the owner
// subtree to the causes, each with the evidence read.
type Diagnosis struct {
	TypeMeta `json:",inline"`
	// Context is the kubeconfig context the diagnosis was made in, in an
	// answer over several contexts (a v1 List of diagnoses).
	Context string `json:"context,omitempty"`
	// Subject is the object asked about; absent when every top-level owner
	// of a namespace (Namespace) or of every namespace was diagnosed.
	Subject *ObjectReference `json:"subject,omitempty"`
	// Namespace is the namespace whose top-level owners were diagnosed;
	// absent for one object and for every namespace (-A).
	Namespace string `json:"namespace,omitempty"`
	// Status is the worst of the subjects' statuses.
	Status DiagnosisStatus `json:"status"`
	// Causes are what is wrong, worst first: by severity, then creation,
	// scheduling, references, running, nodes, jobs, rollouts and serving.
	Causes []Cause `json:"causes"`
	// Subjects are the objects diagnosed, each with its own status: the one
	// asked about, or every top-level owner.
	Subjects []SubjectStatus `json:"subjects"`
	// Checked counts what was looked at, by kind: the objects of the
	// subtrees, the Warning events about them, the nodes, Services,
	// PodDisruptionBudgets and references read. An Unknown diagnosis says
	// what its verdict rests on.
	Checked []CheckedKind `json:"checked"`
	// Unseen are the types that could not be read (kubectl's names:
	// secrets, events, nodes): what the diagnosis could not see. Their
	// warnings say why.
	Unseen     []string `json:"unseen,omitempty"`
	AnswerMeta `json:",inline"`
}

// ObjectReference names an object of a diagnosis.
type ObjectReference struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
	// Missing marks an object that does not exist: a ConfigMap a pod
	// template names, a ServiceAccount a pod is created with.
	Missing bool `json:"missing,omitempty"`
}

// Cause is one thing wrong, the object to fix and the evidence that says so.
type Cause struct {
	// Reason is the Kubernetes reason where one exists (the event's or the
	// condition's: FailedScheduling, FailedCreate, ImagePullBackOff,
	// CrashLoopBackOff, ProgressDeadlineExceeded, BackoffLimitExceeded, ...),
	// else one of kubectl-idx's own (MissingReference, RolloutStuck,
	// NoReadyPods, NodeNotSchedulable, Suspended; README.md lists them).
	Reason string `json:"reason"`
	// Severity is Error or Warning.
	Severity Severity `json:"severity"`
	// Object is the culprit: the object whose spec or state is the cause
	// (a ResourceQuota, a Node and its taint, a missing ConfigMap, a pod
	// whose container cannot start).
	Object ObjectReference `json:"object"`
	// Message says what is wrong in one sentence.
	Message string `json:"message"`
	// Subject is the top-level owner the cause was found under, in a
	// diagnosis of every top-level owner.
	Subject *ObjectReference `json:"subject,omitempty"`
	// Evidence is what was read that says so, most telling first.
	Evidence []Evidence `json:"evidence"`
}

// Evidence is one thing read: an event, a condition or a field of an
// object, and its value.
type Evidence struct {
	// Object is the object the event is about, or whose condition or field
	// was read.
	Object ObjectReference `json:"object"`
	// Event is the reason of an event about Object.
	Event string `json:"event,omitempty"`
	// Condition is the type of a condition of Object's status.
	Condition string `json:"condition,omitempty"`
	// Field is the path of a field of Object, as kubectl explain names it
	// (spec.template.spec.nodeSelector), a list's entry by its name
	// (status.containerStatuses[app].state.waiting.reason).
	Field string `json:"field,omitempty"`
	// Value is the event's message, the condition's status or the field's
	// value.
	Value string `json:"value"`
	// Reason and Message are a condition's.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Count and LastSeen are an event's: how often and when it last
	// happened.
	Count    int32        `json:"count,omitempty"`
	LastSeen *metav1.Time `json:"lastSeen,omitempty"`
}

// SubjectStatus is one subject diagnosed and its status.
type SubjectStatus struct {
	Object ObjectReference `json:"object"`
	Status DiagnosisStatus `json:"status"`
	// Summary says in a few words what its status rests on: "3/3
	// available", "Running, 0/1 ready", "last Job tick-29 failed".
	Summary string `json:"summary"`
}

// CheckedKind counts the objects of one kind a diagnosis looked at.
type CheckedKind struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// DiagnosisKind is the document of `kubectl idx why`.
const DiagnosisKind = "Diagnosis"

// NewDiagnosis returns an empty Diagnosis.
func NewDiagnosis() *Diagnosis {
	return &Diagnosis{TypeMeta: typeMetaOf(DiagnosisKind)}
}

// MarshalJSON writes the diagnosis with its causes, subjects, checked
// counts and warnings as arrays, and each cause's evidence as one.
func (d Diagnosis) MarshalJSON() ([]byte, error) {
	type fields Diagnosis
	f := fields(d)
	f.Causes, f.Subjects, f.Checked, f.Warnings = orEmpty(f.Causes), orEmpty(f.Subjects), orEmpty(f.Checked), orEmpty(f.Warnings)
	return json.Marshal(f)
}

// MarshalJSON writes the cause with its evidence as an array.
func (c Cause) MarshalJSON() ([]byte, error) {
	type fields Cause
	f := fields(c)
	f.Evidence = orEmpty(f.Evidence)
	return json.Marshal(f)
}

// Ref returns a reference to obj, of kind gvk.
func Ref(gvk schema.GroupVersionKind, obj metav1.Object) ObjectReference {
	return ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
}

// String names the referenced object as kubectl's messages do:
// Kind/name, with the group for kinds outside the core, apps and batch
// groups.
func (r ObjectReference) String() string {
	gv, _ := schema.ParseGroupVersion(r.APIVersion)
	kind := r.Kind
	if gv.Group != "" && gv.Group != "apps" && gv.Group != "batch" {
		kind += "." + gv.Group
	}
	return kind + "/" + r.Name
}

// String words one piece of evidence in a line: the object, then what was
// read of it and its value.
//
//	Pod/web-1-a condition PodScheduled=False Unschedulable: 0/3 nodes are available: ...
//	ReplicaSet/web-1 event FailedCreate (x5): Error creating: ...
//	Deployment/web spec.template.spec.nodeSelector=disktype=nvme
func (e Evidence) String() string {
	switch {
	case e.Event != "":
		count := ""
		if e.Count > 1 {
			count = fmt.Sprintf(" (x%d)", e.Count)
		}
		return fmt.Sprintf("%s event %s%s: %s", e.Object, e.Event, count, e.Value)
	case e.Condition != "":
		s := fmt.Sprintf("%s condition %s=%s", e.Object, e.Condition, e.Value)
		if e.Reason != "" {
			s += " " + e.Reason
		}
		if e.Message != "" {
			s += ": " + e.Message
		}
		return s
	}
	s := fmt.Sprintf("%s %s=%s", e.Object, e.Field, e.Value)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}
