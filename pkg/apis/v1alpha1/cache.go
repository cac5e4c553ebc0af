package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CacheStatusKind is the document of `kubectl idx cache status`.
const CacheStatusKind = "CacheStatus"

// AsOf says what the objects of one type in an answer from the warm cache are
// current as of. Answers served from the cache carry one per type read, as
// "asOf": a v1 List beside its items and warnings, a document (GroupList,
// Tree, RelationList) after its warnings. A direct run's answer is current
// as of the command's start by construction and has no such field, so its
// bytes are kubectl's.
//
// The answer holds the server's state of those objects at ResourceVersion,
// which includes every write the API server acknowledged before Time. By
// default Time is at or after the command started (read-your-writes: what
// `kubectl apply` wrote before is in); with --max-staleness it may be up to
// that long before. Changes after ResourceVersion may be in the answer too:
// the cache keeps watching while it answers.
type AsOf struct {
	// Resource is the type as kubectl names it: pods, deployments.apps.
	Resource string `json:"resource"`
	// Namespace is the namespace the cache holds the type for; absent for
	// every namespace and for cluster-scoped types.
	Namespace string `json:"namespace,omitempty"`
	// ResourceVersion is the API server's resourceVersion the objects are
	// the state at: a LIST of the type at that resourceVersion
	// (resourceVersionMatch=Exact) returns the same objects, while the
	// server still has it.
	ResourceVersion string `json:"resourceVersion"`
	// Time is when ResourceVersion was the server's latest.
	Time metav1.MicroTime `json:"time"`
}

// AnswerMeta ends the document of each question (GroupList, Tree,
// RelationList, History, Blame, Diagnosis): what its answer may be missing
// and, for an answer from the warm cache, what it is current as of.
type AnswerMeta struct {
	// Warnings say what the answer may be missing, such as types the user may
	// not list. Empty means the answer is complete.
	Warnings []string `json:"warnings"`
	// AsOf says what an answer from the warm cache is current as of, per
	// type; absent from a direct run's (see AsOf).
	AsOf []AsOf `json:"asOf,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheStatus is what the warm cache server of the current identity (the
// server, the credentials, impersonation and the context) holds: how long it
// has run, what it served, how much memory it uses and, per informer kept
// warm, how many objects, since when and as of which resourceVersion. It
// holds counts, times and resourceVersions, never an object.
type CacheStatus struct {
	TypeMeta `json:",inline"`
	// Running says a cache server answers for this identity. The other
	// fields are set only when one does.
	Running bool `json:"running"`
	// Context is the kubeconfig context and Server the API server the cache
	// serves.
	Context string `json:"context,omitempty"`
	Server  string `json:"server,omitempty"`
	// Version is the server binary's version; PID its process.
	Version string `json:"version,omitempty"`
	PID     int    `json:"pid,omitempty"`
	// Socket is the unix socket it listens on, in a directory only the user
	// can enter.
	Socket string `json:"socket,omitempty"`
	// Started is when it started; LastRequest when it last started to answer
	// a command.
	Started     *metav1.Time `json:"started,omitempty"`
	LastRequest *metav1.Time `json:"lastRequest,omitempty"`
	// IdleTimeout is how long it stays with no command to answer, and
	// DropAfter how long it keeps an informer no command uses, as Go
	// durations.
	IdleTimeout string `json:"idleTimeout,omitempty"`
	DropAfter   string `json:"dropAfter,omitempty"`
	// Requests counts what it served and refused.
	Requests *CacheRequests `json:"requests,omitempty"`
	// Memory is the process's memory.
	Memory *CacheMemory `json:"memory,omitempty"`
	// Informers are the informers it keeps warm, by resource, namespace and
	// mode.
	Informers []CachedInformer `json:"informers"`
}

// CacheRequests counts a cache server's requests.
type CacheRequests struct {
	// Running is how many commands it is answering; Served how many it has
	// started to answer.
	Running int64  `json:"running"`
	Served  uint64 `json:"served"`
	// Warmed counts the commands answered directly while it started, which
	// it was then handed to warm their informers.
	Warmed uint64 `json:"warmed"`
	// RefusedPeers counts connections from processes of another user, closed
	// unread; RefusedHandshakes connections that named another identity,
	// protocol or version.
	RefusedPeers      uint64 `json:"refusedPeers"`
	RefusedHandshakes uint64 `json:"refusedHandshakes"`
	// DroppedInformers counts the informers dropped for being unused.
	DroppedInformers int `json:"droppedInformers"`
}

// CacheMemory is a cache server's memory, in bytes.
type CacheMemory struct {
	// RSS is the resident set size of the process, 0 where the system does
	// not say.
	RSS int64 `json:"rssBytes"`
	// Heap is the Go heap in use: objects and the memory they need.
	Heap int64 `json:"heapBytes"`
	// EncodedObjects and EncodedBytes are the objects whose JSON encoding
	// the process keeps for the next -o json answer, and the bytes it is
	// kept in, compressed (part of the heap).
	EncodedObjects int   `json:"encodedObjects,omitempty"`
	EncodedBytes   int64 `json:"encodedBytes,omitempty"`
}

// CachedInformer is one informer a cache server keeps warm.
type CachedInformer struct {
	// Resource is the type, as kubectl names it.
	Resource string `json:"resource"`
	// Mode is how much of each object it keeps: full, metadata, summary,
	// rows or full rows.
	Mode string `json:"mode"`
	// Namespace is its namespace; absent for every namespace and for
	// cluster-scoped types.
	Namespace string `json:"namespace,omitempty"`
	// LabelSelector and FieldSelector narrow it, as the command that started
	// it asked.
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	// ManagedFields says it keeps metadata.managedFields
	// (--show-managed-fields).
	ManagedFields bool `json:"managedFields,omitempty"`
	// Objects is how many objects it holds.
	Objects int `json:"objects"`
	// Since is when it started; LastUsed when a command last took or handed
	// it back; InUse how many commands are reading it.
	Since    metav1.Time `json:"since"`
	LastUsed metav1.Time `json:"lastUsed"`
	InUse    int         `json:"inUse"`
	// Synced says its first list is in.
	Synced bool `json:"synced"`
	// ResourceVersion is the latest resourceVersion its store has applied.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Confirmed is the latest resourceVersion it was shown current at, and
	// when that was the server's latest.
	Confirmed *CacheConfirmation `json:"confirmed,omitempty"`
	// WatchDown says since when and why its watch is down, when it is.
	WatchDown *CacheWatchDown `json:"watchDown,omitempty"`
	// Failed is why its list failed, when it did.
	Failed string `json:"failed,omitempty"`
}

// CacheConfirmation is a resourceVersion an informer was shown current at.
type CacheConfirmation struct {
	ResourceVersion string           `json:"resourceVersion"`
	Time            metav1.MicroTime `json:"time"`
}

// CacheWatchDown is an informer whose watch is down.
type CacheWatchDown struct {
	Since  metav1.Time `json:"since"`
	Reason string      `json:"reason"`
}

// NewCacheStatus returns an empty CacheStatus with its apiVersion and kind.
func NewCacheStatus() *CacheStatus {
	return &CacheStatus{TypeMeta: typeMetaOf(CacheStatusKind), Informers: []CachedInformer{}}
}
