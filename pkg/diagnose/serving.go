package diagnose

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
)

// servingSetsCompared is how many distinct label sets serving compares a
// pod's labels with before it keys them all.
const servingSetsCompared = 8

// serving checks the Services and PodDisruptionBudgets that select the
// subtree's pods, or the pods its template makes (a workload that has none
// yet is still selected).
func (d *diagnosis) serving(root *Object) {
	ns := root.Meta.GetNamespace()
	if ns == "" {
		return
	}
	sets := map[string]labels.Set{}
	// A workload's pods mostly carry a few sets of labels (its template's,
	// and one per zone or revision): those are compared with the sets met
	// so far rather than each printed as a key.
	var met []map[string]string
	add := func(set map[string]string) {
		if len(set) == 0 || slices.ContainsFunc(met, func(m map[string]string) bool { return maps.Equal(m, set) }) {
			return
		}
		sets[labels.Set(set).String()] = set
		if len(met) < servingSetsCompared {
			met = append(met, set)
		}
	}
	add(templateLabels(root.Obj))
	walk(root, func(o *Object) {
		if p, ok := o.Obj.(*corev1.Pod); ok && p.DeletionTimestamp == nil && !terminal(p) {
			add(p.Labels)
		}
	})
	for _, key := range slices.Sorted(maps.Keys(sets)) {
		for _, obj := range d.src.SelectedBy(ns, sets[key]) {
			switch o := obj.(type) {
			case *corev1.Service:
				d.service(o)
			case *policyv1.PodDisruptionBudget:
				d.disruptionBudget(o)
			}
		}
	}
}

// templateLabels returns the labels of the pods obj's template makes.
func templateLabels(obj runtime.Object) map[string]string {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Labels
	case *corev1.PodTemplate:
		// A template of its own makes no pods.
		return nil
	}
	if t, _ := index.PodTemplateOf(obj); t != nil {
		return t.Labels
	}
	return nil
}

// walk calls fn on o and everything below it.
func walk(o *Object, fn func(*Object)) {
	fn(o)
	for _, c := range o.Children {
		walk(c, fn)
	}
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// service names a Service whose selector matches no ready pod.
func (d *diagnosis) service(svc *corev1.Service) {
	if d.services[svc.UID] {
		return
	}
	d.services[svc.UID] = true
	d.checked["Service"]++
	if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	pods, ok := d.src.SelectedPods(svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector))
	if !ok {
		return
	}
	alive := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil || terminal(p) {
			continue
		}
		alive++
		if podReady(p) {
			return
		}
	}
	r := v1alpha1.Ref(serviceGVK, svc)
	sel := labels.Set(svc.Spec.Selector).String()
	msg := fmt.Sprintf("Service %s selects no pod (selector %s)", svc.Name, sel)
	if alive > 0 {
		msg = fmt.Sprintf("Service %s selects %s, none of them ready", svc.Name, plural(alive, "pod", "pods"))
	}
	d.add(&cause{Cause: v1alpha1.Cause{Reason: "NoReadyPods", Severity: v1alpha1.SeverityError, Object: r, Message: msg,
		Evidence: []v1alpha1.Evidence{fieldEvidence(r, "spec.selector", sel)}}, rank: rankServing})
}

// disruptionBudget names a PodDisruptionBudget that allows no disruption:
// a drain of a node its pods run on waits for ever.
func (d *diagnosis) disruptionBudget(pdb *policyv1.PodDisruptionBudget) {
	if d.services[pdb.UID] {
		return
	}
	d.services[pdb.UID] = true
	d.checked["PodDisruptionBudget"]++
	st := pdb.Status
	if st.ObservedGeneration < pdb.Generation || st.DisruptionsAllowed > 0 || st.ExpectedPods == 0 {
		return
	}
	r := v1alpha1.Ref(policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), pdb)
	ev := []v1alpha1.Evidence{fieldEvidence(r, "status.disruptionsAllowed", "0")}
	reason := "InsufficientPods"
	for _, c := range st.Conditions {
		if c.Type == policyv1.DisruptionAllowedCondition {
			reason = orDefault(c.Reason, reason)
			ev = append(ev, conditionEvidence(r, c.Type, corev1.ConditionStatus(c.Status), c.Reason, c.Message))
		}
	}
	bound := ""
	switch {
	case pdb.Spec.MinAvailable != nil:
		bound = "minAvailable " + pdb.Spec.MinAvailable.String()
	case pdb.Spec.MaxUnavailable != nil:
		bound = "maxUnavailable " + pdb.Spec.MaxUnavailable.String()
	}
	d.add(&cause{Cause: v1alpha1.Cause{Reason: reason, Severity: v1alpha1.SeverityWarning, Object: r,
		Message: fmt.Sprintf("PodDisruptionBudget %s allows no disruption (%s): %d of %d pods healthy, %d must stay, so a drain cannot evict any",
			pdb.Name, bound, st.CurrentHealthy, st.ExpectedPods, st.DesiredHealthy),
		Evidence: ev}, rank: rankServing})
}

// references names the ConfigMaps, Secrets, ServiceAccounts and claims the
// pod specs of the subtree name that do not exist. Only the specs that make
// pods now count: not a ReplicaSet scaled to zero, a finished Job or pod, a
// suspended CronJob.
func (d *diagnosis) references(root *Object) {
	type found struct {
		ref  index.Reference
		by   *Object
		path string
	}
	var refs []found
	seen := map[string]bool{}
	var visit func(o *Object)
	visit = func(o *Object) {
		if active(o.Obj) {
			if spec, ok := index.PodSpecOf(o.Obj); ok {
				podName, prefix := "", specPath(o.Obj)
				if o.GVK.Kind == "Pod" {
					podName = o.Meta.GetName()
				}
				for _, r := range index.SpecReferences(spec, podName) {
					key := r.Kind + "/" + r.Name
					if r.Optional || seen[key] || slices.ContainsFunc(r.Via, func(v string) bool { return strings.HasPrefix(v, "ephemeral volume") }) {
						continue
					}
					seen[key] = true
					refs = append(refs, found{ref: r, by: o, path: prefix})
				}
			}
		}
		children := o.Children
		if o.GVK.Kind == "CronJob" {
			children = nil
			if last := lastJob(o); last != nil {
				children = []*Object{last}
			}
		}
		for _, c := range children {
			visit(c)
		}
	}
	visit(root)
	ns := root.Meta.GetNamespace()
	for _, f := range refs {
		exists, known := d.src.Exists(f.ref.Kind, ns, f.ref.Name)
		if !known {
			continue
		}
		d.checked[f.ref.Kind]++
		if exists {
			continue
		}
		r := coreRef(f.ref.Kind, ns, f.ref.Name)
		r.Missing = true
		by := ref(f.by)
		var ev []v1alpha1.Evidence
		severity := v1alpha1.SeverityWarning
		for _, via := range f.ref.Via {
			ev = append(ev, fieldEvidence(by, viaPath(f.path, via), f.ref.Name))
			if via != "imagePullSecrets" {
				severity = v1alpha1.SeverityError
			}
		}
		what := "pod template of " + f.by.GVK.Kind + " " + f.by.Meta.GetName()
		if f.by.GVK.Kind == "Pod" {
			what = "pod " + f.by.Meta.GetName()
		}
		d.add(&cause{Cause: v1alpha1.Cause{Reason: "MissingReference", Severity: severity, Object: r,
			Message:  fmt.Sprintf("%s %s does not exist, yet the %s uses it (%s)", f.ref.Kind, f.ref.Name, what, strings.Join(f.ref.Via, ", ")),
			Evidence: ev}, rank: rankReferences})
	}
}

// active reports whether obj makes pods now, or is a running pod.
func active(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		return replicas(o.Spec.Replicas) > 0
	case *corev1.ReplicationController:
		return replicas(o.Spec.Replicas) > 0
	case *batchv1.Job:
		return !jobFinished(o)
	case *batchv1.CronJob:
		return o.Spec.Suspend == nil || !*o.Spec.Suspend
	case *corev1.Pod:
		return o.DeletionTimestamp == nil && !terminal(o)
	}
	return obj != nil
}

// specPath is the path of obj's pod spec.
func specPath(obj runtime.Object) string {
	switch obj.(type) {
	case *corev1.Pod:
		return "spec"
	case *batchv1.CronJob:
		return "spec.jobTemplate.spec.template.spec"
	}
	return "spec.template.spec"
}

// viaPath turns a Reference's via ("volume config", "env app/LOG_LEVEL")
// into the field it names under prefix.
func viaPath(prefix, via string) string {
	words := strings.Fields(via)
	list := "containers"
	if len(words) > 1 && (words[0] == "initContainer" || words[0] == "ephemeralContainer") {
		list, words = words[0]+"s", words[1:]
	}
	switch {
	case len(words) >= 2 && words[0] == "volume":
		path := prefix + ".volumes[" + words[1] + "]"
		if len(words) > 2 {
			path += "." + words[2]
		}
		return path
	case len(words) >= 3 && words[0] == "projected" && words[1] == "volume":
		return prefix + ".volumes[" + words[2] + "].projected"
	case len(words) == 2 && words[0] == "env":
		c, v, _ := strings.Cut(words[1], "/")
		return prefix + "." + list + "[" + c + "].env[" + v + "]"
	case len(words) == 2 && words[0] == "envFrom":
		return prefix + "." + list + "[" + words[1] + "].envFrom"
	case len(words) >= 1 && words[0] == "serviceAccountName":
		return prefix + ".serviceAccountName"
	case len(words) >= 1 && words[0] == "serviceAccount":
		return prefix + ".serviceAccount"
	case via == "imagePullSecrets":
		return prefix + ".imagePullSecrets"
	}
	return prefix + " (" + via + ")"
}
