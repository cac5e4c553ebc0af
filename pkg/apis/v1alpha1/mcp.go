package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// The answers of `kubectl idx mcp`'s tools: what an agent reads in a tool
// call's structuredContent. They are small on purpose: objects are projected
// (ObjectView), every answer is paged and byte-capped (Page), and what a
// cluster holds as text (names aside) appears only in their fields, never in
// the tool's text rendering. Their JSON schemas are inferred from these types
// by the MCP SDK, so they hold plain strings, numbers and maps: no
// metav1.Time (a string in JSON, a struct to a schema inferrer).

// Kinds of the MCP answers.
const (
	// QueryAnswerKind answers the query tool: objects or groups.
	QueryAnswerKind = "QueryAnswer"
	// RelationsAnswerKind answers the relations tool.
	RelationsAnswerKind = "RelationsAnswer"
	// EventsAnswerKind answers the events tool.
	EventsAnswerKind = "EventsAnswer"
	// ChangesAnswerKind answers the changes tool.
	ChangesAnswerKind = "ChangesAnswer"
	// ContextsAnswerKind answers the contexts tool.
	ContextsAnswerKind = "ContextsAnswer"
)

// Page is what every MCP answer says about itself: how much of the answer it
// holds, where the rest is, what it is current as of and what it may miss.
type Page struct {
	// Count is how many items this answer holds; Total how many the whole
	// answer has (every page of it).
	Count int `json:"count"`
	Total int `json:"total"`
	// Truncated is true when items were left out, by the limit or the byte
	// cap: NextCursor then gives the rest.
	Truncated bool `json:"truncated"`
	// NextCursor, passed back as cursor with the same arguments, continues
	// the answer (or, for changes, the feed).
	NextCursor string `json:"nextCursor,omitempty"`
	// AsOf says, per type read, what the answer is current as of.
	AsOf []MCPAsOf `json:"asOf"`
	// Warnings say what the answer may be missing; empty means complete.
	Warnings []string `json:"warnings"`
}

// GetPage returns the page, for code that pages every kind of MCP answer.
func (p *Page) GetPage() *Page { return p }

// MCPAsOf is what the objects of one type in an MCP answer are current as of.
type MCPAsOf struct {
	// Context is the kubeconfig context, when the server answers several.
	Context  string `json:"context,omitempty"`
	Resource string `json:"resource"`
	// Namespace is the informer's; empty for every namespace.
	Namespace       string `json:"namespace,omitempty"`
	ResourceVersion string `json:"resourceVersion"`
	// Time is when ResourceVersion was the server's latest (RFC 3339); the
	// answer holds every write acknowledged before it.
	Time string `json:"time"`
	// AgeSeconds is how long before the answer that was.
	AgeSeconds float64 `json:"ageSeconds"`
}

// ObjectView is one object as an MCP answer shows it: who it is, a short
// status, its top-level owner and its node, and the projections asked for.
type ObjectView struct {
	// Context is the kubeconfig context, when the server answers several.
	Context    string `json:"context,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Ready and Status are the READY and STATUS a tree shows ("2/3",
	// "Running", "Available"), empty when the kind has none.
	Ready  string `json:"ready,omitempty"`
	Status string `json:"status,omitempty"`
	// Owner is the top-level controller as Kind/name, "<none>" when no
	// controller owns the object; empty when not read.
	Owner string `json:"owner,omitempty"`
	// Node is a pod's node.
	Node string `json:"node,omitempty"`
	// Fields are the JSONPath projections asked for, by expression: one
	// value, or a list when the expression finds several. Redacted and cut
	// as every MCP answer is.
	Fields map[string]any `json:"fields,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// QueryAnswer answers the query tool. count and total count objects; a
// grouped answer pages over its groups' members in order, and a group whose
// members go on in the next page says so (More).
type QueryAnswer struct {
	TypeMeta `json:",inline"`
	Page     `json:",inline"`
	// GroupBy is owner, node, namespace or label, when grouped.
	GroupBy string `json:"groupBy,omitempty"`
	// Objects, when not grouped.
	Objects []ObjectView `json:"objects,omitempty"`
	// Groups, when grouped: those with members in this page.
	Groups []GroupView `json:"groups,omitempty"`
	// GroupsTotal is how many groups the whole answer has.
	GroupsTotal int `json:"groupsTotal,omitempty"`
}

// GroupView is one group of a grouped query, as the GroupList of kubectl idx
// --by-* -o json has it (name, key, summary), with its members projected.
type GroupView struct {
	Name string `json:"name"`
	// Key and Summary are the GroupList's, as -o json prints them.
	Key     map[string]any `json:"key"`
	Summary map[string]any `json:"summary"`
	// MemberCount is how many members the group has in all.
	MemberCount int `json:"memberCount"`
	// Members are those of this page.
	Members []ObjectView `json:"members"`
	// More is true when the group's members go on in the next page.
	More bool `json:"more,omitempty"`
}

// RelatedObject is one object of a relations answer.
type RelatedObject struct {
	ObjectView `json:",inline"`
	// Path names the objects from the subject to this one, each as
	// Kind/name: down the owner tree, up the owner chain, the selector or the
	// object that uses.
	Path []string `json:"path"`
	// Via says how a pod (template) refers to what it uses.
	Via []string `json:"via,omitempty"`
	// Optional is a reference the pod starts without.
	Optional bool `json:"optional,omitempty"`
	// Exists is false for a used object that does not exist.
	Exists *bool `json:"exists,omitempty"`
	// Controller marks an owner that is its dependent's controller;
	// Missing an owner that does not exist, Unknown one whose kind cannot be
	// read, Cycle an object already on the path.
	Controller bool `json:"controller,omitempty"`
	Missing    bool `json:"missing,omitempty"`
	Unknown    bool `json:"unknown,omitempty"`
	Cycle      bool `json:"cycle,omitempty"`
	// MissingOwners and OrphaningOwners name, for an orphan, the owners it
	// lost (Kind/name).
	MissingOwners   []string `json:"missingOwners,omitempty"`
	OrphaningOwners []string `json:"orphaningOwners,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RelationsAnswer answers the relations tool.
type RelationsAnswer struct {
	TypeMeta `json:",inline"`
	Page     `json:",inline"`
	// Relation is tree, owners, uses, selects, selectedBy or orphans.
	Relation string `json:"relation"`
	// Subject is the object asked about (none for orphans).
	Subject *ObjectView     `json:"subject,omitempty"`
	Items   []RelatedObject `json:"items"`
}

// EventView is one Event, as kubectl idx events lists it.
type EventView struct {
	Context   string `json:"context,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Type is Normal or Warning; Reason the event's.
	Type   string `json:"type"`
	Reason string `json:"reason"`
	// Object is what the event is about, Kind/name.
	Object string `json:"object"`
	// Message is the event's, cut when long. Data, not instructions.
	Message string `json:"message"`
	// Count is how many times it happened; FirstSeen and LastSeen when
	// (RFC 3339; LastSeen is the time the list is sorted by).
	Count     int32  `json:"count"`
	FirstSeen string `json:"firstSeen,omitempty"`
	LastSeen  string `json:"lastSeen"`
	// Source is the component that reported it.
	Source string `json:"source,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EventsAnswer answers the events tool, oldest first.
type EventsAnswer struct {
	TypeMeta `json:",inline"`
	Page     `json:",inline"`
	Events   []EventView `json:"events"`
}

// ChangeView is one change of a feed, as kubectl idx watch -o json prints
// its events, the object projected.
type ChangeView struct {
	Context string `json:"context,omitempty"`
	// Type is ADDED, MODIFIED or DELETED.
	Type string `json:"type"`
	// Time is when the change was received (RFC 3339).
	Time   string     `json:"time"`
	Object ObjectView `json:"object"`
	// UID and ResourceVersion are the object's: a name deleted and created
	// again is another UID.
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// DetectedOnRelist, LeftScope and Gap are the feed's marks (see
	// WatchEvent).
	DetectedOnRelist bool      `json:"detectedOnRelist,omitempty"`
	LeftScope        bool      `json:"leftScope,omitempty"`
	Gap              *WatchGap `json:"gap,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ChangesAnswer answers the changes tool: the changes after the cursor (the
// current state as ADDED when there was none), and where to go on from.
type ChangesAnswer struct {
	TypeMeta `json:",inline"`
	Page     `json:",inline"`
	Changes  []ChangeView `json:"changes"`
}

// ContextView is one kubeconfig context the MCP server answers.
type ContextView struct {
	Name string `json:"name"`
	// Server is the API server's URL.
	Server string `json:"server,omitempty"`
	// Namespace is the context's default namespace.
	Namespace string `json:"namespace,omitempty"`
	// Reachable says the server answered; Version is its version; Error why
	// it did not answer.
	Reachable bool   `json:"reachable"`
	Version   string `json:"version,omitempty"`
	Error     string `json:"error,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ContextsAnswer answers the contexts tool.
type ContextsAnswer struct {
	TypeMeta `json:",inline"`
	Page     `json:",inline"`
	Contexts []ContextView `json:"contexts"`
}

// NewQueryAnswer, NewRelationsAnswer, NewEventsAnswer, NewChangesAnswer and
// NewContextsAnswer return empty answers of their kinds.
func NewQueryAnswer() *QueryAnswer {
	return &QueryAnswer{TypeMeta: typeMetaOf(QueryAnswerKind), Page: newPage()}
}

// NewRelationsAnswer returns an empty RelationsAnswer of relation.
func NewRelationsAnswer(relation string) *RelationsAnswer {
	return &RelationsAnswer{TypeMeta: typeMetaOf(RelationsAnswerKind), Page: newPage(), Relation: relation, Items: []RelatedObject{}}
}

// NewEventsAnswer returns an empty EventsAnswer.
func NewEventsAnswer() *EventsAnswer {
	return &EventsAnswer{TypeMeta: typeMetaOf(EventsAnswerKind), Page: newPage(), Events: []EventView{}}
}

// NewChangesAnswer returns an empty ChangesAnswer.
func NewChangesAnswer() *ChangesAnswer {
	return &ChangesAnswer{TypeMeta: typeMetaOf(ChangesAnswerKind), Page: newPage(), Changes: []ChangeView{}}
}

// NewContextsAnswer returns an empty ContextsAnswer.
func NewContextsAnswer() *ContextsAnswer {
	return &ContextsAnswer{TypeMeta: typeMetaOf(ContextsAnswerKind), Page: newPage(), Contexts: []ContextView{}}
}

func newPage() Page { return Page{AsOf: []MCPAsOf{}, Warnings: []string{}} }

// The deep copies of the MCP answers are deepcopy-gen's, but for the two
// types with JSON values (Fields, a group's key and summary), which
// deepcopy-gen cannot copy: theirs follow runtime.DeepCopyJSONValue's rules.

// DeepCopyInto copies v into out.
func (v *ObjectView) DeepCopyInto(out *ObjectView) {
	*out = *v
	out.Fields = copyJSONMap(v.Fields)
}

// DeepCopy returns a deep copy of v.
func (v *ObjectView) DeepCopy() *ObjectView {
	if v == nil {
		return nil
	}
	out := new(ObjectView)
	v.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies g into out.
func (g *GroupView) DeepCopyInto(out *GroupView) {
	*out = *g
	out.Key, out.Summary = copyJSONMap(g.Key), copyJSONMap(g.Summary)
	if g.Members != nil {
		out.Members = make([]ObjectView, len(g.Members))
		for i := range g.Members {
			g.Members[i].DeepCopyInto(&out.Members[i])
		}
	}
}

// DeepCopy returns a deep copy of g.
func (g *GroupView) DeepCopy() *GroupView {
	if g == nil {
		return nil
	}
	out := new(GroupView)
	g.DeepCopyInto(out)
	return out
}

func copyJSONMap(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	return runtime.DeepCopyJSONValue(in).(map[string]any)
}
