package cmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// Grouping modes, as the JSON document's groupBy names them.
const (
	groupByOwner     = "owner"
	groupByNode      = "node"
	groupByLabel     = "label"
	groupByNamespace = "namespace"
	groupByJSONPath  = "jsonpath"
)

// noneGroup is the name of the group of objects without a key.
const noneGroup = "<none>"

// GroupFlags are the group-by flags of the root command.
type GroupFlags struct {
	ByOwner          bool
	ByNode           bool
	ByLabel          string
	ByNamespace      bool
	ByJSONPath       string
	IncludeCompleted bool

	byLabelSet, byJSONPathSet bool
}

// mode returns the grouping asked for ("" for none) and an error when more
// than one was asked for.
func (g *GroupFlags) mode() (string, error) {
	var set []string
	var mode string
	add := func(on bool, flag, m string) {
		if on {
			set = append(set, flag)
			mode = m
		}
	}
	add(g.ByOwner, "--by-owner", groupByOwner)
	add(g.ByNode, "--by-node", groupByNode)
	add(g.byLabelSet, "--by-label", groupByLabel)
	add(g.ByNamespace, "--by-namespace", groupByNamespace)
	add(g.byJSONPathSet, "--by", groupByJSONPath)
	if len(set) > 1 {
		return "", fmt.Errorf("%s cannot be used together: choose one grouping", strings.Join(set, " and "))
	}
	return mode, nil
}

// validate checks the group-by flags against each other and the requests.
func (g *GroupFlags) validate(reqs []Request, sortBy string) error {
	if err := g.validateFlags(sortBy); err != nil {
		return err
	}
	if g.ByNode {
		for _, r := range reqs {
			if !index.HasNode(r.Resource.GVK.GroupKind()) {
				return fmt.Errorf("--by-node groups objects by the node they run on; %s have no node (use it with pods)", r.Resource.Name())
			}
		}
	}
	return nil
}

// validateFlags checks the group-by flags against each other, without the
// requests.
func (g *GroupFlags) validateFlags(sortBy string) error {
	mode, err := g.mode()
	if err != nil {
		return err
	}
	if g.IncludeCompleted && mode != groupByNode {
		return errors.New("--include-completed only applies to --by-node")
	}
	switch mode {
	case "":
		return nil
	case groupByLabel:
		if strings.TrimSpace(g.ByLabel) == "" {
			return errors.New("--by-label needs a label key, e.g. --by-label app")
		}
		// An invalid key is on no object: every object would land in <none>.
		if errs := validation.IsQualifiedName(g.ByLabel); len(errs) > 0 {
			return fmt.Errorf("invalid label key %q in --by-label: %s", g.ByLabel, strings.Join(errs, "; "))
		}
	case groupByJSONPath:
		if _, err := index.JSONPathIndexFunc(g.ByJSONPath); err != nil {
			return fmt.Errorf("invalid JSONPath in --by: %w", err)
		}
	}
	if sortBy != "" {
		return errors.New("--sort-by cannot be used with grouping: groups and their members are sorted by key and name")
	}
	return nil
}

// memberIndexers returns the indexers member informers need for mode.
func (g *GroupFlags) memberIndexers(mode string) (indexName string, indexers cache.Indexers, err error) {
	indexers = index.Indexers()
	switch mode {
	case groupByOwner:
		return index.ControllerIndex, indexers, nil
	case groupByNode:
		return index.NodeIndex, indexers, nil
	case groupByNamespace:
		return index.NamespaceIndex, indexers, nil
	case groupByLabel:
		name := index.LabelIndexName(g.ByLabel)
		indexers[name] = index.LabelIndexFunc(g.ByLabel)
		return name, indexers, nil
	case groupByJSONPath:
		fn, err := index.JSONPathIndexFunc(g.ByJSONPath)
		if err != nil {
			return "", nil, err
		}
		name := index.JSONPathIndexName(g.ByJSONPath)
		indexers[name] = fn
		return name, indexers, nil
	}
	return "", nil, fmt.Errorf("unknown grouping %q", mode)
}

// member is one informer's objects for one requested type.
type member struct {
	req     Request
	indexer cache.Indexer
	cols    printers.Group
}

// groupBuilder accumulates groups keyed by an identity string.
type groupBuilder struct {
	order  []string
	groups map[string]*printers.OutputGroup
	nTypes int
}

func newGroupBuilder(nTypes int) *groupBuilder {
	return &groupBuilder{groups: map[string]*printers.OutputGroup{}, nTypes: nTypes}
}

// get returns the group with id, creating it with name and key.
func (b *groupBuilder) get(id, name string, key printers.GroupKey) *printers.OutputGroup {
	if g, ok := b.groups[id]; ok {
		return g
	}
	g := &printers.OutputGroup{Name: name, Key: key, Members: make([]printers.Group, b.nTypes), Summary: printers.GroupSummary{Kinds: map[string]int{}}}
	b.groups[id] = g
	b.order = append(b.order, id)
	return g
}

// add puts objs of member type t into g.
func (b *groupBuilder) add(g *printers.OutputGroup, t int, m *member, objs []any) {
	mg := &g.Members[t]
	if mg.GVK.Empty() {
		*mg = printers.Group{GVK: m.cols.GVK, Namespaced: m.cols.Namespaced, CRDColumns: m.cols.CRDColumns}
	}
	for _, o := range objs {
		if obj, ok := o.(runtime.Object); ok {
			mg.Objects = append(mg.Objects, obj)
		}
	}
}

// finish sorts members and groups and fills the summaries. Named groups sort by
// sortKey; the <none> group comes last.
func (b *groupBuilder) finish(sortKey func(g *printers.OutputGroup) string) []printers.OutputGroup {
	out := make([]printers.OutputGroup, 0, len(b.order))
	for _, id := range b.order {
		g := b.groups[id]
		var members []printers.Group
		for _, m := range g.Members {
			if len(m.Objects) == 0 {
				continue
			}
			sortObjects(m.Objects)
			members = append(members, m)
			g.Summary.Members += len(m.Objects)
			g.Summary.Kinds[m.GVK.Kind] += len(m.Objects)
			for _, o := range m.Objects {
				if pod, ok := o.(*corev1.Pod); ok {
					if g.Summary.Pods == nil {
						g.Summary.Pods = &printers.PodSummary{}
					}
					addPod(g.Summary.Pods, pod)
				}
			}
		}
		g.Members = members
		out = append(out, *g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Key.None != out[j].Key.None {
			return !out[i].Key.None
		}
		return sortKey(&out[i]) < sortKey(&out[j])
	})
	return out
}

func addPod(s *printers.PodSummary, pod *corev1.Pod) {
	var c index.PodCounts
	c.Add(pod)
	s.Total += c.Total
	s.Ready += c.Ready
	s.Running += c.Running
	s.Pending += c.Pending
	s.Succeeded += c.Succeeded
	s.Failed += c.Failed
	s.Unknown += c.Unknown
}

// runGrouped answers a group-by query from synced member informers.
func (o *GetOptions) runGrouped(ctx context.Context, mode, indexName string, members []*member) (*printers.GroupList, error) {
	doc := &printers.GroupList{APIVersion: printers.GroupListAPIVersion, Kind: printers.GroupListKind, GroupBy: mode}
	b := newGroupBuilder(len(members))
	var err error
	switch mode {
	case groupByOwner:
		err = o.groupByOwner(ctx, b, doc, members)
	case groupByNode:
		err = o.groupByNode(ctx, b, doc, members)
	default:
		doc.Expression = map[string]string{groupByLabel: o.Group.ByLabel, groupByJSONPath: o.Group.ByJSONPath}[mode]
		err = groupByKey(b, mode, indexName, doc.Expression, members)
	}
	if err != nil {
		return nil, err
	}
	doc.Groups = b.finish(func(g *printers.OutputGroup) string {
		if mode == groupByOwner {
			return g.Key.Kind + "/" + g.Key.Namespace + "/" + g.Key.Name
		}
		return g.Name
	})
	return doc, nil
}

// groupByKey groups by the values of a plain index: label, namespace, JSONPath.
func groupByKey(b *groupBuilder, mode, indexName, expr string, members []*member) error {
	for t, m := range members {
		groups, err := index.Group(m.indexer, indexName)
		if err != nil {
			return err
		}
		for value, objs := range groups {
			key := printers.GroupKey{}
			name := value
			switch mode {
			case groupByNamespace:
				key.Namespace = value
			case groupByLabel:
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
			b.add(b.get("none", noneGroup, printers.GroupKey{None: true}), t, m, none)
		}
	}
	return nil
}

// groupByOwner groups members under their top-level controller. Direct owners
// come from the controller index (one key per owner, however many members), and
// only their kinds are looked up, metadata only.
func (o *GetOptions) groupByOwner(ctx context.Context, b *groupBuilder, doc *printers.GroupList, members []*member) error {
	type direct struct {
		t    int
		m    *member
		objs []any
	}
	var refs []index.OwnerRef
	var directs []direct
	byUID := map[types.UID][]int{}
	for t, m := range members {
		groups, err := index.Group(m.indexer, index.ControllerIndex)
		if err != nil {
			return err
		}
		for uid, objs := range groups {
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
			byUID[types.UID(uid)] = append(byUID[types.UID(uid)], len(directs))
			directs = append(directs, direct{t: t, m: m, objs: objs})
		}
		none, err := index.Unindexed(m.indexer, index.ControllerIndex)
		if err != nil {
			return err
		}
		if len(none) > 0 {
			b.add(b.get("none", noneGroup, printers.GroupKey{None: true}), t, m, none)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	lookup := o.newOwnerLookup()
	defer lookup.shutdown()
	res, err := index.ResolveOwners(ctx, lookup, refs)
	if err != nil {
		return err
	}
	warned := map[schema.GroupKind]bool{}
	for uid, idxs := range byUID {
		r := res[uid]
		top := r.Top
		name := top.Kind + "/" + top.Name
		key := printers.GroupKey{APIVersion: top.APIVersion, Kind: top.Kind, Namespace: top.Namespace, Name: top.Name, UID: string(top.UID), Dangling: r.Dangling, Unknown: r.Unknown, Reason: r.Reason}
		if r.Unknown && !warned[top.GroupKind()] {
			warned[top.GroupKind()] = true
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("owners above %s are unknown: %s", kindName(top.GroupKind()), r.Reason))
		}
		g := b.get("o:"+string(top.UID), name, key)
		for _, i := range idxs {
			b.add(g, directs[i].t, directs[i].m, directs[i].objs)
		}
	}
	sort.Strings(doc.Warnings)
	return nil
}

func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// groupByNode groups pods by node and summarizes each node's state and the
// requests of its pods against allocatable. Every node is listed, with or
// without pods.
func (o *GetOptions) groupByNode(ctx context.Context, b *groupBuilder, doc *printers.GroupList, members []*member) error {
	nodes, err := o.listNodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		b.get("n:"+n.Name, n.Name, printers.GroupKey{Node: n.Name})
	}
	for t, m := range members {
		groups, err := index.Group(m.indexer, index.NodeIndex)
		if err != nil {
			return err
		}
		for node, objs := range groups {
			b.add(b.get("n:"+node, node, printers.GroupKey{Node: node}), t, m, objs)
		}
		none, err := index.Unindexed(m.indexer, index.NodeIndex)
		if err != nil {
			return err
		}
		if len(none) > 0 {
			b.add(b.get("none", noneGroup, printers.GroupKey{None: true}), t, m, none)
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
		g.Summary.Node = nodeSummary(byName[g.Key.Node], g.Members, o.Group.IncludeCompleted)
	}
	return nil
}

// nodeSummary computes a node group's summary; node is nil for a node that pods
// name but that does not exist.
func nodeSummary(node *corev1.Node, members []printers.Group, includeCompleted bool) *printers.NodeSummary {
	s := &printers.NodeSummary{Roles: []string{}}
	var cpu, mem resource.Quantity
	for _, m := range members {
		for _, o := range m.Objects {
			pod, ok := o.(*corev1.Pod)
			if !ok || (!includeCompleted && index.Terminal(pod)) {
				continue
			}
			c, mm := index.PodRequests(pod)
			cpu.Add(c)
			mem.Add(mm)
		}
	}
	s.Requests = resources(cpu, mem)
	if node == nil {
		s.Status = "NotFound"
		s.Allocatable = resources(resource.Quantity{}, resource.Quantity{})
		return s
	}
	s.Exists = true
	s.Status, s.Ready = index.NodeStatus(node)
	s.Unschedulable = node.Spec.Unschedulable
	s.Roles = index.NodeRoles(node)
	alloc := node.Status.Allocatable
	s.Allocatable = resources(alloc[corev1.ResourceCPU], alloc[corev1.ResourceMemory])
	if a := s.Allocatable.CPUMillis; a > 0 {
		s.CPUPercent = s.Requests.CPUMillis * 100 / a
	}
	if a := s.Allocatable.MemoryBytes; a > 0 {
		s.MemoryPercent = s.Requests.MemoryBytes * 100 / a
	}
	return s
}

func resources(cpu, mem resource.Quantity) printers.Resources {
	return printers.Resources{CPU: cpu.String(), Memory: mem.String(), CPUMillis: cpu.MilliValue(), MemoryBytes: mem.Value()}
}

// listNodes reads every node through a short-lived informer of its own: nodes
// are cluster-scoped and the user's selectors are about the members, not nodes.
func (o *GetOptions) listNodes(ctx context.Context) ([]*corev1.Node, error) {
	f, err := o.newFactory(informer.Config{SyncTimeout: o.SyncTimeout})
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	res := informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("nodes"), GVK: corev1.SchemeGroupVersion.WithKind("Node")}
	inf, err := f.Informer(res, informer.Full, nil)
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		return nil, err
	}
	var nodes []*corev1.Node
	for _, it := range inf.GetStore().List() {
		if n, ok := it.(*corev1.Node); ok {
			nodes = append(nodes, n)
		}
	}
	return nodes, nil
}

// groupHeader renders a group's header line for human output.
func groupHeader(mode string) func(g *printers.OutputGroup) string {
	return func(g *printers.OutputGroup) string {
		var parts []string
		name := g.Name
		if mode == groupByOwner && !g.Key.None && g.Key.Namespace != "" {
			name += " -n " + g.Key.Namespace
		}
		parts = append(parts, name)
		switch {
		case g.Key.Dangling:
			parts = append(parts, "(dangling: owner not found)")
		case g.Key.Unknown:
			// The reason is in the warning on stderr and in the JSON key.
			parts = append(parts, "(owners above unknown)")
		}
		if n := g.Summary.Node; n != nil && !n.Exists {
			// Pods name a node the cluster does not have: no capacity to show.
			parts = append(parts, n.Status)
		} else if n != nil {
			roles := strings.Join(n.Roles, ",")
			if roles == "" {
				roles = "<none>"
			}
			parts = append(parts, n.Status, roles,
				fmt.Sprintf("cpu %s/%s (%d%%)", n.Requests.CPU, n.Allocatable.CPU, n.CPUPercent),
				fmt.Sprintf("memory %s/%s (%d%%)", humanBytes(n.Requests.MemoryBytes), humanBytes(n.Allocatable.MemoryBytes), n.MemoryPercent))
		}
		parts = append(parts, countLine(g))
		return strings.Join(parts, "  ")
	}
}

// countLine says how many members a group has and, for pods, how many are ready.
func countLine(g *printers.OutputGroup) string {
	kinds := make([]string, 0, len(g.Summary.Kinds))
	for k := range g.Summary.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		n := g.Summary.Kinds[k]
		word := strings.ToLower(k)
		if n != 1 {
			word += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, word))
	}
	if len(parts) == 0 {
		parts = append(parts, "0 pods")
	}
	line := strings.Join(parts, ", ")
	if p := g.Summary.Pods; p != nil {
		line += fmt.Sprintf(", %d/%d ready", p.Ready, p.Total)
	}
	return line
}

// ownerLookup implements index.OwnerLookup with one metadata-only informer per
// owner kind, indexed by UID, started only for kinds that references name.
type ownerLookup struct {
	o          *GetOptions
	mu         sync.Mutex
	factories  []*informer.Factory
	indexers   map[schema.GroupKind]cache.Indexer
	namespaced map[schema.GroupKind]bool
}

func (o *GetOptions) newOwnerLookup() *ownerLookup {
	return &ownerLookup{o: o, indexers: map[schema.GroupKind]cache.Indexer{}, namespaced: map[schema.GroupKind]bool{}}
}

// Prepare maps each kind through the REST mapper (so custom owners work), starts
// its informer and syncs all of them in parallel; a kind that fails does not
// hold up the others.
func (l *ownerLookup) Prepare(ctx context.Context, kinds []schema.GroupVersionKind) map[schema.GroupKind]error {
	errs := map[schema.GroupKind]error{}
	// Sync goroutines and this loop both record results: always under l.mu.
	record := func(gk schema.GroupKind, err error, idx cache.Indexer) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			errs[gk] = err
			return
		}
		l.indexers[gk] = idx
	}
	var eg errgroup.Group
	eg.SetLimit(8)
	for _, gvk := range kinds {
		gk := gvk.GroupKind()
		mapping, err := l.o.mapper.RESTMapping(gk, gvk.Version)
		if err != nil {
			record(gk, fmt.Errorf("the server doesn't have a resource type for kind %s", kindName(gk)), nil)
			continue
		}
		res := informer.FromMapping(mapping)
		f, err := l.o.newFactory(informer.Config{Namespace: l.o.namespace, SyncTimeout: l.o.SyncTimeout})
		if err != nil {
			record(gk, err, nil)
			continue
		}
		l.mu.Lock()
		l.namespaced[gk] = res.Namespaced
		l.factories = append(l.factories, f)
		l.mu.Unlock()
		inf, err := f.Informer(res, informer.MetadataOnly, cache.Indexers{index.UIDIndex: index.UIDIndexFunc})
		if err != nil {
			record(gk, err, nil)
			continue
		}
		f.Start(ctx)
		eg.Go(func() error {
			// The API error's own text names verb, resource and scope.
			if err := f.WaitForSync(ctx); err != nil {
				record(gk, err, nil)
				return nil
			}
			record(gk, nil, inf.GetIndexer())
			return nil
		})
	}
	_ = eg.Wait()
	return errs
}

// Get finds an owner by UID through the UID index.
func (l *ownerLookup) Get(gk schema.GroupKind, uid types.UID) (metav1.Object, error) {
	idx, ok := l.indexers[gk]
	if !ok {
		return nil, fmt.Errorf("kind %s was not prepared", kindName(gk))
	}
	objs, err := idx.ByIndex(index.UIDIndex, string(uid))
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	return meta.Accessor(objs[0])
}

// Namespaced reports the scope the REST mapper gave gk.
func (l *ownerLookup) Namespaced(gk schema.GroupKind) bool {
	ns, ok := l.namespaced[gk]
	return !ok || ns
}

func (l *ownerLookup) shutdown() {
	for _, f := range l.factories {
		f.Shutdown()
	}
}

// printGrouped builds and prints a group-by answer from synced member informers.
// Names on the command line narrow the members to those objects.
func (o *GetOptions) printGrouped(ctx context.Context, mode, indexName, format string, idxs []cache.Indexer, crdColumns [][]apiextensionsv1.CustomResourceColumnDefinition) error {
	members := make([]*member, len(o.requests))
	var errs []error
	for i, r := range o.requests {
		idx := idxs[i]
		if len(r.Names) > 0 {
			// A name list is short: index a private copy of just those objects.
			objs, missing := collect(idx, r, o.namespace)
			for _, name := range missing {
				errs = append(errs, apierrors.NewNotFound(r.Resource.GVR.GroupResource(), name))
			}
			narrow := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, idx.GetIndexers())
			for _, obj := range objs {
				if err := narrow.Add(obj); err != nil {
					return err
				}
			}
			idx = narrow
		}
		members[i] = &member{req: r, indexer: idx, cols: printers.Group{GVK: r.Resource.GVK, Namespaced: r.Resource.Namespaced, CRDColumns: crdColumns[i]}}
	}
	doc, err := o.runGrouped(ctx, mode, indexName, members)
	if err != nil {
		return err
	}
	doc.Warnings = append(o.partial, doc.Warnings...)
	for _, w := range doc.Warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	// Validate rejected --sort-by; a lone named object still prints in groups.
	opts := o.printOptions(format)
	opts.SingleItem = false
	err = printers.PrintGrouped(o.Out, doc, o.printer, printers.GroupedOptions{Options: opts, Header: groupHeader(mode)})
	if err != nil {
		return err
	}
	if len(doc.Groups) == 0 && printers.IsHuman(format) && len(errs) == 0 {
		o.printNoResources()
	}
	return utilerrors.NewAggregate(errs)
}

// humanBytes renders a byte count in the largest binary unit that keeps it at
// least 1, with one decimal: "14.5Gi", "512Mi". Quantities like 15184716Ki are
// exact but unreadable in a header line; JSON keeps the exact values.
func humanBytes(b int64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	v := float64(b)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 || v == float64(int64(v)) {
		return fmt.Sprintf("%d%s", int64(v), units[i])
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}
