// +k8s:deepcopy-gen=package

// Package v1alpha1 holds the documents kubectl-idx prints for its own questions:
// GroupList (--by-owner, --by-node, --by-label, --by-namespace, --by), Tree and
// OwnerTree (tree, owners), OrphanList and UsesList (orphans, uses),
// Diagnosis (why), History and Blame (history, blame), the change feed's
// WatchEvent and CacheStatus (cache status). They are what
// `-o json|yaml|jsonpath|go-template` print and what scripts and jq recipes
// read, so they are API types: every field has a JSON tag and a comment, a
// field is never renamed or removed within a version, and README.md documents
// the same shapes. An answer served from the warm cache says what it is
// current as of (AsOf): an "asOf" array in the documents and, beside
// "warnings", in a v1 List; a direct run's answers have none.
//
// The documents are API objects of the group version kubectl-idx.io/v1alpha1
// (SchemeGroupVersion), registered in Scheme, as the types of
// k8s.io/apimachinery/pkg/apis/meta/v1 are: each has its apiVersion and kind
// and deep-copies itself, so cli-runtime's printers print them as they print
// any object. Their apiVersion and kind are this package's TypeMeta rather
// than metav1.TypeMeta, which would write kind before apiVersion: the
// documents' bytes are the ones scripts have read since before they were API
// objects. A WatchEvent is a runtime.Object too, for the jsonpath and
// template printers, but a line of a feed, not a document: it has no
// apiVersion or kind and is not registered.
//
// The deep copies are deepcopy-gen's (zz_generated.deepcopy.go, written by
// `make generate` from the +k8s:deepcopy-gen markers; `make lint` fails when
// it is stale), but for Change's, written by hand because its values are
// decoded JSON of type any. A copy copies Members' objects and a WatchEvent's
// object through their own DeepCopyObject, so a copy is the caller's to
// change, cached objects included.
//
// The query engine (pkg/query) builds GroupList, Tree, RelationList,
// Diagnosis (its causes named by pkg/diagnose), History and Blame;
// pkg/printers builds each WatchEvent from the feed's event as it prints it;
// the cache commands fill CacheStatus. Plain listings (`kubectl idx TYPE -o
// json`) print a v1 List of the objects, as kubectl does, not a document of
// this package.
package v1alpha1
