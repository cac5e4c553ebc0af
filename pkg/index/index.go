package index

import (
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// OwnerIndex is the name of the index from an owner's UID to the objects that
// list it in metadata.ownerReferences, controller or not.
const OwnerIndex = "owner"

// OwnerIndexFunc is the IndexFunc of OwnerIndex. UIDs are used rather than
// kind/name because they are unique across types and namespaces and tell a
// deleted-and-recreated owner from its successor.
func OwnerIndexFunc(obj any) ([]string, error) {
	m, err := objectMeta(OwnerIndex, obj)
	if err != nil {
		return nil, err
	}
	refs := m.GetOwnerReferences()
	var keys []string
	for _, ref := range refs {
		// The API server rejects references without a UID, but unstructured
		// objects built by hand may lack one; a "" key would lump them together.
		if ref.UID == "" || slices.Contains(keys, string(ref.UID)) {
			continue
		}
		if keys == nil {
			keys = make([]string, 0, len(refs))
		}
		keys = append(keys, string(ref.UID))
	}
	return keys, nil
}

// ControllerIndex is the name of the index from a controller's UID to the
// objects it manages: those whose ownerReference to it has controller=true.
const ControllerIndex = "controller"

// ControllerIndexFunc is the IndexFunc of ControllerIndex. The API server
// allows at most one controller reference, so there is at most one key.
func ControllerIndexFunc(obj any) ([]string, error) {
	return metaKey(ControllerIndex, obj, func(m metav1.Object) string {
		if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
			return string(ref.UID)
		}
		return ""
	})
}

// NamespaceIndex is the name of the index from a namespace to the objects in
// it. It is client-go's cache.NamespaceIndex so that listers built on the same
// store find it; unlike cache.MetaNamespaceIndexFunc, cluster-scoped objects
// get no key rather than "".
const NamespaceIndex = cache.NamespaceIndex

// NamespaceIndexFunc is the IndexFunc of NamespaceIndex.
func NamespaceIndexFunc(obj any) ([]string, error) {
	return metaKey(NamespaceIndex, obj, metav1.Object.GetNamespace)
}

// UIDIndex is the name of the index from metadata.uid to the object. Owner
// trees walk upwards from an ownerReference's UID, which names an object of a
// type known only from the reference, so looking the owner up by UID in its
// type's store avoids asking the RESTMapper whether that type is namespaced.
// Every key holds one object, which makes it the costliest index to keep (in
// BenchmarkStoreAdd it allocates about as much as the other four together), so
// Indexers leaves it out: add it to the informers of owner types only.
const UIDIndex = "uid"

// UIDIndexFunc is the IndexFunc of UIDIndex.
func UIDIndexFunc(obj any) ([]string, error) {
	return metaKey(UIDIndex, obj, func(m metav1.Object) string { return string(m.GetUID()) })
}

// NodeIndex is the name of the index from a node name to the pods bound to it
// (spec.nodeName).
const NodeIndex = "node"

// NodeIndexFunc is the IndexFunc of NodeIndex. Only core pods have a node:
// typed *corev1.Pod and unstructured objects of kind Pod in the core group.
// Pending pods and every other object, including pods kept as
// PartialObjectMetadata (metadata carries no node), get no key, so whether a
// missing key means "unscheduled" or "cannot know" is for HasNode to say.
func NodeIndexFunc(obj any) ([]string, error) {
	m, err := objectMeta(NodeIndex, obj)
	if err != nil {
		return nil, err
	}
	var node string
	// meta.Accessor returned the object itself, which is what to look into.
	switch o := m.(type) {
	case *corev1.Pod:
		node = o.Spec.NodeName
	case *unstructured.Unstructured:
		if HasNode(o.GroupVersionKind().GroupKind()) {
			// A non-string nodeName is malformed; treat it as absent rather
			// than return an error, which would panic the store.
			node, _, _ = unstructured.NestedString(o.Object, "spec", "nodeName")
		}
	}
	if node == "" {
		return nil, nil
	}
	return []string{node}, nil
}

// HasNode reports whether objects of kind gk can be bound to a node, that is
// whether NodeIndex can hold them. A missing key is read per type with it:
// for such a type, an object without a key is unscheduled (the <none> group);
// for any other type, a by-node query has nothing to group and the caller
// warns or refuses. Objects of such a type must come from a full informer: in
// metadata-only mode the node is never fetched and every pod would look
// unscheduled.
func HasNode(gk schema.GroupKind) bool {
	return gk.Group == "" && gk.Kind == "Pod"
}

// labelIndexPrefix starts the names of label indexes; label keys may contain
// '/' and '.', never ':', so the prefix cannot clash with a key.
const labelIndexPrefix = "label:"

// LabelIndexName returns the name of the index built by LabelIndexFunc(key):
// "label:" followed by the key.
func LabelIndexName(key string) string {
	return labelIndexPrefix + key
}

// LabelIndexFunc returns the IndexFunc keying objects by the value of label
// key. A present label with the empty value has the key "", as for label
// selectors, where app= matches it; an absent label has no key, so the object
// falls in Unindexed. The caller validates key: an invalid key simply never
// matches.
func LabelIndexFunc(key string) cache.IndexFunc {
	name := LabelIndexName(key)
	return func(obj any) ([]string, error) {
		m, err := objectMeta(name, obj)
		if err != nil {
			return nil, err
		}
		if v, ok := m.GetLabels()[key]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// Indexers returns a new map of the indexes every informer of a query gets:
// OwnerIndex, ControllerIndex, NamespaceIndex and NodeIndex. These have few
// keys (owners, namespaces, nodes) for many objects, so they cost little
// memory; UIDIndex, with a key per object, is added only where needed. The
// caller owns the map and adds label, JSONPath and UID indexes to it; a fresh
// map each call keeps one command's additions out of another's informers.
func Indexers() cache.Indexers {
	return cache.Indexers{
		OwnerIndex:      OwnerIndexFunc,
		ControllerIndex: ControllerIndexFunc,
		NamespaceIndex:  NamespaceIndexFunc,
		NodeIndex:       NodeIndexFunc,
	}
}

// Group returns the objects of indexer grouped by their keys in the index
// named indexName, built from ListIndexFuncValues and one ByIndex per key, so
// its cost follows the number of indexed objects, not keys times objects. An
// object with several keys is in several groups; objects without a key are
// left out (see Unindexed). Objects come in no particular order and are the
// cached ones: read-only. While the informer runs, each group is consistent
// but groups may come from moments a watch event apart.
func Group(indexer cache.Indexer, indexName string) (map[string][]any, error) {
	if err := checkIndex(indexer, indexName); err != nil {
		return nil, err
	}
	values := indexer.ListIndexFuncValues(indexName)
	groups := make(map[string][]any, len(values))
	for _, v := range values {
		objs, err := indexer.ByIndex(indexName, v)
		if err != nil {
			return nil, fmt.Errorf("listing index %q for %q: %w", indexName, v, err)
		}
		// A key whose last object was deleted after ListIndexFuncValues
		// returned is no group.
		if len(objs) > 0 {
			groups[v] = objs
		}
	}
	return groups, nil
}

// Unindexed returns the objects of indexer with no key in the index named
// indexName: the <none> group of a group-by query. It collects the store keys
// of indexed objects with IndexKeys, then makes one pass over ListKeys and
// fetches only the rest, so objects are never compared against each key.
// Objects come in no particular order and are read-only.
func Unindexed(indexer cache.Indexer, indexName string) ([]any, error) {
	if err := checkIndex(indexer, indexName); err != nil {
		return nil, err
	}
	all := indexer.ListKeys()
	indexed := make(map[string]struct{}, len(all))
	for _, v := range indexer.ListIndexFuncValues(indexName) {
		keys, err := indexer.IndexKeys(indexName, v)
		if err != nil {
			return nil, fmt.Errorf("listing index %q for %q: %w", indexName, v, err)
		}
		for _, k := range keys {
			indexed[k] = struct{}{}
		}
	}
	var out []any
	for _, k := range all {
		if _, ok := indexed[k]; ok {
			continue
		}
		obj, exists, err := indexer.GetByKey(k)
		if err != nil {
			return nil, fmt.Errorf("getting %q: %w", k, err)
		}
		// Deleted since ListKeys: it is in no group at all now. Objects added
		// since are missed, as if the query had run a moment earlier.
		if exists {
			out = append(out, obj)
		}
	}
	return out, nil
}

// checkIndex makes a misspelt index name an error: ListIndexFuncValues
// answers an unknown name with no values, which would look like an empty
// result.
func checkIndex(indexer cache.Indexer, indexName string) error {
	if _, ok := indexer.GetIndexers()[indexName]; !ok {
		return fmt.Errorf("index %q does not exist", indexName)
	}
	return nil
}

// metaKey is the IndexFunc of an index with at most one key an object, read
// from its metadata by key: an empty key is none.
func metaKey(index string, obj any, key func(metav1.Object) string) ([]string, error) {
	m, err := objectMeta(index, obj)
	if err != nil {
		return nil, err
	}
	if k := key(m); k != "" {
		return []string{k}, nil
	}
	return nil, nil
}

// objectMeta returns the metadata of obj for the index named index,
// unwrapping the tombstone informers hand out for objects deleted while a
// watch was down.
func objectMeta(index string, obj any) (metav1.Object, error) {
	obj = unwrap(obj)
	// meta.Accessor accepts a nil *Pod as a metav1.Object; its first getter
	// would then panic inside the store's lock.
	if v := reflect.ValueOf(obj); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("%s index: expected an object with metadata, got nil %T", index, obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("%s index: expected an object with metadata, got %T", index, obj)
	}
	return m, nil
}

// unwrap returns the last known state inside a DeletedFinalStateUnknown.
func unwrap(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}
