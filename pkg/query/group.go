package query

import (
	"cmp"
	"context"
	"fmt"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// Grouping modes, as the GroupList's groupBy names them (v1alpha1's).
const (
	GroupByOwner     = v1alpha1.GroupByOwner
	GroupByNode      = v1alpha1.GroupByNode
	GroupByLabel     = v1alpha1.GroupByLabel
	GroupByNamespace = v1alpha1.GroupByNamespace
	GroupByJSONPath  = v1alpha1.GroupByJSONPath
)

// noneGroup is the name of the group of objects without a key.
const noneGroup = "<none>"

// GroupBy says how Group groups objects.
type GroupBy struct {
	// Mode is one of the GroupBy* modes.
	Mode v1alpha1.GroupMode
	// LabelKey is the label of GroupByLabel.
	LabelKey string
	// JSONPath is the expression of GroupByJSONPath.
	JSONPath string
	// IncludeCompleted counts Succeeded and Failed pods toward a node's
	// requests (GroupByNode).
	IncludeCompleted bool
}

// Indexers returns the index members are grouped through and the indexers
// their informers need.
func (g GroupBy) Indexers() (indexName string, indexers cache.Indexers, err error) {
	indexers = index.Indexers()
	switch g.Mode {
	case GroupByOwner:
		return index.ControllerIndex, indexers, nil
	case GroupByNode:
		return index.NodeIndex, indexers, nil
	case GroupByNamespace:
		return index.NamespaceIndex, indexers, nil
	case GroupByLabel:
		name := index.LabelIndexName(g.LabelKey)
		indexers[name] = index.LabelIndexFunc(g.LabelKey)
		return name, indexers, nil
	case GroupByJSONPath:
		fn, err := index.JSONPathIndexFunc(g.JSONPath)
		if err != nil {
			return "", nil, err
		}
		name := index.JSONPathIndexName(g.JSONPath)
		indexers[name] = fn
		return name, indexers, nil
	}
	return "", nil, fmt.Errorf("unknown grouping %q", g.Mode)
}

// podKind is the kind of pods.
var podKind = schema.GroupKind{Kind: "Pod"}

// podOwnerKinds are the kinds that own pods in most clusters, whose
// informers --by-owner starts while the pods are listed: walking up from the
// pods would otherwise list ReplicaSets once the pods are in, then
// Deployments once the ReplicaSets are.
var podOwnerKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
}

// Group answers a group-by question (--by-owner, --by-node, --by-label,
// --by-namespace, --by): the objects of reqs grouped through an informer index,
// with each group's summary. Names on a request narrow its members to those
// objects; names that do not exist are returned as NotFound errors beside the
// answer. The document's warnings include the session's.
func (s *Session) Group(ctx context.Context, reqs []Request, by GroupBy) (*v1alpha1.GroupList, []error, error) {
	indexName, indexers, err := by.Indexers()
	if err != nil {
		return nil, nil, err
	}
	m, err := s.whereMatcher(ctx, requestKinds(reqs), false)
	if err != nil {
		return nil, nil, err
	}
	defer m.close()
	var owners *informer.OwnerResolver
	if by.Mode == GroupByOwner {
		owners = s.newOwnerResolver(s.cfg.Namespace)
		defer owners.Shutdown()
		if slices.ContainsFunc(reqs, func(r Request) bool { return r.Resource.GVK.GroupKind() == podKind }) {
			owners.Prefetch(ctx, podOwnerKinds)
		}
	}
	idxs, shutdown, err := s.load(ctx, reqs, indexers)
	if err != nil {
		return nil, nil, err
	}
	defer shutdown()
	if err := m.ready(ctx); err != nil {
		return nil, nil, err
	}
	members := make([]*member, len(reqs))
	var missing []error
	for i, r := range reqs {
		idx := idxs[i]
		if len(r.Names) > 0 || m != nil {
			// A name list is short: index a private copy of just those objects.
			// So with --where: the members that match, before they are
			// grouped, so that the summaries count only them.
			objs, notFound := collect(idx, r, s.cfg.Namespace)
			for _, name := range notFound {
				missing = append(missing, apierrors.NewNotFound(r.Resource.GVR.GroupResource(), name))
			}
			objs = m.filter(r.Resource.GVK, objs)
			narrow := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, idx.GetIndexers())
			for _, obj := range objs {
				if err := narrow.Add(obj); err != nil {
					return nil, nil, err
				}
			}
			idx = narrow
		}
		members[i] = &member{req: r, indexer: idx}
	}
	doc := v1alpha1.NewGroupList(by.Mode)
	b := newGroupBuilder(len(members), by.Mode == GroupByNode && by.IncludeCompleted)
	b.resources = s.cfg.PodResources
	switch by.Mode {
	case GroupByOwner:
		err = s.groupByOwner(ctx, owners, b, members)
	case GroupByNode:
		err = s.groupByNode(ctx, b, members, by.IncludeCompleted)
	default:
		doc.Expression = map[v1alpha1.GroupMode]string{GroupByLabel: by.LabelKey, GroupByJSONPath: by.JSONPath}[by.Mode]
		err = groupByKey(b, by.Mode, indexName, doc.Expression, members)
	}
	if err != nil {
		return nil, nil, err
	}
	doc.Groups = b.finish(func(g *v1alpha1.Group) string {
		if by.Mode == GroupByOwner {
			return g.Key.Kind + "/" + g.Key.Namespace + "/" + g.Key.Name
		}
		return g.Name
	})
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
	return doc, missing, nil
}

// member is one informer's objects for one requested type.
type member struct {
	req     Request
	indexer cache.Indexer
}

// parallelFinish is the number of objects from which an answer's groups are
// finished, and a listing's keys sorted, on several CPUs.
const parallelFinish = 10000

// groupBuilder accumulates groups keyed by an identity string.
type groupBuilder struct {
	order  []string
	groups map[string]*v1alpha1.Group
	nTypes int
	// objects counts the objects added.
	objects int
	// includeCompleted sums the requests of Succeeded and Failed pods too
	// (--by-node --include-completed).
	includeCompleted bool
	// parallelFrom is the number of objects from which the groups are
	// finished on several CPUs (parallelFinish).
	parallelFrom int
	// resources keeps pods' requests and limits across answers (a warm
	// cache's); nil computes them.
	resources *index.PodResourcesCache
}

func newGroupBuilder(nTypes int, includeCompleted bool) *groupBuilder {
	return &groupBuilder{groups: map[string]*v1alpha1.Group{}, nTypes: nTypes, includeCompleted: includeCompleted, parallelFrom: parallelFinish}
}

// get returns the group with id, creating it with name and key.
func (b *groupBuilder) get(id, name string, key v1alpha1.GroupKey) *v1alpha1.Group {
	if g, ok := b.groups[id]; ok {
		return g
	}
	g := &v1alpha1.Group{Name: name, Key: key, Members: make([]v1alpha1.Members, b.nTypes), Summary: v1alpha1.GroupSummary{Kinds: map[string]int{}}}
	b.groups[id] = g
	b.order = append(b.order, id)
	return g
}

// add puts objs of member type t into g.
func (b *groupBuilder) add(g *v1alpha1.Group, t int, m *member, objs []any) {
	mg := &g.Members[t]
	if mg.GVK.Empty() {
		*mg = v1alpha1.Members{GVK: m.req.Resource.GVK, Namespaced: m.req.Resource.Namespaced}
	}
	for _, o := range objs {
		if obj, ok := o.(runtime.Object); ok {
			mg.Objects = append(mg.Objects, obj)
		}
	}
	b.objects += len(objs)
}

// finish sorts members and groups and fills the summaries. Named groups sort by
// sortKey; the <none> group comes last.
func (b *groupBuilder) finish(sortKey func(g *v1alpha1.Group) string) []v1alpha1.Group {
	out := make([]v1alpha1.Group, len(b.order))
	// Each group on its own: a large answer's groups are finished on every
	// CPU, a share each (100,000 pods in 10,000 groups: 38 ms on one).
	finishOne := func(i int) {
		g := b.groups[b.order[i]]
		var members []v1alpha1.Members
		for _, m := range g.Members {
			if len(m.Objects) == 0 {
				continue
			}
			SortObjects(m.Objects)
			members = append(members, m)
			g.Summary.Members += len(m.Objects)
			g.Summary.Kinds[m.GVK.Kind] += len(m.Objects)
			for _, o := range m.Objects {
				if pod, ok := o.(*corev1.Pod); ok {
					if g.Summary.Pods == nil {
						g.Summary.Pods = &v1alpha1.PodSummary{}
					}
					addPod(g.Summary.Pods, pod)
				}
			}
		}
		g.Members = members
		// Metadata-only pods (-o name) carry no spec: no sums, as no counts.
		if g.Summary.Pods != nil {
			t := podTotals(b.resources, members, b.includeCompleted)
			g.Summary.Resources = resourceSummary(t)
		}
		out[i] = *g
	}
	workers := 1
	if b.objects >= b.parallelFrom {
		workers = min(goruntime.GOMAXPROCS(0), len(out))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(out); i += workers {
				finishOne(i)
			}
		})
	}
	wg.Wait()
	// Groups with a key first, by sortKey, each read once; the position
	// breaks ties. The groups are moved once, not swapped while sorted.
	type keyed struct {
		none bool
		key  string
		at   int
	}
	ks := make([]keyed, len(out))
	for i := range out {
		ks[i] = keyed{none: out[i].Key.None, key: sortKey(&out[i]), at: i}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.none != b.none {
			if a.none {
				return 1
			}
			return -1
		}
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	})
	sorted := make([]v1alpha1.Group, len(out))
	for i, k := range ks {
		sorted[i] = out[k.at]
	}
	return sorted
}

// podTotals adds up the requests and limits of the pods among members that
// hold capacity: not Succeeded or Failed, unless includeCompleted; kept
// ones where kept holds them.
func podTotals(kept *index.PodResourcesCache, members []v1alpha1.Members, includeCompleted bool) index.ResourceTotals {
	var t index.ResourceTotals
	for _, m := range members {
		for _, o := range m.Objects {
			pod, ok := o.(*corev1.Pod)
			if !ok || (!includeCompleted && index.Terminal(pod)) {
				continue
			}
			t.AddKept(kept, pod)
		}
	}
	return t
}

// resourceSummary is the summary of totals.
func resourceSummary(t index.ResourceTotals) *v1alpha1.ResourceSummary {
	return &v1alpha1.ResourceSummary{Pods: t.Pods, Requests: resourcesOf(t.Requests), Limits: resourcesOf(t.Limits)}
}

// addPod counts pod in s, as index.PodCounts counts it.
func addPod(s *v1alpha1.PodSummary, pod *corev1.Pod) {
	var c index.PodCounts
	c.Add(pod)
	addPods(s, v1alpha1.PodSummary(c))
}

// groupByKey groups by the values of a plain index: label, namespace, JSONPath.
func groupByKey(b *groupBuilder, mode v1alpha1.GroupMode, indexName, expr string, members []*member) error {
	for t, m := range members {
		groups, err := index.Group(m.indexer, indexName)
		if err != nil {
			return err
		}
		for value, objs := range groups {
			key := v1alpha1.GroupKey{}
			name := value
			switch mode {
			case GroupByNamespace:
				key.Namespace = value
			case GroupByLabel:
				v := value
				key.Value = &v
				name = expr + "=" + value
			default:
				v := value
				key.Value = &v
			}
			b.add(b.get("k:"+value, name, key), t, m, objs)
		}
		none, err := index.Unindexed(m.indexer, indexName)
		if err != nil {
			return err
		}
		if len(none) > 0 {
			b.add(b.get("none", noneGroup, v1alpha1.GroupKey{None: true}), t, m, none)
		}
	}
	return nil
}

// GroupByOwner groups members under their top-level controller. Direct owners
// come from the controller index (one key per owner, however many members), and
// only their kinds are looked up, metadata only.
func (s *Session) groupByOwner(ctx context.Context, lookup *informer.OwnerResolver, b *groupBuilder, members []*member) error {
	// direct holds the objects of one member type under one controller.
	type direct struct {
		t    int
		m    *member
		objs []any
	}
	var refs []index.OwnerRef
	byUID := map[types.UID][]direct{}
	for t, m := range members {
		groups, err := index.Group(m.indexer, index.ControllerIndex)
		if err != nil {
			return err
		}
		indexed := 0
		for uid, objs := range groups {
			indexed += len(objs)
			acc, err := meta.Accessor(objs[0])
			if err != nil {
				return err
			}
			ctrl := metav1.GetControllerOfNoCopy(acc)
			if ctrl == nil {
				continue
			}
			if _, ok := byUID[types.UID(uid)]; !ok {
				refs = append(refs, index.RefFromOwnerReference(*ctrl, acc.GetNamespace()))
			}
			byUID[types.UID(uid)] = append(byUID[types.UID(uid)], direct{t: t, m: m, objs: objs})
		}
		// The index gives an object one key at most: when it holds as many
		// objects as the store, every object has a controller, and the
		// store's objects need no second pass (at 100,000 pods the index
		// and a count take 20 ms; reading each object's references, 47).
		if indexed == len(m.indexer.ListKeys()) {
			continue
		}
		none, err := index.Unindexed(m.indexer, index.ControllerIndex)
		if err != nil {
			return err
		}
		if len(none) > 0 {
			b.add(b.get("none", noneGroup, v1alpha1.GroupKey{None: true}), t, m, none)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	res, err := index.ResolveOwners(ctx, lookup, refs)
	if err != nil {
		return err
	}
	warned := map[schema.GroupKind]bool{}
	var unknown []string
	for uid, ds := range byUID {
		r := res[uid]
		top := r.Top
		name := top.Kind + "/" + top.Name
		key := v1alpha1.GroupKey{APIVersion: top.APIVersion, Kind: top.Kind, Namespace: top.Namespace, Name: top.Name, UID: string(top.UID), Dangling: r.Dangling, Unknown: r.Unknown, Reason: r.Reason}
		if r.Unknown && !warned[top.GroupKind()] {
			warned[top.GroupKind()] = true
			unknown = append(unknown, fmt.Sprintf("owners above %s are unknown: %s", kindName(top.GroupKind()), r.Reason))
		}
		g := b.get("o:"+string(top.UID), name, key)
		for _, d := range ds {
			b.add(g, d.t, d.m, d.objs)
		}
	}
	// In name order, after what the session warned of so far.
	sort.Strings(unknown)
	for _, w := range unknown {
		s.warn("%s", w)
	}
	return nil
}

// GroupByNode groups pods by node and summarizes each node's state and the
// requests of its pods against allocatable. Every node is listed, with or
// without pods.
func (s *Session) groupByNode(ctx context.Context, b *groupBuilder, members []*member, includeCompleted bool) error {
	nodes, err := s.listNodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		b.get("n:"+n.Name, n.Name, v1alpha1.GroupKey{Node: n.Name})
	}
	for t, m := range members {
		groups, err := index.Group(m.indexer, index.NodeIndex)
		if err != nil {
			return err
		}
		for node, objs := range groups {
			b.add(b.get("n:"+node, node, v1alpha1.GroupKey{Node: node}), t, m, objs)
		}
		none, err := index.Unindexed(m.indexer, index.NodeIndex)
		if err != nil {
			return err
		}
		if len(none) > 0 {
			b.add(b.get("none", noneGroup, v1alpha1.GroupKey{None: true}), t, m, none)
		}
	}
	byName := map[string]*corev1.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, id := range b.order {
		g := b.groups[id]
		if g.Key.None {
			continue
		}
		g.Summary.Node = nodeSummary(b.resources, byName[g.Key.Node], g.Members, includeCompleted)
	}
	return nil
}

// nodeSummary computes a node group's summary; node is nil for a node that pods
// name but that does not exist.
func nodeSummary(kept *index.PodResourcesCache, node *corev1.Node, members []v1alpha1.Members, includeCompleted bool) *v1alpha1.NodeSummary {
	s := &v1alpha1.NodeSummary{Roles: []string{}}
	t := podTotals(kept, members, includeCompleted)
	s.Requests, s.Limits = resourcesOf(t.Requests), resourcesOf(t.Limits)
	if node == nil {
		s.Status = "NotFound"
		s.Allocatable = resourcesOf(nil)
		return s
	}
	s.Exists = true
	s.Status, s.Ready = index.NodeStatus(node)
	s.Unschedulable = node.Spec.Unschedulable
	s.Roles = index.NodeRoles(node)
	s.Allocatable = resourcesOf(node.Status.Allocatable)
	if a := s.Allocatable.CPUMillis; a > 0 {
		s.CPUPercent = s.Requests.CPUMillis * 100 / a
	}
	if a := s.Allocatable.MemoryBytes; a > 0 {
		s.MemoryPercent = s.Requests.MemoryBytes * 100 / a
	}
	return s
}

// resourcesOf renders a resource list for the document: cpu and memory always
// (as "0" when absent), every other resource when its quantity is not zero.
func resourcesOf(list corev1.ResourceList) v1alpha1.Resources {
	cpu, mem := list[corev1.ResourceCPU], list[corev1.ResourceMemory]
	r := v1alpha1.Resources{CPU: cpu.String(), Memory: mem.String(), CPUMillis: cpu.MilliValue(), MemoryBytes: mem.Value()}
	for name, q := range list {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || q.IsZero() {
			continue
		}
		if r.Other == nil {
			r.Other = map[string]string{}
		}
		r.Other[string(name)] = q.String()
	}
	return r
}

// listNodes reads every node through a short-lived informer of its own: nodes
// are cluster-scoped and the user's selectors are about the members, not nodes.
func (s *Session) listNodes(ctx context.Context) ([]*corev1.Node, error) {
	res := informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("nodes"), GVK: corev1.SchemeGroupVersion.WithKind("Node")}
	objs, err := s.readCluster(ctx, res, informer.Full)
	if err != nil {
		return nil, err
	}
	var nodes []*corev1.Node
	for _, it := range objs {
		if n, ok := it.(*corev1.Node); ok {
			nodes = append(nodes, n)
		}
	}
	return nodes, nil
}
