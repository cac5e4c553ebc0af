package query

import (
	"context"
	"fmt"
	"maps"
	goruntime "runtime"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/diagnose"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// WhyOptions are what Why and WhyAll are asked besides the object.
type WhyOptions struct {
	// Now is the diagnosis's clock (how long a pod has not been ready);
	// zero means time.Now.
	Now time.Time
	// WholePods makes WhyAll read every pod whole rather than triage them
	// (whytriage.go): WhyPodsEnv's whole.
	WholePods bool
}

func (o WhyOptions) now() time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

// Why answers `kubectl idx why TYPE/NAME`: why obj is not serving, walked
// down its owner subtree to the causes (package diagnose). It reads whole
// objects of the kinds the subtree is made of, in obj's namespace only
// (subtreeKinds: a Deployment's ReplicaSets and pods, not the namespace's
// other types), the Services and PodDisruptionBudgets that select its pods
// (selector index), the claims and the metadata of the ConfigMaps, Secrets
// and ServiceAccounts its pod templates name, the namespace's Warning
// events (indexed by involved object) and the nodes; LimitRanges and the
// requests of a node's pods only when a cause needs them. A Node's are the
// pods bound to it; a custom resource's subtree is found as tree finds it,
// through every listable type of its namespace. --where keeps the objects
// of the subtree it matches (and those above them), the object itself
// always.
func (s *Session) Why(ctx context.Context, obj ObjectRef, opts WhyOptions) (*v1alpha1.Diagnosis, error) {
	gk := obj.Resource.GVK.GroupKind()
	ns := metav1.NamespaceAll
	if obj.Resource.Namespaced {
		ns = s.rootNamespace()
	}
	now := opts.now()
	if gk == nodeKind {
		return s.whyNode(ctx, obj, now)
	}
	kinds, builtin := subtreeKinds[gk]
	if !builtin {
		return s.whyOther(ctx, obj, ns, now)
	}
	m, err := s.whereMatcher(ctx, s.mappedKinds(kinds), false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	read := whyRead{kinds: append(slices.Clone(kinds), claimKind, serviceKind, budgetKind), refs: true, nodes: true, events: true}
	if gk == claimKind {
		read = whyRead{kinds: []schema.GroupKind{claimKind}, events: true, eventsSelector: "involvedObject.kind=PersistentVolumeClaim"}
	}
	r, err := s.newWhyReader(ctx, ns, read)
	if err != nil {
		return nil, err
	}
	defer r.shutdown()
	if err := m.ready(ctx); err != nil {
		return nil, err
	}
	g := r.graph()
	root, err := r.lookupRoot(obj, ns)
	if err != nil {
		return nil, err
	}
	subjects := []index.Node{root}
	if gk == serviceKind {
		// A Service serves through its pods: their top-level owners are
		// diagnosed with it.
		owners, err := r.servedBy(g, root)
		if err != nil {
			return nil, err
		}
		subjects = append(subjects, owners...)
	}
	doc := v1alpha1.NewDiagnosis()
	ref := v1alpha1.Ref(root.GVK, root.Object)
	doc.Subject = &ref
	checked := map[string]int{}
	seen := map[causeKey]bool{}
	for i, n := range subjects {
		tree, err := r.subtree(g, n, m, i == 0)
		if err != nil {
			return nil, err
		}
		res := diagnose.Diagnose(tree, r, now)
		addSubject(doc, seen, n, res, nil)
		for k, c := range res.Checked {
			checked[k] += c
		}
	}
	finishDiagnosis(doc, checked, r, s)
	return doc, nil
}

// lookupRoot finds the object asked about in its store, or kubectl's
// NotFound. A kind that cannot be listed is the error itself.
func (r *whyReader) lookupRoot(obj ObjectRef, ns string) (index.Node, error) {
	st, ok := r.stores[obj.Resource.GVK.GroupKind()]
	if !ok {
		return index.Node{}, fmt.Errorf("cannot list %s, so %s cannot be found", obj.Resource.Name(), obj)
	}
	o, exists, err := st.GetByKey(obj.key(ns))
	if err != nil {
		return index.Node{}, err
	}
	m, ok := o.(metav1.Object)
	if !exists || !ok {
		return index.Node{}, obj.NotFound()
	}
	return index.Node{GVK: r.resources[obj.Resource.GVK.GroupKind()].GVK, Namespaced: obj.Resource.Namespaced, Object: m}, nil
}

// servedBy returns the top-level owners of the pods Service svc selects,
// each once, sorted: what a Service serves through.
func (r *whyReader) servedBy(g *index.Graph, svc index.Node) ([]index.Node, error) {
	s, ok := r.fullOf(svc).(*corev1.Service)
	if !ok || len(s.Spec.Selector) == 0 {
		return nil, nil
	}
	pods, known := r.SelectedPods(s.Namespace, labels.SelectorFromSet(s.Spec.Selector))
	if !known {
		return nil, nil
	}
	seen := map[types.UID]bool{}
	var out []index.Node
	for _, p := range pods {
		top := r.topOwner(g, index.Node{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Namespaced: true, Object: p})
		if uid := top.Object.GetUID(); !seen[uid] {
			seen[uid] = true
			out = append(out, top)
		}
	}
	index.SortNodes(out)
	return out, nil
}

// topOwner walks n's controller references up through g as far as they
// lead: the top-level owner, n itself when nothing controls it, or the last
// owner found when the next is gone or not read.
func (r *whyReader) topOwner(g *index.Graph, n index.Node) index.Node {
	for range index.MaxOwnerDepth {
		c := metav1.GetControllerOfNoCopy(n.Object)
		if c == nil {
			return n
		}
		ref := index.RefFromOwnerReference(*c, n.Object.GetNamespace())
		gk := ref.GroupKind()
		if !g.Has(gk) {
			return n
		}
		owner, ok, err := g.ByUID(gk, c.UID)
		if err != nil || !ok {
			return n
		}
		n = owner
	}
	return n
}

// subtree builds the diagnosis's tree of n: n and what it owns, whole
// objects where read, pruned by --where's matcher (n itself always kept).
func (r *whyReader) subtree(g *index.Graph, n index.Node, m *matcher, keepRoot bool) (*diagnose.Object, error) {
	t, err := g.Descendants(n)
	if err != nil {
		return nil, err
	}
	if m != nil {
		t = pruneTree(t, func(n index.Node) bool { return m.matchNode(n, r.fullOf(n)) }, keepRoot)
	}
	return r.toObject(t, nil), nil
}

// toObject converts an index tree, with each object whole where read, or
// from full when given (a custom resource's world).
func (r *whyReader) toObject(t *index.TreeNode, full func(index.Node) runtime.Object) *diagnose.Object {
	o := &diagnose.Object{GVK: t.GVK, Meta: t.Object, Obj: r.fullOf(t.Node)}
	if o.Obj == nil && full != nil {
		o.Obj = full(t.Node)
	}
	if t.Cycle {
		return o
	}
	for _, c := range t.Children {
		o.Children = append(o.Children, r.toObject(c, full))
	}
	return o
}

// whyNode diagnoses a node: its conditions and cordon, with the pods bound
// to it counted (read as metadata, by spec.nodeName, in every namespace) and
// its Warning events.
func (s *Session) whyNode(ctx context.Context, obj ObjectRef, now time.Time) (*v1alpha1.Diagnosis, error) {
	r, err := s.newWhyReader(ctx, metav1.NamespaceAll, whyRead{nodes: true, events: true,
		eventsSelector: "involvedObject.kind=Node,involvedObject.name=" + obj.Name})
	if err != nil {
		return nil, err
	}
	defer r.shutdown()
	root, err := r.lookupRoot(obj, "")
	if err != nil {
		return nil, err
	}
	node, ok := root.Object.(*corev1.Node)
	if !ok {
		return nil, obj.NotFound()
	}
	pods, err := s.podsOn(ctx, r, obj.Name)
	if err != nil {
		return nil, err
	}
	tree := &diagnose.Object{GVK: obj.Resource.GVK, Obj: node, Meta: node}
	for _, p := range pods {
		tree.Children = append(tree.Children, &diagnose.Object{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Meta: p})
	}
	res := diagnose.Diagnose(tree, r, now)
	doc := v1alpha1.NewDiagnosis()
	ref := v1alpha1.Ref(obj.Resource.GVK, node)
	doc.Subject = &ref
	addSubject(doc, nil, index.Node{GVK: obj.Resource.GVK, Object: node}, res, nil)
	finishDiagnosis(doc, res.Checked, r, s)
	return doc, nil
}

// podsOn reads the metadata of the pods bound to node, in every namespace.
// Pods that cannot be listed are a warning: the node's own state is still
// its diagnosis.
func (s *Session) podsOn(ctx context.Context, r *whyReader, node string) ([]metav1.Object, error) {
	res, ok := r.resource(podKind)
	if !ok {
		return nil, nil
	}
	st, ok, err := r.readAlone(ctx, informer.Config{FieldSelector: "spec.nodeName=" + node}, res, informer.MetadataOnly, nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		r.unseen[res.Name()] = true
		return nil, nil
	}
	var out []metav1.Object
	for _, o := range st.List() {
		if m, ok := o.(metav1.Object); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// whyOther diagnoses an object of a kind without a plan of its own (a
// custom resource, an Ingress): its subtree is found as tree finds it,
// through every listable type of its namespace read as metadata, and the
// objects in it are then read whole: the workloads and pods by the reader,
// with everything a diagnosis looks up, other kinds as tree reads them.
func (s *Session) whyOther(ctx context.Context, obj ObjectRef, ns string, now time.Time) (*v1alpha1.Diagnosis, error) {
	m, err := s.whereMatcher(ctx, s.mappedKinds(append([]schema.GroupKind{obj.Resource.GVK.GroupKind(), podKind}, workloadKinds...)), false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	w, err := s.newWorld(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	w.indexers = cache.Indexers{index.OwnerIndex: index.OwnerIndexFunc}
	type built struct {
		r   *whyReader
		err error
	}
	readerDone := make(chan built, 1)
	go func() {
		r, err := s.newWhyReader(ctx, ns, whyRead{kinds: append([]schema.GroupKind{podKind, claimKind, serviceKind, budgetKind}, workloadKinds...), refs: true, nodes: true, events: true})
		readerDone <- built{r, err}
	}()
	worldErr := w.addListable(ctx, obj.Resource.Namespaced)
	b := <-readerDone
	if b.err != nil {
		return nil, b.err
	}
	r := b.r
	defer r.shutdown()
	if worldErr != nil {
		return nil, worldErr
	}
	root, err := w.lookupRoot(obj, s.rootNamespace())
	if err != nil {
		return nil, err
	}
	t, err := w.graph().Descendants(root)
	if err != nil {
		return nil, err
	}
	// Kinds the reader does not read are read as tree reads them.
	var others []index.Node
	for _, n := range flatten(t) {
		if _, ok := r.stores[n.GVK.GroupKind()]; !ok {
			others = append(others, n)
		}
	}
	if err := w.loadFull(ctx, others); err != nil {
		return nil, err
	}
	if err := m.ready(ctx); err != nil {
		return nil, err
	}
	full := func(n index.Node) runtime.Object {
		if o := r.fullOf(n); o != nil {
			return o
		}
		return w.fullObject(n)
	}
	if m != nil {
		t = pruneTree(t, func(n index.Node) bool {
			o := full(n)
			if o == nil {
				o, _ = n.Object.(runtime.Object)
			}
			return o != nil && m.match(n.GVK, o)
		}, true)
	}
	res := diagnose.Diagnose(r.toObject(t, w.fullObject), r, now)
	doc := v1alpha1.NewDiagnosis()
	ref := v1alpha1.Ref(root.GVK, root.Object)
	doc.Subject = &ref
	addSubject(doc, nil, root, res, nil)
	finishDiagnosis(doc, res.Checked, r, s)
	return doc, nil
}

// WhyAll answers `kubectl idx why` without an object: every top-level owner
// of the session's namespace (every namespace with -A) diagnosed, and every
// Service with a selector. The workload kinds, claims, Services and
// PodDisruptionBudgets are read whole, once, for all of them; the pods as
// metadata beside the server's table of them, and whole only where the table
// does not say they run ready (whytriage.go), unless --where, the warm cache
// or opts ask for every pod whole; the owners of pods that no workload kind
// holds (custom resources) as metadata. --where keeps the subjects it
// matches.
func (s *Session) WhyAll(ctx context.Context, opts WhyOptions) (*v1alpha1.Diagnosis, error) {
	ns := s.cfg.Namespace
	kinds := append([]schema.GroupKind{podKind, serviceKind}, workloadKinds...)
	m, err := s.whereMatcher(ctx, s.mappedKinds(kinds), false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	// --where may read any field of a pod, and the warm cache holds them
	// whole: only a direct run without it triages.
	triage := m == nil && !opts.WholePods && s.source() == informer.OneShot
	r, err := s.newWhyReader(ctx, ns, whyRead{kinds: append(slices.Clone(kinds), claimKind, budgetKind), refs: true, nodes: true, events: true, triagePods: triage})
	if err != nil {
		return nil, err
	}
	defer r.shutdown()
	if err := r.triagedPods(ctx); err != nil {
		return nil, err
	}
	if _, ok := r.stores[podKind]; !ok {
		return nil, fmt.Errorf("cannot list pods, so no workload can be diagnosed")
	}
	r.addOwnerKinds(ctx)
	if err := m.ready(ctx); err != nil {
		return nil, err
	}
	g := r.graph()
	// The top-level owners: of every object of the workload kinds and every
	// pod, the last controller its references lead to; and the Services.
	tops := map[types.UID]index.Node{}
	for _, gk := range append([]schema.GroupKind{podKind}, workloadKinds...) {
		res, ok := r.resources[gk]
		if !ok {
			continue
		}
		for _, o := range r.objects(gk) {
			mo, ok := o.(metav1.Object)
			if !ok {
				continue
			}
			top := r.topOwner(g, index.Node{GVK: res.GVK, Namespaced: res.Namespaced, Object: mo})
			tops[top.Object.GetUID()] = top
		}
	}
	if res, ok := r.resources[serviceKind]; ok {
		for _, o := range r.objects(serviceKind) {
			if svc, ok := o.(*corev1.Service); ok && len(svc.Spec.Selector) > 0 {
				tops[svc.UID] = index.Node{GVK: res.GVK, Namespaced: true, Object: svc}
			}
		}
	}
	subjects := slices.Collect(maps.Values(tops))
	index.SortNodes(subjects)
	doc := v1alpha1.NewDiagnosis()
	doc.Namespace = ns
	now := opts.now()
	if m != nil {
		subjects = slices.DeleteFunc(subjects, func(n index.Node) bool {
			obj := r.fullOf(n)
			if obj == nil {
				obj, _ = n.Object.(runtime.Object)
			}
			return obj == nil || !m.match(n.GVK, obj)
		})
	}
	// The subjects are diagnosed on every processor, and added up in
	// their order: a cause two subjects share stays under the first.
	results := make([]diagnose.Result, len(subjects))
	var eg errgroup.Group
	eg.SetLimit(goruntime.GOMAXPROCS(0))
	for i, n := range subjects {
		eg.Go(func() error {
			tree, err := r.subtree(g, n, nil, true)
			if err != nil {
				return err
			}
			results[i] = diagnose.Diagnose(tree, r, now)
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	seen := map[causeKey]bool{}
	for i, n := range subjects {
		ref := v1alpha1.Ref(n.GVK, n.Object)
		addSubject(doc, seen, n, results[i], &ref)
	}
	// What was read, rather than what each subject looked at: the subjects
	// share their nodes, Services and events.
	checked := map[string]int{}
	for gk, st := range r.stores {
		if n := len(st.ListKeys()); n > 0 {
			checked[gk.Kind] = n
		}
	}
	if r.events != nil && len(r.events.ListKeys()) > 0 {
		checked["Event"] = len(r.events.ListKeys())
	}
	finishDiagnosis(doc, checked, r, s)
	return doc, nil
}

// addSubject adds a subject's diagnosis to doc: its status, and its causes
// that doc does not hold already (two subjects' pods on one node that does
// not report are one cause, under the first). seen holds the causes doc holds,
// when it adds up several subjects; nil for doc's only one. subject is set on
// the causes of a diagnosis of every top-level owner.
func addSubject(doc *v1alpha1.Diagnosis, seen map[causeKey]bool, n index.Node, res diagnose.Result, subject *v1alpha1.ObjectReference) {
	if seen == nil {
		seen = map[causeKey]bool{}
		for _, c := range doc.Causes {
			seen[keyOfCause(c)] = true
		}
	}
	doc.Subjects = append(doc.Subjects, v1alpha1.SubjectStatus{Object: v1alpha1.Ref(n.GVK, n.Object), Status: res.Status, Summary: res.Summary})
	for _, c := range res.Causes {
		k := keyOfCause(c)
		if seen[k] {
			continue
		}
		seen[k] = true
		if subject != nil {
			sub := *subject
			c.Subject = &sub
		}
		doc.Causes = append(doc.Causes, c)
	}
}

// causeKey is what makes two causes one: the same reason, of the same
// culprit.
type causeKey struct {
	reason, apiVersion, kind, namespace, name string
}

func keyOfCause(c v1alpha1.Cause) causeKey {
	return causeKey{c.Reason, c.Object.APIVersion, c.Object.Kind, c.Object.Namespace, c.Object.Name}
}

// finishDiagnosis orders doc's causes worst first across its subjects, sets
// its status (the worst of its subjects'), what was checked and not seen,
// and the session's warnings.
func finishDiagnosis(doc *v1alpha1.Diagnosis, checked map[string]int, r *whyReader, s *Session) {
	slices.SortStableFunc(doc.Causes, diagnose.Compare)
	doc.Status = v1alpha1.DiagnosisHealthy
	for _, sub := range doc.Subjects {
		switch {
		case sub.Status == v1alpha1.DiagnosisUnhealthy:
			doc.Status = v1alpha1.DiagnosisUnhealthy
		case sub.Status == v1alpha1.DiagnosisUnknown && doc.Status == v1alpha1.DiagnosisHealthy:
			doc.Status = v1alpha1.DiagnosisUnknown
		}
	}
	if len(doc.Causes) > 0 {
		doc.Status = v1alpha1.DiagnosisUnhealthy
	}
	for _, k := range slices.Sorted(maps.Keys(checked)) {
		doc.Checked = append(doc.Checked, v1alpha1.CheckedKind{Kind: k, Count: checked[k]})
	}
	doc.Unseen = r.unseenTypes()
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
}
