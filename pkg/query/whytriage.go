package query

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/wire"
)

// How WhyAll reads pods without reading every pod whole: triage.
//
// A diagnosis of every top-level owner reads each pod, but finds nothing to
// say of a pod that runs with every container ready on a node that reports
// Ready, under a controller it holds whole: such a pod has no cause of its
// own (pod: not pending, its node not NotReady or cordoned, no container
// waiting, ready), its references are its controller's template's (read from
// the controller), and what Services, PodDisruptionBudgets and the node
// checks read of it is its labels, owner, node and readiness. On a healthy
// cluster that is nearly every pod, and reading them whole costs the server
// a protobuf LIST of whole pods (1.4 to 1.9 s for 20,000 realistic pods)
// where their metadata (0.7 to 0.9 s) and the server's own table of them
// (3 MB, 0.1 s) say as much.
//
// So the pods are read as metadata, beside the server's table of the same
// scope without objects (includeObject=None), and each pod's row is found as
// tables find them (readTable: by name, in order, the rows of repeated names
// read again with their metadata and matched by UID). A pod whose row says
// Running, READY n/n with n > 0 and its readiness gates met (or none), bound
// to a node that is Ready and schedulable, not being deleted and controlled
// by a ReplicaSet, StatefulSet, DaemonSet, Job or ReplicationController read
// whole, stands in the store as what its row says (runningPod): its
// metadata, its node, phase Running, Ready, n ready containers. Every other
// pod is read whole, one GET each from the API server's watch cache
// (podsWhole); when
// they are more than one pod in wholeShare, or the table cannot be read or
// has not the columns, every pod is read whole as without triage. A
// node's requests (a pod too big for any node) are then read for that node
// alone, as for a diagnosis of one namespace.
//
// What the table and the metadata say can differ by what changed between
// the two reads: a pod created after the table has no row and is read
// whole; one that changed is as its row says, which is as current.
//
// Triage applies to a direct run without --where (whose expressions may
// read any field of a pod); the warm cache holds the pods whole already.

// WhyPodsEnv, whole, makes WhyAll read every pod whole (no triage).
const WhyPodsEnv = "KUBECTL_IDX_WHY_PODS"

// WholePodsFromEnv reports whether WhyPodsEnv asks for every pod whole, or an
// error naming the variable when its value is not understood.
func WholePodsFromEnv() (bool, error) {
	switch v := os.Getenv(WhyPodsEnv); v {
	case "", "auto":
		return false, nil
	case "whole":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%s: want auto or whole", WhyPodsEnv, v)
	}
}

// wholeShare: when more than one pod in wholeShare needs reading whole,
// every pod is, in one list, rather than by so many GETs.
const wholeShare = 8

// triageKinds are the controllers whose pods may stand as their rows say:
// the pod's references are in their templates, which are read whole.
var triageKinds = []schema.GroupKind{replicaSetKind, statefulSetKind, daemonSetKind, jobKind, rcKind}

// podTriage is what newWhyReader reads for triage: the pods' metadata and the
// server's table of them.
type podTriage struct {
	res  informer.Resource
	meta cache.Indexer
	// table is the server's table of every namespace's pods, when it was
	// read in one (more namespaces than triageTableNamespaces); rows are
	// the rows by "namespace/name" when the tables were read namespace by
	// namespace, or of the one namespace asked about.
	table *metav1.Table
	rows  map[string]*metav1.TableRow
	cols  podTableColumns
	// tableErr is why the table could not be read.
	tableErr error
	// early are the pods read whole while the metadata was still arriving,
	// by "namespace/name": those whose rows alone say they need it.
	early map[string]*corev1.Pod
}

// triageTableNamespaces: a diagnosis of every namespace reads the pods'
// table namespace by namespace, each row then known by namespace and name,
// when there are at most this many namespaces; past that, in one table.
const triageTableNamespaces = 64

// readTriageTables reads the server's tables of the pods for triage, and
// starts reading whole, meanwhile, the pods whose rows alone say they must
// be: the metadata list is the longer read, and the GETs then wait on
// nothing. It runs beside the informers' sync, and never fails: triage
// reads every pod whole when it has no table.
func (r *whyReader) readTriageTables(ctx context.Context) {
	t := r.triage
	var tables map[string]*metav1.Table
	if r.namespace != metav1.NamespaceAll {
		tbl, err := r.s.readPodTable(ctx, t.res, r.namespace)
		if err != nil {
			t.tableErr = err
			return
		}
		tables = map[string]*metav1.Table{r.namespace: tbl}
	} else if names, err := r.s.namespaceNames(ctx); err != nil || len(names) == 0 || len(names) > triageTableNamespaces {
		// Namespaces that cannot be listed, or too many to ask one by one.
		t.table, t.tableErr = r.s.readPodTable(ctx, t.res, metav1.NamespaceAll)
		if t.tableErr == nil {
			t.cols = podColumns(t.table)
		}
		return
	} else {
		tables = make(map[string]*metav1.Table, len(names))
		var mu sync.Mutex
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(relationMaxLists)
		for _, ns := range names {
			g.Go(func() error {
				tbl, err := r.s.readPodTable(gctx, t.res, ns)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				tables[ns] = tbl
				return nil
			})
		}
		if t.tableErr = g.Wait(); t.tableErr != nil {
			return
		}
	}
	t.rows = map[string]*metav1.TableRow{}
	t.cols = podTableColumns{ready: -1, status: -1, node: -1, gates: -1}
	for ns, tbl := range tables {
		cols := podColumns(tbl)
		nameCol := slices.IndexFunc(tbl.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Format == "name" })
		if nameCol < 0 || cols.ready < 0 || cols.status < 0 || cols.node < 0 || len(t.rows) > 0 && cols != t.cols {
			// Not the columns triage reads, or not the same in each.
			t.rows, t.tableErr = nil, fmt.Errorf("the server's table of %s has not the columns triage reads", t.res.Name())
			return
		}
		t.cols = cols
		for i := range tbl.Rows {
			row := &tbl.Rows[i]
			if name, ok := cell(row, nameCol); ok {
				t.rows[ns+"/"+name] = row
			}
		}
	}
	var early []types.NamespacedName
	for key, row := range t.rows {
		if !rowRuns(row, t.cols) {
			ns, name, _ := strings.Cut(key, "/")
			early = append(early, types.NamespacedName{Namespace: ns, Name: name})
		}
	}
	if len(early)*wholeShare > len(t.rows) {
		// Every pod will be read whole, in one list.
		return
	}
	read, err := r.podsWhole(ctx, t.res, early)
	if err != nil {
		// Read again, and said, where they are needed.
		return
	}
	t.early = make(map[string]*corev1.Pod, len(read))
	for _, p := range read {
		t.early[p.Namespace+"/"+p.Name] = p
	}
}

// cell returns row's string cell i.
func cell(row *metav1.TableRow, i int) (string, bool) {
	if i < 0 || i >= len(row.Cells) {
		return "", false
	}
	s, ok := row.Cells[i].(string)
	return s, ok
}

// readPodTable reads the server's table of the pods of namespace, without
// objects and without the session's selectors (why reads every pod).
func (s *Session) readPodTable(ctx context.Context, res informer.Resource, namespace string) (*metav1.Table, error) {
	client, err := s.tableClient(ctx, res.GVR.GroupVersion())
	if err != nil {
		return nil, err
	}
	data, err := informer.TableRequest(client, res, namespace, metav1.ListOptions{}, metav1.IncludeNone).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return wire.DecodeTable(data)
}

// triagedPods fills r's pod store from r.triage: pods that stand as their
// rows say, and the others read whole; or, when triage cannot tell, every pod
// read whole.
func (r *whyReader) triagedPods(ctx context.Context) error {
	t := r.triage
	r.triage = nil
	if t == nil || t.meta == nil {
		return nil
	}
	metas := sortedByKey(t.meta.List())
	stand, early, whole := r.triageRows(ctx, t, metas)
	if whole == nil || (len(early)+len(whole))*wholeShare > len(metas) {
		klog.V(4).InfoS("why reads every pod whole", "pods", len(metas), "toRead", len(early)+len(whole), "tableErr", t.tableErr)
		return r.allPodsWhole(ctx, t.res)
	}
	klog.V(4).InfoS("why triaged the pods", "pods", len(metas), "asRowsSay", len(stand), "readEarly", len(early), "toRead", len(whole))
	// The GETs wait on the API server; the pods that stand are indexed
	// meanwhile.
	var read []*corev1.Pod
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		read, err = r.podsWhole(gctx, t.res, whole)
		return err
	})
	// Not every namespace's pods are read whole, so Requested reads a
	// node's pods for itself, and nothing looks pods up by node here.
	indexers := whyIndexers(podKind)
	delete(indexers, index.NodeIndex)
	store := index.NewStatic(cache.MetaNamespaceKeyFunc, indexers, len(metas))
	for _, p := range stand {
		if err := store.Add(p); err != nil {
			return err
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, p := range append(early, read...) {
		if err := store.Add(p); err != nil {
			return err
		}
	}
	r.stores[podKind] = store
	r.podsEverywhere = false
	return nil
}

// triageRows sorts metas into the pods that stand as their rows say, those
// read whole already (t.early, the same pod by UID), and the keys of those
// to read whole; whole is nil when the table cannot tell.
func (r *whyReader) triageRows(ctx context.Context, t *podTriage, metas []metav1.Object) (stand, read []*corev1.Pod, whole []types.NamespacedName) {
	if t.tableErr != nil || t.rows == nil && t.table == nil {
		return nil, nil, nil
	}
	if t.cols.ready < 0 || t.cols.status < 0 || t.cols.node < 0 {
		return nil, nil, nil
	}
	rowOf := t.rowOf
	if t.rows == nil {
		var ok bool
		if rowOf, ok = r.matchRows(ctx, t, metas); !ok {
			return nil, nil, nil
		}
	}
	controllers := r.triageControllers()
	nodes := r.readyNodes()
	if nodes == nil {
		return nil, nil, nil
	}
	whole = []types.NamespacedName{}
	parts := standInParts{}
	for _, m := range metas {
		key := m.GetNamespace() + "/" + m.GetName()
		if p := runningPod(m, rowOf(key), t.cols, controllers, nodes, parts); p != nil {
			stand = append(stand, p)
			continue
		}
		if p := t.early[key]; p != nil && p.UID == m.GetUID() {
			read = append(read, p)
			continue
		}
		whole = append(whole, types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()})
	}
	return stand, read, whole
}

// sortedByKey returns the objects of objs by their keys ("NS/NAME"), the
// order of the server's tables: a namespace "a" comes after "a-b".
func sortedByKey(objs []any) []metav1.Object {
	type keyed struct {
		key string
		m   metav1.Object
	}
	byKey := make([]keyed, 0, len(objs))
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok {
			byKey = append(byKey, keyed{m.GetNamespace() + "/" + m.GetName(), m})
		}
	}
	slices.SortFunc(byKey, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	out := make([]metav1.Object, len(byKey))
	for i, k := range byKey {
		out[i] = k.m
	}
	return out
}

// rowOf returns the row of the pod "namespace/name" of tables read
// namespace by namespace, nil when none.
func (t *podTriage) rowOf(key string) *metav1.TableRow { return t.rows[key] }

// matchRows finds the rows of metas, in the order of their keys, in the
// table of every namespace as tables find them (readTable), and returns the
// row of each "namespace/name".
func (r *whyReader) matchRows(ctx context.Context, t *podTriage, metas []metav1.Object) (func(string) *metav1.TableRow, bool) {
	objs := make([]runtime.Object, len(metas))
	for i, m := range metas {
		objs[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID()}}
	}
	table, err := r.s.readTable(ctx, t.res, objs, t.table)
	if err != nil {
		return nil, false
	}
	rows := make(map[string]*metav1.TableRow, len(table.Rows))
	for i := range table.Rows {
		if a, err := meta.Accessor(table.Rows[i].Object.Object); err == nil {
			rows[a.GetNamespace()+"/"+a.GetName()] = &table.Rows[i]
		}
	}
	return func(key string) *metav1.TableRow { return rows[key] }, true
}

// podTableColumns are the indexes of the pod table's columns triage reads,
// -1 where the table has none.
type podTableColumns struct {
	ready, status, node, gates int
}

func podColumns(t *metav1.Table) podTableColumns {
	at := func(name string) int {
		return slices.IndexFunc(t.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return strings.EqualFold(c.Name, name) })
	}
	return podTableColumns{ready: at("Ready"), status: at("Status"), node: at("Node"), gates: at("Readiness Gates")}
}

// triageControllers are the UIDs of the objects of triageKinds read whole.
func (r *whyReader) triageControllers() map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, gk := range triageKinds {
		for _, o := range r.objects(gk) {
			if m, ok := o.(metav1.Object); ok {
				out[m.GetUID()] = true
			}
		}
	}
	return out
}

// readyNodes are the names of the nodes that are Ready and schedulable; nil
// when the nodes could not be read.
func (r *whyReader) readyNodes() map[string]bool {
	nodes, ok := r.Nodes()
	if !ok {
		return nil
	}
	out := map[string]bool{}
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out[n.Name] = true
			}
		}
	}
	return out
}

// rowRuns reports whether row says its pod runs with every container and
// readiness gate ready, on a node.
func rowRuns(row *metav1.TableRow, cols podTableColumns) bool {
	if status, _ := cell(row, cols.status); status != string(corev1.PodRunning) {
		return false
	}
	ready, _ := cell(row, cols.ready)
	n, total, ok := fraction(ready)
	if !ok || total == 0 || n != total {
		return false
	}
	if g, _ := cell(row, cols.gates); cols.gates >= 0 && g != "<none>" {
		if met, of, ok := fraction(g); !ok || met != of {
			return false
		}
	}
	node, _ := cell(row, cols.node)
	return node != ""
}

// runningPod returns the pod m as its row says, when the row says it runs
// (rowRuns) on a node of nodes, under a controller of controllers; nil
// otherwise. Its containers, statuses and conditions are parts'.
func runningPod(m metav1.Object, row *metav1.TableRow, cols podTableColumns, controllers map[types.UID]bool, nodes map[string]bool, parts standInParts) *corev1.Pod {
	if row == nil || m.GetDeletionTimestamp() != nil {
		return nil
	}
	c := metav1.GetControllerOfNoCopy(m)
	if c == nil || !controllers[c.UID] {
		return nil
	}
	if !rowRuns(row, cols) {
		return nil
	}
	ready, _ := cell(row, cols.ready)
	_, total, _ := fraction(ready)
	node, _ := cell(row, cols.node)
	if !nodes[node] {
		return nil
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
		Generation: m.GetGeneration(), CreationTimestamp: m.GetCreationTimestamp(), Labels: m.GetLabels(),
		Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(), Finalizers: m.GetFinalizers(),
	}}
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	p.Spec.Containers, p.Status.ContainerStatuses, p.Status.Conditions = parts.of(total)
	return p
}

// standInParts are the containers, statuses and conditions of the pods that
// stand as their rows say, by number of containers: one copy for every pod
// of that many, as nothing writes a pod read for a diagnosis. At 20,000
// pods, each with its own made a third of the stand-ins' bytes.
type standInParts map[int]standIn

type standIn struct {
	containers []corev1.Container
	statuses   []corev1.ContainerStatus
	conditions []corev1.PodCondition
}

func (parts standInParts) of(n int) ([]corev1.Container, []corev1.ContainerStatus, []corev1.PodCondition) {
	s, ok := parts[n]
	if !ok {
		s = standIn{containers: make([]corev1.Container, n), statuses: make([]corev1.ContainerStatus, n),
			conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		for i := range s.statuses {
			s.statuses[i] = corev1.ContainerStatus{Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
		}
		parts[n] = s
	}
	return s.containers, s.statuses, s.conditions
}

// fraction reads "a/b".
func fraction(s string) (a, b int, ok bool) {
	x, y, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(x)
	b, err2 := strconv.Atoi(y)
	return a, b, err1 == nil && err2 == nil
}

// podsWhole reads the pods of keys whole, one GET each (at most
// relationMaxLists at once), from the API server's watch cache
// (resourceVersion 0: as current as the list they were found in). A pod gone
// since is not returned.
func (r *whyReader) podsWhole(ctx context.Context, res informer.Resource, keys []types.NamespacedName) ([]*corev1.Pod, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	client, err := r.s.podClient(ctx, res)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(relationMaxLists)
	for i, k := range keys {
		g.Go(func() error {
			p := &corev1.Pod{}
			err := client.Get().Namespace(k.Namespace).Resource(res.GVR.Resource).Name(k.Name).
				Param("resourceVersion", "0").Do(gctx).Into(p)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading pod %s: %w", k, err)
			}
			p.ManagedFields = nil
			out[i] = p
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(p *corev1.Pod) bool { return p == nil }), nil
}

// podClient returns the client podsWhole reads pods with: protobuf, and
// without the session's client-side rate (50 a second), which would make
// 600 GETs wait 6 s; podsWhole bounds them to relationMaxLists at once, and
// the API server's priority and fairness applies. Without a REST config
// (tests), the tables' client.
func (s *Session) podClient(ctx context.Context, res informer.Resource) (rest.Interface, error) {
	if s.wideConfig == nil {
		return s.tableClient(ctx, res.GVR.GroupVersion())
	}
	cfg := rest.CopyConfig(s.wideConfig)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	return informer.TypedClient(cfg, res.GVR.GroupVersion(), runtime.ContentTypeProtobuf)
}

// allPodsWhole reads every pod of r's namespace whole, as without triage.
func (r *whyReader) allPodsWhole(ctx context.Context, res informer.Resource) error {
	st, ok, err := r.readAlone(ctx, informer.Config{Namespace: r.namespace, WatchListStall: -1}, res, informer.Full, whyIndexers(podKind))
	if err != nil {
		return err
	}
	if !ok {
		r.unseen[res.Name()] = true
		return nil
	}
	r.stores[podKind] = st
	r.podsEverywhere = r.namespace == metav1.NamespaceAll
	return nil
}
