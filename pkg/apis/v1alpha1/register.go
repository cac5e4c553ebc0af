package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of kubectl-idx's documents. It is no group any
// API server serves: it tells the documents from a v1 List and from the
// objects they hold.
const GroupName = "kubectl-idx.io"

// SchemeGroupVersion is the group version of every document of this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

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

var (
	// SchemeBuilder registers the documents' kinds.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the documents' kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
	// Scheme knows the documents' kinds, for the code that decodes them
	// (tests, tools reading kubectl-idx's output).
	Scheme = newScheme()
)

// addKnownTypes registers each kind with its type: one type serves two
// kinds where two questions answer with the same shape (Tree and OwnerTree,
// OrphanList and UsesList).
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(GroupListKind), &GroupList{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(TreeKind), &Tree{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(OwnerTreeKind), &Tree{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(OrphanListKind), &RelationList{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(UsesListKind), &RelationList{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(CacheStatusKind), &CacheStatus{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(HistoryKind), &History{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(BlameKind), &Blame{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(DiagnosisKind), &Diagnosis{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(QueryAnswerKind), &QueryAnswer{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(RelationsAnswerKind), &RelationsAnswer{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(EventsAnswerKind), &EventsAnswer{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(ChangesAnswerKind), &ChangesAnswer{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(ContextsAnswerKind), &ContextsAnswer{})
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind(WhyAnswerKind), &WhyAnswer{})
	return nil
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		// Registration fails only for a kind registered twice with two
		// types: a programming error the package's tests catch.
		panic(err)
	}
	return s
}

// typeMeta is the schema.ObjectKind of a document: its own apiVersion and
// kind fields, which a document holds in that order (see the package
// comment).
type typeMeta struct {
	apiVersion, kind *string
}

// SetGroupVersionKind sets the document's apiVersion and kind.
func (t typeMeta) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	*t.apiVersion, *t.kind = gvk.GroupVersion().String(), gvk.Kind
}

// GroupVersionKind returns the document's apiVersion and kind.
func (t typeMeta) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(*t.apiVersion, *t.kind)
}

// GetObjectKind returns the list's apiVersion and kind.
func (l *GroupList) GetObjectKind() schema.ObjectKind { return typeMeta{&l.APIVersion, &l.Kind} }

// GetObjectKind returns the tree's apiVersion and kind.
func (t *Tree) GetObjectKind() schema.ObjectKind { return typeMeta{&t.APIVersion, &t.Kind} }

// GetObjectKind returns the list's apiVersion and kind.
func (l *RelationList) GetObjectKind() schema.ObjectKind { return typeMeta{&l.APIVersion, &l.Kind} }

// GetObjectKind returns no kind: a feed's event line carries none, and
// cli-runtime's jsonpath and template printers, the only ones it is handed
// to, ask for none.
func (e *WatchEvent) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// NewGroupList returns an empty GroupList grouped by groupBy.
func NewGroupList(groupBy GroupMode) *GroupList {
	return &GroupList{APIVersion: SchemeGroupVersion.String(), Kind: GroupListKind, GroupBy: groupBy}
}

// NewTree returns a Tree of kind (TreeKind or OwnerTreeKind) rooted at root.
func NewTree(kind string, root *TreeItem) *Tree {
	return &Tree{APIVersion: SchemeGroupVersion.String(), Kind: kind, Root: root}
}

// NewRelationList returns an empty RelationList of kind (OrphanListKind or
// UsesListKind).
func NewRelationList(kind string) *RelationList {
	return &RelationList{APIVersion: SchemeGroupVersion.String(), Kind: kind, Items: []RelationItem{}}
}
