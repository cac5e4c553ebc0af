// Package index holds the client-go index functions behind kubectl idx's
// group-by queries (--by-owner, --by-node, --by-label, --by-namespace, --by)
// and relation queries (tree, owners, orphans, events, selects, selected-by,
// uses), and the helpers that answer those queries from indexers.
//
// # Vocabulary
//
// Following client-go's tools/cache, an index name names an index in a
// store's cache.Indexers; an index function (cache.IndexFunc) computes an
// object's index keys (client-go's "indexed values"); a store key
// (namespace/name) identifies an object in the store. The indexes and the
// format of their keys:
//
//	name              key
//	owner             UID of each metadata.ownerReferences entry
//	controller        UID of the ownerReference with controller=true
//	namespace         metadata.namespace (cluster-scoped objects: none)
//	node              spec.nodeName of a core Pod (unscheduled: none)
//	uid               metadata.uid (not in Indexers; for owner trees)
//	label:KEY         value of label KEY ("" when present and empty)
//	jsonpath:{EXPR}   each value of EXPR, scalars as text, maps and lists as JSON
//	ownerkind         Kind.group of each ownerReference (Graph stores)
//	labelpair         "k=v" and "k" for each label (pods, for Selected)
//	selector          the "k=v" or "k" pairs a pod must carry to match the
//	                  object's pod selector, "*" when none is required
//	uses              Kind/namespace/name of each ConfigMap, Secret, PVC and
//	                  ServiceAccount a pod spec or template refers to
//	involvedobject    involvedObject.uid of a core Event, or Kind/namespace/name
//
// An object can have no key ("no value": the index function returns nil, never
// [""]); it then appears under no key and Unindexed returns it, the <none>
// group. "" is a key only where it is a real value: a label present with an
// empty value, which label selectors match as app=, or a JSONPath value that
// is the empty string.
//
// Index functions accept whatever an informer store holds: typed k8s.io/api
// structs, *unstructured.Unstructured, *metav1.PartialObjectMetadata, and the
// cache.DeletedFinalStateUnknown tombstones handed to event handlers. Anything
// without metadata is an error naming its type: that is a programming error,
// and a store panics on it. Everything that depends on an object's data
// (malformed fields, a JSONPath index out of range) yields no key instead of
// an error, because one odd object must not take the command down.
//
// Whether a missing key is meaningful is decided per type, not per object:
// HasNode says which kinds can have a node at all, HasSelector which have a
// pod selector and HasPodSpec which have a pod spec; the uses and
// involvedobject functions reject other kinds with an error, so add them only
// to the informers of kinds those say yes to.
//
// # Contract
//
// Objects in stores are shared with the informer and every other reader, so
// they are read-only: index functions and query helpers never modify them, and
// callers must DeepCopyObject before changing or printing one. Tests run with
// KUBE_CACHE_MUTATION_DETECTOR=true and compare objects before and after.
//
// Index functions are pure and safe for concurrent use: a store calls them
// under its own lock, but one function may be shared by the stores of several
// informers. Group and Unindexed make several calls to the store, each under
// its read lock, so while informers run their answer is consistent per key but
// not across keys: read after WaitForSync, and expect an object that changes
// during the read to appear under its old key, its new one, or both.
//
// Static is a cache.Indexer for objects a one-shot question adds once and only
// looks up afterwards (the pods why -A takes as their table rows say): each
// index value keeps its keys in a slice, in the order they were added, and
// every change but adding a new key fails.
package index
