package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// Object is one object of a subtree and what it owns.
type Object struct {
	GVK schema.GroupVersionKind
	// Obj is the whole object: a typed one for the kinds client-go knows,
	// *unstructured.Unstructured otherwise. Nil when only Meta was read.
	Obj runtime.Object
	// Meta is its metadata.
	Meta     metav1.Object
	Children []*Object
}

// Sources are what a diagnosis looks up beside the subtree. The query
// engine answers them from its informers' indexes; each lookup that may
// cost a LIST (LimitRanges, Requested) is made only when a cause needs it.
// A false "known" means the objects could not be read (a type the user may
// not list): the diagnosis then names no cause that rests on them.
type Sources interface {
	// Events returns the Warning events about obj, of kind, oldest first.
	Events(kind string, obj metav1.Object) []*corev1.Event
	// Nodes returns every node.
	Nodes() (nodes []*corev1.Node, known bool)
	// Node returns the node named name, nil when it does not exist.
	Node(name string) (node *corev1.Node, known bool)
	// Exists reports whether the object of kind (ConfigMap, Secret,
	// ServiceAccount, PersistentVolumeClaim, StorageClass) named name in
	// namespace ("" for a cluster-scoped kind) exists.
	Exists(kind, namespace, name string) (exists, known bool)
	// Claim returns a PersistentVolumeClaim, nil when it does not exist.
	Claim(namespace, name string) (claim *corev1.PersistentVolumeClaim, known bool)
	// SelectedBy returns the Services and PodDisruptionBudgets of namespace
	// whose selectors match set.
	SelectedBy(namespace string, set labels.Set) []runtime.Object
	// SelectedPods returns the pods of namespace that sel matches.
	SelectedPods(namespace string, sel labels.Selector) (pods []*corev1.Pod, known bool)
	// LimitRanges returns the LimitRanges of namespace.
	LimitRanges(namespace string) (ranges []*corev1.LimitRange, known bool)
	// Requested returns what the pods bound to node request, summed as the
	// scheduler sums them, Succeeded and Failed pods left out.
	Requested(node string) (requests corev1.ResourceList, known bool)
}

// Result is the diagnosis of one subject.
type Result struct {
	Status  v1alpha1.DiagnosisStatus
	Summary string
	// Causes are worst first (see the package comment).
	Causes []v1alpha1.Cause
	// Checked counts the objects looked at, by kind.
	Checked map[string]int
}

// NotReadyGrace is how long a running pod may be not ready before it is a
// cause: a container that starts is not ready yet, one that has not been
// ready for this long does not become ready.
const NotReadyGrace = 30 * time.Second

// Ranks of the classes of causes, the order they are printed in within a
// severity.
const (
	rankCreation = iota + 1
	rankScheduling
	rankReferences
	rankRunning
	rankNodes
	rankJobs
	rankRollout
	rankDeadline
	rankServing
)

// Diagnose diagnoses root and its subtree at now.
func Diagnose(root *Object, src Sources, now time.Time) Result {
	d := &diagnosis{src: src, now: now, checked: map[string]int{}, seen: map[types.UID]bool{}, services: map[types.UID]bool{}, nodesSeen: map[string]bool{}}
	d.visit(root, nil)
	d.references(root)
	d.serving(root)
	causes := d.merged()
	healthy, summary := d.health(root)
	r := Result{Status: v1alpha1.DiagnosisHealthy, Summary: summary, Causes: causes, Checked: d.checked}
	switch {
	case len(causes) > 0:
		r.Status = v1alpha1.DiagnosisUnhealthy
	case !healthy:
		r.Status = v1alpha1.DiagnosisUnknown
	}
	return r
}

// diagnosis is one Diagnose call's state.
type diagnosis struct {
	src     Sources
	now     time.Time
	checked map[string]int
	seen    map[types.UID]bool
	causes  []*cause
	// nodeList is Sources.Nodes', read on first use; nodesSeen the nodes
	// looked up one by one.
	nodesRead bool
	nodeList  []*corev1.Node
	nodesOK   bool
	nodesSeen map[string]bool
	// services are the Services and PodDisruptionBudgets checked already.
	services map[types.UID]bool
}

// cause is a cause being gathered.
type cause struct {
	v1alpha1.Cause
	rank int
	// key identifies the cause across the pods it is found on: pods of one
	// controller with the same key are one cause.
	key string
	// pods counts the pods merged into it; group names their controller.
	pods  int
	group string
	// more words what the merged pods are, in the message.
	perPod bool
}

// add records a cause.
func (d *diagnosis) add(c *cause) {
	d.causes = append(d.causes, c)
}

// merged returns the causes, merged and in order.
func (d *diagnosis) merged() []v1alpha1.Cause {
	var out []*cause
	byKey := map[string]*cause{}
	// The most telling of the causes of one culprit is the one of the lowest
	// rank: merge in rank order, stably.
	slices.SortStableFunc(d.causes, func(a, b *cause) int { return cmp.Compare(a.rank, b.rank) })
	for _, c := range d.causes {
		key := c.key
		if key == "" {
			key = refKey(c.Object)
		}
		if prev, ok := byKey[key]; ok {
			prev.merge(c)
			continue
		}
		c.pods = max(c.pods, 1)
		byKey[key] = c
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b *cause) int {
		if a.Severity != b.Severity {
			if a.Severity == v1alpha1.SeverityError {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		return cmp.Compare(refKey(a.Object), refKey(b.Object))
	})
	causes := make([]v1alpha1.Cause, len(out))
	for i, c := range out {
		if c.perPod && c.pods > 1 {
			c.Message += fmt.Sprintf(" (%d pods of %s)", c.pods, c.group)
		}
		causes[i] = c.Cause
	}
	return causes
}

// maxEvidencePods bounds the pods whose evidence a merged cause carries.
const maxEvidencePods = 3

// merge adds o, a cause of the same key or culprit, to c.
func (c *cause) merge(o *cause) {
	if c.perPod && o.perPod && c.Reason == o.Reason {
		c.pods++
		if c.pods > maxEvidencePods {
			return
		}
	}
	for _, e := range o.Evidence {
		if !slices.ContainsFunc(c.Evidence, func(x v1alpha1.Evidence) bool { return sameEvidence(x, e) }) {
			c.Evidence = append(c.Evidence, e)
		}
	}
}

func sameEvidence(a, b v1alpha1.Evidence) bool {
	return refKey(a.Object) == refKey(b.Object) && a.Event == b.Event && a.Condition == b.Condition && a.Field == b.Field && a.Value == b.Value
}

// refKey identifies a referenced object.
func refKey(r v1alpha1.ObjectReference) string {
	gv, _ := schema.ParseGroupVersion(r.APIVersion)
	return gv.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// visit checks o and, below it, what it owns. parent is its owner in the
// subtree.
func (d *diagnosis) visit(o *Object, parent *Object) {
	uid := o.Meta.GetUID()
	if d.seen[uid] {
		return
	}
	d.seen[uid] = true
	d.checked[o.GVK.Kind]++
	gk := o.GVK.GroupKind()
	children := sorted(o.Children)
	switch gk {
	case schema.GroupKind{Group: "batch", Kind: "CronJob"}:
		// Only the last Job tells of the CronJob; the others are history.
		last := lastJob(o)
		children = nil
		for _, c := range o.Children {
			if c == last || c.GVK.Kind != "Job" {
				children = append(children, c)
			}
		}
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		// The rollout is judged once the ReplicaSets' pods are.
		below := map[types.UID]int{}
		for _, c := range children {
			before := len(d.causes)
			d.visit(c, o)
			below[c.Meta.GetUID()] = len(d.causes) - before
		}
		d.deployment(o, below)
		return
	case schema.GroupKind{Kind: "Node"}:
		// A node's pods belong to other owners: they are counted, not
		// diagnosed.
		pods := 0
		for _, c := range children {
			if c.GVK.Kind == "Pod" {
				pods++
				d.checked["Pod"]++
			}
		}
		d.node(o, pods)
		return
	}
	switch gk {
	case schema.GroupKind{Kind: "Pod"}:
		d.pod(o, parent)
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, schema.GroupKind{Kind: "ReplicationController"},
		schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		d.creation(o)
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		d.creation(o)
		d.job(o)
	case schema.GroupKind{Group: "batch", Kind: "CronJob"}:
		d.cronJob(o)
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		d.claim(o)
	case schema.GroupKind{Kind: "Service"}:
		if svc, ok := o.Obj.(*corev1.Service); ok {
			d.service(svc)
		}
	default:
		if parent == nil || o.Obj != nil && !isBuiltin(gk) {
			d.generic(o)
		}
	}
	for _, c := range children {
		d.visit(c, o)
	}
}

// sorted returns objs ordered by kind, then name: the first pod of a merged
// cause is the first by name whatever order the objects came in.
func sorted(objs []*Object) []*Object {
	out := slices.Clone(objs)
	slices.SortStableFunc(out, func(a, b *Object) int {
		if c := cmp.Compare(a.GVK.Kind, b.GVK.Kind); c != 0 {
			return c
		}
		return cmp.Compare(a.Meta.GetName(), b.Meta.GetName())
	})
	return out
}

// isBuiltin reports whether gk is a kind of Kubernetes itself.
func isBuiltin(gk schema.GroupKind) bool {
	return gk.Group == "" || strings.HasSuffix(gk.Group, ".k8s.io") || !strings.Contains(gk.Group, ".")
}

// events returns the Warning events about o, counting them as checked.
func (d *diagnosis) events(kind string, o metav1.Object) []*corev1.Event {
	evs := d.src.Events(kind, o)
	if len(evs) > 0 {
		d.checked["Event"] += len(evs)
	}
	return evs
}

// lastEvent returns the newest of the Warning events about o with one of
// reasons (any reason without), or nil.
func (d *diagnosis) lastEvent(kind string, o metav1.Object, reasons ...string) *corev1.Event {
	evs := d.events(kind, o)
	for i := len(evs) - 1; i >= 0; i-- {
		if len(reasons) == 0 || slices.Contains(reasons, evs[i].Reason) {
			return evs[i]
		}
	}
	return nil
}

// allNodes reads the nodes once.
func (d *diagnosis) allNodes() ([]*corev1.Node, bool) {
	if !d.nodesRead {
		d.nodesRead = true
		d.nodeList, d.nodesOK = d.src.Nodes()
		d.nodeList = slices.Clone(d.nodeList)
		slices.SortFunc(d.nodeList, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
		d.checked["Node"] = max(d.checked["Node"], len(d.nodeList))
	}
	return d.nodeList, d.nodesOK
}

// node looks up one node.
func (d *diagnosis) nodeNamed(name string) (*corev1.Node, bool) {
	n, known := d.src.Node(name)
	if known && !d.nodesSeen[name] {
		d.nodesSeen[name] = true
		if !d.nodesRead {
			d.checked["Node"]++
		}
	}
	return n, known
}

// Evidence helpers.

func eventEvidence(ref v1alpha1.ObjectReference, e *corev1.Event) v1alpha1.Evidence {
	ev := v1alpha1.Evidence{Object: ref, Event: e.Reason, Value: e.Message, Count: e.Count}
	if t := EventTime(e); !t.IsZero() {
		mt := metav1.NewTime(t)
		ev.LastSeen = &mt
	}
	if e.Series != nil {
		ev.Count = max(ev.Count, e.Series.Count)
	}
	return ev
}

func conditionEvidence(ref v1alpha1.ObjectReference, typ string, status corev1.ConditionStatus, reason, message string) v1alpha1.Evidence {
	return v1alpha1.Evidence{Object: ref, Condition: typ, Value: string(status), Reason: reason, Message: message}
}

func fieldEvidence(ref v1alpha1.ObjectReference, path, value string) v1alpha1.Evidence {
	return v1alpha1.Evidence{Object: ref, Field: path, Value: value}
}

// EventTime is when an event last happened: its series' last observation,
// its lastTimestamp, its eventTime or its creation.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// ref names o.
func ref(o *Object) v1alpha1.ObjectReference { return v1alpha1.Ref(o.GVK, o.Meta) }

// Kinds of the objects causes name that are not in a subtree.
var (
	nodeGVK    = corev1.SchemeGroupVersion.WithKind("Node")
	podGVK     = corev1.SchemeGroupVersion.WithKind("Pod")
	claimGVK   = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	serviceGVK = corev1.SchemeGroupVersion.WithKind("Service")
)

// coreRef names an object of a core kind that may not exist.
func coreRef(kind, namespace, name string) v1alpha1.ObjectReference {
	return v1alpha1.ObjectReference{APIVersion: "v1", Kind: kind, Namespace: namespace, Name: name}
}

// plural words n things.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sentence trims a message quoted inside a sentence of ours.
func sentence(msg string) string {
	return strings.TrimRight(strings.TrimSpace(msg), ".")
}

// Compare orders causes as Diagnose does, worst first, for a diagnosis of
// several subjects: by severity, then by class. Causes of one class compare
// equal, so a stable sort keeps each subject's own order.
func Compare(a, b v1alpha1.Cause) int {
	if a.Severity != b.Severity {
		if a.Severity == v1alpha1.SeverityError {
			return -1
		}
		return 1
	}
	return cmp.Compare(rankOf(a), rankOf(b))
}

// rankOf is the class of a cause, from its reason and culprit: the rank
// Diagnose gave it.
func rankOf(c v1alpha1.Cause) int {
	switch c.Reason {
	case "FailedCreate":
		return rankCreation
	case "FailedScheduling", "SchedulingGated":
		return rankScheduling
	case "MissingReference", "ClaimLost":
		return rankReferences
	case "RolloutStuck":
		return rankRollout
	case "ProgressDeadlineExceeded":
		return rankDeadline
	}
	switch c.Object.Kind {
	case "Node":
		return rankNodes
	case "Job", "CronJob":
		return rankJobs
	case "Service", "PodDisruptionBudget":
		return rankServing
	case "PersistentVolumeClaim":
		return rankReferences
	}
	return rankRunning
}
