package query

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/history"
)

// The revisions the controllers keep of a workload's pod template: the
// deployment controller one ReplicaSet per template (its
// deployment.kubernetes.io/revision annotation, and revision-history for the
// numbers a rollback took from it), the statefulset and daemonset
// controllers one ControllerRevision per template (a strategic merge patch
// of the workload's spec.template). A revision's template is read as
// `kubectl rollout history --revision=N` reads it: the ReplicaSet's
// spec.template, or the patch applied to the workload as it is now; two in a
// row, diffed, are the changes of the later one.

// Annotations of a Deployment's ReplicaSets (k8s.io/kubectl/pkg/util/deployment).
const (
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	changeCauseAnnotation     = "kubernetes.io/change-cause"
)

// writeTolerance is how long before a revision's creation a manager's last
// write may be and still count as the write that made it: the controller
// creates the revision within moments of the write, and both times are kept
// to the second.
const writeTolerance = 3 * time.Second

// revisionKind keeps the revisions of StatefulSets and DaemonSets; the
// workloads' kinds are declared with why's, in whyread.go.
var revisionKind = schema.GroupKind{Group: "apps", Kind: "ControllerRevision"}

// revisionsKind is the kind that keeps the revisions of workloads of kind
// gk, and whether it has any.
func revisionsKind(gk schema.GroupKind) (schema.GroupKind, bool) {
	switch gk {
	case deploymentKind:
		return replicaSetKind, true
	case statefulSetKind, daemonSetKind:
		return revisionKind, true
	}
	return schema.GroupKind{}, false
}

// revision is one revision of a workload's pod template.
type revision struct {
	number int64
	// earlier are the numbers the revision had before a rollback took it
	// up again (a ReplicaSet's revision-history).
	earlier []int64
	// obj is the ReplicaSet or ControllerRevision, gvk its kind.
	obj metav1.Object
	gvk schema.GroupVersionKind
	// managers are obj's own managedFields, for the fields the workload's
	// do not hold (pod-template-hash); nil when unreadable.
	managers *history.Managers
	// content is obj as decoded JSON.
	content map[string]any
	// template is the pod template, decoded JSON.
	template map[string]any
	// time is when the template became this revision: obj's creation. For a
	// revision a rollback took up again, the time of that is not kept
	// (reused).
	time        time.Time
	reused      bool
	changeCause string
}

// deploymentRevisions returns the revisions of Deployment d: its
// ReplicaSets among rss, in revision order, as kubectl rollout history
// numbers them, and the numbers a rollback took from a ReplicaSet (its
// revision-history) as revisions of the same template: the first number a
// ReplicaSet had is its creation, the later ones rollbacks to it, whose
// times are not kept. A ReplicaSet without a revision annotation is passed
// over, as kubectl passes over it.
func deploymentRevisions(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) ([]revision, error) {
	var out []revision
	for _, rs := range rss {
		if !metav1.IsControlledBy(rs, d) {
			continue
		}
		n, err := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
		if err != nil {
			continue
		}
		tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&rs.Spec.Template)
		if err != nil {
			return nil, fmt.Errorf("reading the template of replicaset %s: %w", rs.Name, err)
		}
		r := revision{number: n, obj: rs, gvk: appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), template: tmpl,
			time: rs.CreationTimestamp.Time, changeCause: rs.Annotations[changeCauseAnnotation]}
		for _, h := range strings.Split(rs.Annotations[revisionHistoryAnnotation], ",") {
			if e, err := strconv.ParseInt(strings.TrimSpace(h), 10, 64); err == nil && e != n && !slices.Contains(r.earlier, e) {
				r.earlier = append(r.earlier, e)
			}
		}
		slices.Sort(r.earlier)
		for j, e := range r.earlier {
			first := r
			first.number, first.earlier, first.reused = e, nil, j > 0
			out = append(out, first)
		}
		r.reused = len(r.earlier) > 0
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b revision) int { return cmp.Compare(a.number, b.number) })
	return out, nil
}

// controllerRevisions returns the revisions of StatefulSet or DaemonSet
// workload among crs, in revision order: each ControllerRevision's patch
// applied to workload as it is now, as kubectl rollout history applies it.
func controllerRevisions(workload runtime.Object, crs []*appsv1.ControllerRevision) ([]revision, error) {
	owner, ok := workload.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("reading revisions of %T: not an object", workload)
	}
	current, err := json.Marshal(workload)
	if err != nil {
		return nil, err
	}
	var out []revision
	for _, cr := range crs {
		if !metav1.IsControlledBy(cr, owner) {
			continue
		}
		patched, err := strategicpatch.StrategicMergePatch(current, cr.Data.Raw, workload)
		if err != nil {
			return nil, fmt.Errorf("applying controllerrevision %s: %w", cr.Name, err)
		}
		var shape struct {
			Spec struct {
				Template json.RawMessage `json:"template"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(patched, &shape); err != nil {
			return nil, fmt.Errorf("applying controllerrevision %s: %w", cr.Name, err)
		}
		// Through the typed template, as kubectl decodes the workload it
		// patched: the template's JSON is the typed struct's.
		tmpl, err := typedTemplate(shape.Spec.Template)
		if err != nil {
			return nil, fmt.Errorf("reading the template of controllerrevision %s: %w", cr.Name, err)
		}
		out = append(out, revision{number: cr.Revision, obj: cr, gvk: appsv1.SchemeGroupVersion.WithKind("ControllerRevision"),
			template: tmpl, time: cr.CreationTimestamp.Time, changeCause: cr.Annotations[changeCauseAnnotation]})
	}
	slices.SortFunc(out, func(a, b revision) int { return cmp.Compare(a.number, b.number) })
	// A rollback takes an earlier ControllerRevision up again under a new
	// number: it is older than the revision before it.
	for i := 1; i < len(out); i++ {
		out[i].reused = out[i].time.Before(out[i-1].time)
	}
	return out, nil
}

// typedTemplate decodes a pod template's JSON through its Go type, as
// kubectl decodes the workload it patched, and returns it as decoded JSON.
func typedTemplate(raw json.RawMessage) (map[string]any, error) {
	var t corev1.PodTemplateSpec
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&t)
}

// minRevision is the lowest revision number revs know of, earlier numbers
// included; 0 for none.
func minRevision(revs []revision) int64 {
	var m int64
	for _, r := range revs {
		for _, n := range append([]int64{r.number}, r.earlier...) {
			if m == 0 || n < m {
				m = n
			}
		}
	}
	return m
}

// templatePath is where a workload holds its pod template, and
// templateHashPath the label the deployment controller adds to each
// ReplicaSet's.
var (
	templatePath     = history.Path{}.Field("spec").Field("template")
	templateHashPath = templatePath.Field("metadata").Field("labels").Field(appsv1.DefaultDeploymentUniqueLabelKey)
)

// revisionEntries diffs revs, each against the one before, into Rollout
// entries of the workload obj (decoded JSON, its managedFields in
// managers): each change attributed to the managers that own its fields now
// when no later revision changed them again, and each entry to those whose
// last write came when the revision was made.
func revisionEntries(workload v1alpha1.HistoryObject, obj map[string]any, managers *history.Managers, revs []revision, now metav1.Time) []v1alpha1.HistoryEntry {
	var out []v1alpha1.HistoryEntry
	changes := make([][]history.Change, len(revs))
	for i, r := range revs {
		if i == 0 {
			changes[i] = []history.Change{{Path: templatePath, New: r.template, HasNew: true}}
			continue
		}
		changes[i] = history.Diff(revs[i-1].template, r.template, history.PodTemplateKeys)
		for j := range changes[i] {
			changes[i][j].Path = append(slices.Clone(templatePath), changes[i][j].Path...)
		}
	}
	latest := revs[len(revs)-1].template
	for i, r := range revs {
		e := v1alpha1.HistoryEntry{
			Time: metav1.NewTime(r.time), Object: workload, Source: v1alpha1.SourceRevision, Action: "Rollout",
			Revision: &v1alpha1.HistoryRevision{Number: r.number, Object: v1alpha1.HistoryObjectFor(r.gvk, r.obj), ChangeCause: r.changeCause},
		}
		if r.reused {
			// A rollback: after the revision before it, before the next
			// revision made anew, or now.
			e.Time, e.Until = metav1.NewTime(r.time), &now
			if i > 0 && entryEnd(revs, i-1).After(r.time) {
				e.Time = metav1.NewTime(entryEnd(revs, i-1))
			}
			for _, next := range revs[i+1:] {
				if !next.reused {
					until := metav1.NewTime(next.time)
					e.Until = &until
					break
				}
			}
		}
		if i > 0 {
			e.Revision.Previous = revs[i-1].number
		}
		var notes []string
		switch {
		case i == 0 && minRevision(revs) > 1:
			notes = append(notes, fmt.Sprintf("the revisions before %d are no longer kept: its template is shown whole", r.number))
		case r.reused:
			notes = append(notes, "a rollback took up an earlier revision again: when is not kept, only that it came after the revision before")
		}
		var who []int
		overwritten, unowned := false, false
		for _, c := range changes[i] {
			hc := historyChange(c)
			owners, later := changeOwners(c, obj, managers, r, changes[i+1:], latest)
			overwritten = overwritten || later
			hc.Managers = fieldManagers(r, managers, owners)
			unowned = unowned || len(owners) == 0
			for _, o := range owners {
				if o.of == nil && !slices.Contains(who, o.index) {
					who = append(who, o.index)
				}
			}
			e.Changes = append(e.Changes, hc)
		}
		// What the fields' owners cannot tell (a field removed, or changed
		// again since) the time may: the manager whose last write came when
		// the revision was made.
		if managers != nil && unowned && !r.reused {
			for k, m := range managers.Entries {
				if m.Subresource == "" && m.Time != nil && wroteAt(m.Time.Time, r.time) &&
					slices.Contains(managers.Owners(obj, templatePath), k) && !slices.Contains(who, k) {
					who = append(who, k)
				}
			}
		}
		slices.Sort(who)
		for _, k := range who {
			e.Managers = append(e.Managers, fieldManager(managers.Entries[k]))
		}
		if overwritten {
			notes = append(notes, "some fields were changed again by a later revision: who set them here is no longer kept")
		}
		e.Note = strings.Join(notes, "; ")
		out = append(out, e)
	}
	return out
}

// entryEnd is the latest time revision i of revs is known to have come by:
// its creation, or for a rollback the creation of the last revision made
// anew before it.
func entryEnd(revs []revision, i int) time.Time {
	for ; i > 0 && revs[i].reused; i-- {
	}
	return revs[i].time
}

// wroteAt reports whether a manager's last write at w made a revision
// created at made.
func wroteAt(w, made time.Time) bool {
	return !w.Before(made.Add(-writeTolerance)) && !w.After(made.Add(time.Second))
}

// owner is a manager of a change's field: an entry of the workload's
// managers, or (of set) of the revision object's own.
type owner struct {
	index int
	of    *revision
}

// changeOwners returns who owns the fields c set, for those that hold what
// c set still, and whether some were changed again by a later revision
// (laterChanges). A field the workload does not hold (a ReplicaSet's
// pod-template-hash) is the revision object's own managers'.
func changeOwners(c history.Change, obj map[string]any, managers *history.Managers, r revision, laterChanges [][]history.Change, latest map[string]any) ([]owner, bool) {
	if !c.HasNew {
		return nil, false
	}
	var out []owner
	add := func(o owner) {
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	later := false
	for _, leaf := range leaves(c.Path, c.New) {
		if isKeyField(leaf) {
			// An entry's key names it: whoever touches the entry owns it.
			continue
		}
		if changedLater(leaf, laterChanges) {
			// The controller's own label changes with every revision.
			later = later || !leaf.HasPrefix(templateHashPath)
			continue
		}
		rel := leaf[len(templatePath):]
		want, _ := history.Lookup(r.template, rel)
		if now, ok := history.Lookup(latest, rel); !ok || !history.Equal(now, want) {
			continue
		}
		if cur, ok := history.Lookup(obj, leaf); ok && history.Equal(cur, want) && managers != nil {
			for _, k := range managers.Owners(obj, leaf) {
				add(owner{index: k})
			}
			continue
		}
		if r.managers != nil {
			for _, k := range r.managers.Owners(r.content, leaf) {
				add(owner{index: k, of: &r})
			}
		}
	}
	return out, later
}

// isKeyField reports whether p is the key field of the list entry it is in:
// containers[?(@.name=="web")].name.
func isKeyField(p history.Path) bool {
	n := len(p)
	return n >= 2 && p[n-2].IsKey() && p[n-1].IsField() && p[n-1].Field == p[n-2].Key
}

// changedLater reports whether a later revision changed leaf again.
func changedLater(leaf history.Path, later [][]history.Change) bool {
	for _, cs := range later {
		for _, c := range cs {
			if c.Path.Overlaps(leaf) {
				return true
			}
		}
	}
	return false
}

// leaves are the paths of the values v, at p, holds: v's own path for a
// scalar or an empty container, each list entry by its merge key where its
// list has one.
func leaves(p history.Path, v any) []history.Path {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			return []history.Path{p}
		}
		var out []history.Path
		for _, k := range sortedKeys(t) {
			out = append(out, leaves(p.Field(k), t[k])...)
		}
		return out
	case []any:
		if len(t) == 0 {
			return []history.Path{p}
		}
		key := ""
		if len(p) > len(templatePath) {
			key = history.PodTemplateKeys(p[len(templatePath):])
		}
		var out []history.Path
		for i, e := range t {
			m, ok := e.(map[string]any)
			if kv, has := m[key]; ok && key != "" && has {
				out = append(out, leaves(p.Key(key, kv), e)...)
			} else {
				out = append(out, leaves(p.Index(i), e)...)
			}
		}
		return out
	}
	return []history.Path{p}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// fieldManagers are owners as the document names them.
func fieldManagers(r revision, managers *history.Managers, owners []owner) []v1alpha1.FieldManager {
	var out []v1alpha1.FieldManager
	for _, o := range owners {
		if o.of != nil {
			out = append(out, fieldManager(r.managers.Entries[o.index]))
		} else {
			out = append(out, fieldManager(managers.Entries[o.index]))
		}
	}
	return out
}

// fieldManager names a managedFields entry.
func fieldManager(e metav1.ManagedFieldsEntry) v1alpha1.FieldManager {
	m := v1alpha1.FieldManager{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource}
	if e.Time != nil {
		t := *e.Time
		m.Time = &t
	}
	return m
}

// historyChange is c as the document holds it.
func historyChange(c history.Change) v1alpha1.HistoryChange {
	hc := v1alpha1.HistoryChange{Path: c.Path.String()}
	if c.HasOld {
		hc.Old = rawJSON(c.Old)
	}
	if c.HasNew {
		hc.New = rawJSON(c.New)
	}
	return hc
}

// rawJSON is a decoded JSON value encoded again.
func rawJSON(v any) *runtime.RawExtension {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte("null")
	}
	return &runtime.RawExtension{Raw: b}
}
