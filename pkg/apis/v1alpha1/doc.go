// Package v1alpha1 holds the documents kubectl-idx prints for its own questions:
// GroupList (--by-owner, --by-node, --by-label, --by-namespace, --by), Tree and
// OwnerTree (tree, owners), OrphanList and UsesList (orphans, uses) and the
// change feed's WatchEvent. They are what `-o json|yaml|jsonpath|go-template`
// print and what scripts and jq recipes read, so they are API types: every field
// has a JSON tag and a comment, a field is never renamed or removed within a
// version, and README.md documents the same shapes.
//
// The query engine (pkg/query) builds these documents and pkg/printers prints
// them; neither lives here. Plain listings (`kubectl idx TYPE -o json`) print a
// v1 List of the objects, as kubectl does, not a document of this package.
package v1alpha1

// GroupVersion is the apiVersion of every document of this package, so scripts
// can tell them from a v1 List.
const GroupVersion = "kubectl-idx.io/v1alpha1"

// Kinds of the documents.
const (
	// GroupListKind is the document of a group-by query.
	GroupListKind = "GroupList"
	// TreeKind is the document of `kubectl idx tree`: Root and its descendants
	// under children.
	TreeKind = "Tree"
	// OwnerTreeKind is the document of `kubectl idx owners`: Root and its
	// owners, and theirs, under owners.
	OwnerTreeKind = "OwnerTree"
	// OrphanListKind is the document of `kubectl idx orphans`.
	OrphanListKind = "OrphanList"
	// UsesListKind is the document of `kubectl idx uses`.
	UsesListKind = "UsesList"
)
