package query

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

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
	res   informer.Resource
	meta  cache.Indexer
	table *metav1.Table
	// tableErr is why the table could not be read.
	tableErr error
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
	metas := make([]metav1.Object, 0, len(t.meta.ListKeys()))
	for _, o := range t.meta.List() {
		if m, ok := o.(metav1.Object); ok {
			metas = append(metas, m)
		}
	}
	stand, whole := r.triageRows(ctx, t, metas)
	if whole == nil || len(whole)*wholeShare > len(metas) {
		klog.V(4).InfoS("why reads every pod whole", "pods", len(metas), "toRead", len(whole), "tableErr", t.tableErr)
		return r.allPodsWhole(ctx, t.res)
	}
	klog.V(4).InfoS("why triaged the pods", "pods", len(metas), "asRowsSay", len(stand), "toRead", len(whole))
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, whyIndexers(podKind))
	for _, p := range stand {
		if err := store.Add(p); err != nil {
			return err
		}
	}
	read, err := r.podsWhole(ctx, t.res, whole)
	if err != nil {
		return err
	}
	for _, p := range read {
		if err := store.Add(p); err != nil {
			return err
		}
	}
	r.stores[podKind] = store
	r.podsEverywhere = false
	return nil
}

// triageRows sorts metas into the pods that stand as their rows say and the
// keys of those to read whole; whole is nil when the table cannot tell.
func (r *whyReader) triageRows(ctx context.Context, t *podTriage, metas []metav1.Object) (stand []*corev1.Pod, whole []types.NamespacedName) {
	if t.tableErr != nil || t.table == nil {
		return nil, nil
	}
	cols := podColumns(t.table)
	if cols.ready < 0 || cols.status < 0 || cols.node < 0 {
		return nil, nil
	}
	// The table's order: by namespace and name as the server keys them.
	slices.SortFunc(metas, func(a, b metav1.Object) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	objs := make([]runtime.Object, len(metas))
	for i, m := range metas {
		objs[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID()}}
	}
	table, err := r.s.readTable(ctx, t.res, objs, t.table)
	if err != nil {
		return nil, nil
	}
	rowOf := make(map[runtime.Object]*metav1.TableRow, len(table.Rows))
	for i := range table.Rows {
		rowOf[table.Rows[i].Object.Object] = &table.Rows[i]
	}
	controllers := r.triageControllers()
	nodes := r.readyNodes()
	if nodes == nil {
		return nil, nil
	}
	whole = []types.NamespacedName{}
	for i, m := range metas {
		if p := runningPod(m, rowOf[objs[i]], cols, controllers, nodes); p != nil {
			stand = append(stand, p)
			continue
		}
		whole = append(whole, types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()})
	}
	return stand, whole
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

// runningPod returns the pod m as its row says, when the row says it runs
// with every container and readiness gate ready on a node of nodes, under a
// controller of controllers; nil otherwise.
func runningPod(m metav1.Object, row *metav1.TableRow, cols podTableColumns, controllers map[types.UID]bool, nodes map[string]bool) *corev1.Pod {
	if row == nil || m.GetDeletionTimestamp() != nil {
		return nil
	}
	c := metav1.GetControllerOfNoCopy(m)
	if c == nil || !controllers[c.UID] {
		return nil
	}
	cell := func(i int) string {
		if i < 0 || i >= len(row.Cells) {
			return ""
		}
		s, _ := row.Cells[i].(string)
		return s
	}
	if cell(cols.status) != string(corev1.PodRunning) {
		return nil
	}
	ready, total, ok := fraction(cell(cols.ready))
	if !ok || total == 0 || ready != total {
		return nil
	}
	if cols.gates >= 0 {
		if g := cell(cols.gates); g != "<none>" {
			if met, of, ok := fraction(g); !ok || met != of {
				return nil
			}
		}
	}
	node := cell(cols.node)
	if !nodes[node] {
		return nil
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
		Generation: m.GetGeneration(), CreationTimestamp: m.GetCreationTimestamp(), Labels: m.GetLabels(),
		Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(), Finalizers: m.GetFinalizers(),
	}}
	p.Spec.NodeName = node
	p.Spec.Containers = make([]corev1.Container, total)
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	p.Status.ContainerStatuses = make([]corev1.ContainerStatus, total)
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i] = corev1.ContainerStatus{Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	return p
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
	f, err := r.s.newWideFactory(informer.Config{Namespace: r.namespace, WatchListStall: -1})
	if err != nil {
		return err
	}
	r.factories = append(r.factories, f)
	inf, err := f.Informer(res, informer.Full, whyIndexers(podKind))
	if err != nil {
		return err
	}
	failed, err := r.s.syncPartial(ctx, f, informer.Full, whyWarning)
	if err != nil {
		return err
	}
	if failed[res.GVR] {
		r.unseen[res.Name()] = true
		return nil
	}
	r.stores[podKind] = inf.GetIndexer()
	r.podsEverywhere = r.namespace == metav1.NamespaceAll
	return nil
}
