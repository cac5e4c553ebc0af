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

// TypeMeta is a document's apiVersion and kind, embedded first in every
// document and written in that order (see the package comment): its
// schema.ObjectKind, as metav1.TypeMeta is a Kubernetes object's.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// typeMetaOf is the apiVersion and kind of a document of kind.
func typeMetaOf(kind string) TypeMeta {
	return TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: kind}
}

// GetObjectKind returns the document's apiVersion and kind.
func (t *TypeMeta) GetObjectKind() schema.ObjectKind { return t }

// SetGroupVersionKind sets the document's apiVersion and kind.
func (t *TypeMeta) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	t.APIVersion, t.Kind = gvk.ToAPIVersionAndKind()
}

// GroupVersionKind returns the document's apiVersion and kind.
func (t *TypeMeta) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(t.APIVersion, t.Kind)
}

// GetObjectKind returns no kind: a feed's event line carries none, and
// cli-runtime's jsonpath and template printers, the only ones it is handed
// to, ask for none.
func (e *WatchEvent) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// NewGroupList returns an empty GroupList grouped by groupBy.
func NewGroupList(groupBy GroupMode) *GroupList {
	return &GroupList{TypeMeta: typeMetaOf(GroupListKind), GroupBy: groupBy}
}

// NewTree returns a Tree of kind (TreeKind or OwnerTreeKind) rooted at root.
func NewTree(kind string, root *TreeItem) *Tree {
	return &Tree{TypeMeta: typeMetaOf(kind), Root: root}
}

// NewRelationList returns an empty RelationList of kind (OrphanListKind or
// UsesListKind).
func NewRelationList(kind string) *RelationList {
	return &RelationList{TypeMeta: typeMetaOf(kind), Items: []RelationItem{}}
}
