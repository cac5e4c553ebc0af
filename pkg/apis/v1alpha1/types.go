package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// GroupMode is what a GroupList groups by.
type GroupMode string

// The grouping modes: by top-level controller, by node, by a label's value,
// by namespace, and by a JSONPath expression's values.
const (
	GroupByOwner     GroupMode = "owner"
	GroupByNode      GroupMode = "node"
	GroupByLabel     GroupMode = "label"
	GroupByNamespace GroupMode = "namespace"
	GroupByJSONPath  GroupMode = "jsonpath"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// GroupList is the answer to a group-by query.
type GroupList struct {
	TypeMeta `json:",inline"`
	// GroupBy is owner, node, label, namespace or jsonpath.
	GroupBy GroupMode `json:"groupBy"`
	// Expression is the label key or JSONPath grouped by, if any.
	Expression string `json:"expression,omitempty"`
	// Groups in display order; each holds its members.
	Groups []Group `json:"groups"`
	// Its warnings name the types or owners that could not be read.
	AnswerMeta `json:",inline"`
}

// Group is one group of a GroupList.
type Group struct {
	// Name is how the group is shown: "Deployment/web", "node-1", "web", "<none>".
	Name string `json:"name"`
	// Key identifies the group; which fields are set depends on GroupBy.
	Key GroupKey `json:"key"`
	// Summary holds counts and, for nodes, capacity figures.
	Summary GroupSummary `json:"summary"`
	// Members are the objects of the group, one Members per resource type, in
	// the order the types were asked for. In JSON they are flattened to the
	// group's "items", each the object as kubectl prints it.
	Members []Members `json:"-"`
	// Contexts, in an answer over several kubeconfig contexts, are the
	// contexts with members in the group, each with its own summary. In JSON
	// the group then has "contexts" instead of "items": each context's
	// summary and its members as "items".
	Contexts []GroupContext `json:"-"`
}

// GroupContext is one context's part of a group, in an answer over several
// contexts.
type GroupContext struct {
	// Context is the kubeconfig context's name.
	Context string `json:"context"`
	// Summary counts the context's members of the group.
	Summary GroupSummary `json:"summary"`
}

// Members are the objects of one resource type in a group, in print order.
type Members struct {
	// GVK is the kind the objects are printed as (it fills apiVersion and kind).
	GVK schema.GroupVersionKind
	// Namespaced is the scope of the resource.
	Namespaced bool
	// Objects are read-only cache objects.
	Objects []runtime.Object
	// Context is the kubeconfig context the objects were read from, in an
	// answer over several contexts.
	Context string
}

// GroupKey identifies a group. None marks the group of objects without a key.
type GroupKey struct {
	None bool `json:"none,omitempty"`
	// Context is the kubeconfig context of an owner group, in an answer over
	// several contexts: owners of different clusters are different groups.
	Context string `json:"context,omitempty"`
	// Owner groups: the top-level owner; Dangling when it does not exist,
	// Unknown when owners above could not be read, with the Reason.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	UID        string `json:"uid,omitempty"`
	Dangling   bool   `json:"dangling,omitempty"`
	Unknown    bool   `json:"unknown,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Node groups.
	Node string `json:"node,omitempty"`
	// Label and JSONPath groups: the value (Namespace groups use Namespace).
	Value *string `json:"value,omitempty"`
}

// GroupSummary counts a group's members.
type GroupSummary struct {
	// Members counts every object of the group; Kinds counts them per kind.
	Members int            `json:"members"`
	Kinds   map[string]int `json:"kinds"`
	// Pods is set when the group has pods.
	Pods *PodSummary `json:"pods,omitempty"`
	// Node is set for the groups of --by-node.
	Node *NodeSummary `json:"node,omitempty"`
	// Resources adds up what the group's pods request and are limited to. It
	// is set, like Pods, when the group has pods read in full.
	Resources *ResourceSummary `json:"resources,omitempty"`
}

// ResourceSummary adds up the requests and limits of a group's pods, each pod
// counted as the scheduler counts it: per resource, the larger of the app
// containers plus the sidecars (restartable init containers) and of each other
// init container plus the sidecars started before it, plus spec.overhead. A
// container without a limit for a resource adds nothing to that limit.
type ResourceSummary struct {
	// Pods counts the pods summed: those not Succeeded or Failed, which hold
	// no capacity (every pod with --by-node --include-completed).
	Pods int `json:"pods"`
	// Requests and Limits are the sums.
	Requests Resources `json:"requests"`
	Limits   Resources `json:"limits"`
}

// PodSummary counts pods by readiness and phase.
type PodSummary struct {
	Total     int `json:"total"`
	Ready     int `json:"ready"`
	Running   int `json:"running"`
	Pending   int `json:"pending"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Unknown   int `json:"unknown"`
}

// NodeSummary describes a node and the requests of its pods.
type NodeSummary struct {
	// Exists is false for a node pods are bound to that is not in the cluster.
	Exists        bool     `json:"exists"`
	Status        string   `json:"status"`
	Ready         bool     `json:"ready"`
	Unschedulable bool     `json:"unschedulable"`
	Roles         []string `json:"roles"`
	// Requests sum the pods counted (not Succeeded or Failed, unless asked),
	// as the group's summary.resources.requests does.
	Requests Resources `json:"requests"`
	// Limits sum the same pods' limits (summary.resources.limits).
	Limits Resources `json:"limits"`
	// Allocatable is the node's, every resource it reports.
	Allocatable Resources `json:"allocatable"`
	// CPUPercent and MemoryPercent are requests over allocatable, rounded down.
	CPUPercent    int64 `json:"cpuPercent"`
	MemoryPercent int64 `json:"memoryPercent"`
}

// Resources holds CPU and memory as quantities and as plain numbers for jq,
// and every other resource as a quantity. In JSON the other resources sit
// beside cpu and memory under their own names, as in a pod's resources:
//
//	{"cpu": "1500m", "memory": "3Gi", "cpuMillis": 1500, "memoryBytes": 3221225472,
//	 "ephemeral-storage": "10Gi", "nvidia.com/gpu": "2"}
//
// Resource names other than cpu and memory are either qualified by a domain or
// kebab-case, so they never meet the camelCase number fields.
type Resources struct {
	CPU         string `json:"cpu"`
	Memory      string `json:"memory"`
	CPUMillis   int64  `json:"cpuMillis"`
	MemoryBytes int64  `json:"memoryBytes"`
	// Other holds every other resource with a non-zero quantity, by name:
	// ephemeral-storage, hugepages-2Mi, nvidia.com/gpu, pods (allocatable).
	Other map[string]string `json:"-"`
}

// resourcesFields is Resources without its JSON methods.
type resourcesFields Resources

// MarshalJSON writes cpu, memory and their numbers, then the other resources
// in name order.
func (r Resources) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(resourcesFields(r))
	if err != nil || len(r.Other) == 0 {
		return b, err
	}
	names := make([]string, 0, len(r.Other))
	for name := range r.Other {
		names = append(names, name)
	}
	sort.Strings(names)
	buf := bytes.NewBuffer(b[:len(b)-1])
	for _, name := range names {
		k, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(r.Other[name])
		if err != nil {
			return nil, err
		}
		buf.WriteByte(',')
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Resources) UnmarshalJSON(data []byte) error {
	var f resourcesFields
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	f.Other = nil
	for name, raw := range all {
		switch name {
		case "cpu", "memory", "cpuMillis", "memoryBytes":
			continue
		}
		var q string
		if err := json.Unmarshal(raw, &q); err != nil {
			return fmt.Errorf("resource %q: %w", name, err)
		}
		if f.Other == nil {
			f.Other = map[string]string{}
		}
		f.Other[name] = q
	}
	*r = Resources(f)
	return nil
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Tree is the answer of tree (Kind Tree) and owners (Kind OwnerTree).
type Tree struct {
	TypeMeta `json:",inline"`
	// Context is the kubeconfig context the tree was read from, in an answer
	// over several contexts (a v1 List of trees).
	Context    string    `json:"context,omitempty"`
	Root       *TreeItem `json:"root"`
	AnswerMeta `json:",inline"`
}

// TreeItem is one object of a Tree.
type TreeItem struct {
	APIVersion        string       `json:"apiVersion"`
	Kind              string       `json:"kind"`
	Namespace         string       `json:"namespace,omitempty"`
	Name              string       `json:"name"`
	UID               string       `json:"uid,omitempty"`
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
	// Ready and Status are a short readiness ("2/3") and state ("Running",
	// "Available"); empty when unknown or not read.
	Ready  string `json:"ready,omitempty"`
	Status string `json:"status,omitempty"`
	// Controller is true for an owner that is its dependent's controller.
	Controller bool `json:"controller,omitempty"`
	// Missing marks an owner that does not exist; Unknown one whose kind could
	// not be read; Cycle an object already shown above on the same branch.
	Missing bool `json:"missing,omitempty"`
	Unknown bool `json:"unknown,omitempty"`
	Cycle   bool `json:"cycle,omitempty"`
	// Children are the objects this one owns (tree); Owners the objects that
	// own it (owners).
	Children []*TreeItem `json:"children,omitempty"`
	Owners   []*TreeItem `json:"owners,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RelationList is the answer of orphans (Kind OrphanList) and uses (Kind
// UsesList): objects named by reference, with what relates them.
type RelationList struct {
	TypeMeta `json:",inline"`
	// Context is the kubeconfig context the list was read from, in an answer
	// over several contexts (a v1 List of lists).
	Context string `json:"context,omitempty"`
	// Subject is the object a uses query was about.
	Subject *RelationItem `json:"subject,omitempty"`
	// Direction is "users" (what uses Subject) or "uses" (what Subject uses).
	Direction  string         `json:"direction,omitempty"`
	Items      []RelationItem `json:"items"`
	AnswerMeta `json:",inline"`
}

// RelationItem is one object of a RelationList.
type RelationItem struct {
	APIVersion        string       `json:"apiVersion,omitempty"`
	Kind              string       `json:"kind"`
	Namespace         string       `json:"namespace,omitempty"`
	Name              string       `json:"name"`
	UID               string       `json:"uid,omitempty"`
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
	// MissingOwners are ownerReferences to owners that do not exist;
	// OrphaningOwners those to owners being deleted with orphan propagation.
	MissingOwners   []OwnerReference `json:"missingOwners,omitempty"`
	OrphaningOwners []OwnerReference `json:"orphaningOwners,omitempty"`
	// Via lists where a pod spec refers to the object (uses).
	Via      []string `json:"via,omitempty"`
	Optional bool     `json:"optional,omitempty"`
	// Exists is set for what a pod uses: false when the referenced object is
	// missing, absent when it could not be checked.
	Exists *bool `json:"exists,omitempty"`
}

// OwnerReference names an owner; Namespace is the dependent's for a
// namespaced owner kind.
type OwnerReference struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace,omitempty"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
}

// ItemFor names obj, of kind gvk, for a Tree.
func ItemFor(gvk schema.GroupVersionKind, obj metav1.Object) *TreeItem {
	t := &TreeItem{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
		UID:        string(obj.GetUID()),
	}
	if ts := obj.GetCreationTimestamp(); !ts.IsZero() {
		t.CreationTimestamp = &ts
	}
	return t
}

// RelationItemFor names obj, of kind gvk, for a RelationList.
func RelationItemFor(gvk schema.GroupVersionKind, obj metav1.Object) RelationItem {
	t := ItemFor(gvk, obj)
	return RelationItem{APIVersion: t.APIVersion, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, UID: t.UID, CreationTimestamp: t.CreationTimestamp}
}
