package diagnose

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// revisionAnnotation is the Deployment controller's revision of a
// Deployment and of each of its ReplicaSets: the new ReplicaSet is the one
// of the Deployment's revision.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// replicas is a replica count that defaults to 1.
func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// short reports whether a controller of pods has fewer than it wants: only
// then is a FailedCreate of its a cause, not history.
func short(obj any) bool {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		return replicas(o.Spec.Replicas) > o.Status.Replicas
	case *corev1.ReplicationController:
		return replicas(o.Spec.Replicas) > o.Status.Replicas
	case *appsv1.StatefulSet:
		return replicas(o.Spec.Replicas) > o.Status.Replicas
	case *appsv1.DaemonSet:
		return o.Status.DesiredNumberScheduled > o.Status.CurrentNumberScheduled
	case *batchv1.Job:
		if jobFinished(o) || o.Spec.Suspend != nil && *o.Spec.Suspend {
			return false
		}
		return o.Status.Active < replicas(o.Spec.Parallelism)
	}
	return false
}

// jobCondition returns the condition of j of type typ that is True, or nil.
func jobCondition(j *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == typ && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func jobFinished(j *batchv1.Job) bool {
	return jobCondition(j, batchv1.JobComplete) != nil || jobCondition(j, batchv1.JobFailed) != nil
}

// creation names why a controller cannot create its pods: its
// ReplicaFailure condition (ReplicaSets, ReplicationControllers) or its last
// FailedCreate event, the admission error they carry read for the object
// that refused.
func (d *diagnosis) creation(o *Object) {
	if !short(o.Obj) {
		return
	}
	r := ref(o)
	var msg string
	var ev []v1alpha1.Evidence
	switch c := replicaFailure(o.Obj); {
	case c != nil:
		msg = c.Message
		ev = append(ev, conditionEvidence(r, "ReplicaFailure", c.Status, c.Reason, c.Message))
	}
	if e := d.lastEvent(o.GVK.Kind, o.Meta, "FailedCreate"); e != nil {
		if msg == "" {
			msg = e.Message
		}
		ev = append(ev, eventEvidence(r, e))
	}
	if msg == "" {
		return
	}
	culprit, words := d.refusedBy(msg, o)
	d.add(&cause{Cause: v1alpha1.Cause{Reason: "FailedCreate", Severity: v1alpha1.SeverityError, Object: culprit, Message: words, Evidence: ev}, rank: rankCreation})
}

// replicaFailure returns the ReplicaFailure condition of a ReplicaSet or
// ReplicationController, when True.
func replicaFailure(obj any) *corev1.ReplicationControllerCondition {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		for _, c := range o.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				return &corev1.ReplicationControllerCondition{Type: corev1.ReplicationControllerReplicaFailure, Status: c.Status, Reason: c.Reason, Message: c.Message}
			}
		}
	case *corev1.ReplicationController:
		for i, c := range o.Status.Conditions {
			if c.Type == corev1.ReplicationControllerReplicaFailure && c.Status == corev1.ConditionTrue {
				return &o.Status.Conditions[i]
			}
		}
	}
	return nil
}

// Admission errors a FailedCreate carries, as the API server words them.
var (
	// resourcequota's: "exceeded quota: NAME, requested: ..., used: ...,
	// limited: ...".
	quotaRE = regexp.MustCompile(`exceeded quota: ([^,\s]+), (.*)$`)
	// serviceaccount's: "error looking up service account NS/NAME: ...".
	serviceAccountRE = regexp.MustCompile(`error looking up service account ([^/\s]+)/([^:\s]+): (.*)$`)
	// ValidatingAdmissionPolicy's: "ValidatingAdmissionPolicy 'NAME' with
	// binding 'BINDING' denied request: MESSAGE".
	policyRE = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']+)'(?: with binding '([^']+)')? denied request: (.*)$`)
	// LimitRanger's: "maximum cpu usage per Container is 500m, but limit is
	// 1", "minimum memory usage per Pod is ...", "cpu max limit to request
	// ratio per Container is 2, but ...". It does not name the LimitRange.
	limitRE = regexp.MustCompile(`(?:(maximum|minimum) (\S+) usage per (\w+) is ([^,. ]+)|(\S+) (max) limit to request ratio per (\w+) is ([^,. ]+))`)
)

// refusedBy reads the admission error of a FailedCreate message for the
// object that refused the pods, and words it. An error it cannot place
// names the controller itself.
func (d *diagnosis) refusedBy(msg string, o *Object) (v1alpha1.ObjectReference, string) {
	ns := o.Meta.GetNamespace()
	why := msg
	if _, after, ok := strings.Cut(msg, " is forbidden: "); ok {
		why = after
	} else {
		why = strings.TrimPrefix(why, "Error creating: ")
	}
	if m := quotaRE.FindStringSubmatch(why); m != nil {
		return coreRef("ResourceQuota", ns, m[1]), fmt.Sprintf("ResourceQuota %s is used up, so no pod can be created: %s", m[1], sentence(m[2]))
	}
	if m := serviceAccountRE.FindStringSubmatch(why); m != nil && m[1] == ns {
		r := coreRef("ServiceAccount", ns, m[2])
		if strings.Contains(m[3], "not found") {
			r.Missing = true
			return r, fmt.Sprintf("ServiceAccount %s does not exist, so no pod can be created", m[2])
		}
		return r, fmt.Sprintf("ServiceAccount %s cannot be read, so no pod can be created: %s", m[2], sentence(m[3]))
	}
	if m := policyRE.FindStringSubmatch(why); m != nil {
		r := v1alpha1.ObjectReference{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy", Name: m[1]}
		words := fmt.Sprintf("ValidatingAdmissionPolicy %s denies the pods", m[1])
		if m[2] != "" {
			words += fmt.Sprintf(" (binding %s)", m[2])
		}
		return r, words + ": " + sentence(m[3])
	}
	if m := limitRE.FindStringSubmatch(why); m != nil {
		if lr := d.limitRange(ns, m); lr != nil {
			return v1alpha1.Ref(corev1.SchemeGroupVersion.WithKind("LimitRange"), lr), fmt.Sprintf("LimitRange %s refuses the pods: %s", lr.Name, sentence(why))
		}
	}
	return ref(o), fmt.Sprintf("%s %s cannot create its pods: %s", o.GVK.Kind, o.Meta.GetName(), sentence(why))
}

// limitRange finds the LimitRange of namespace whose limit LimitRanger's
// message m (limitRE's submatches) quotes: the one with that bound for that
// resource and type, or the only LimitRange of the namespace.
func (d *diagnosis) limitRange(namespace string, m []string) *corev1.LimitRange {
	ranges, ok := d.src.LimitRanges(namespace)
	if !ok {
		return nil
	}
	d.checked["LimitRange"] += len(ranges)
	bound, res, typ, value := m[1], m[2], m[3], m[4]
	if m[6] != "" {
		bound, res, typ, value = "ratio", m[5], m[7], m[8]
	}
	want, err := resource.ParseQuantity(value)
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if string(item.Type) != typ {
				continue
			}
			list := item.Max
			switch bound {
			case "minimum":
				list = item.Min
			case "ratio":
				list = item.MaxLimitRequestRatio
			}
			if q, ok := list[corev1.ResourceName(res)]; ok && err == nil && q.Cmp(want) == 0 {
				return lr
			}
		}
	}
	if len(ranges) == 1 {
		return ranges[0]
	}
	return nil
}

// deployment names a Deployment past its progress deadline, and a rollout
// stuck with the old ReplicaSets still running and causes under the new
// one. below counts the causes found under each ReplicaSet.
func (d *diagnosis) deployment(o *Object, below map[types.UID]int) {
	dep, ok := o.Obj.(*appsv1.Deployment)
	if !ok {
		return
	}
	r := ref(o)
	deadline := false
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			deadline = true
			secs := int32(600)
			if dep.Spec.ProgressDeadlineSeconds != nil {
				secs = *dep.Spec.ProgressDeadlineSeconds
			}
			d.add(&cause{Cause: v1alpha1.Cause{Reason: c.Reason, Severity: v1alpha1.SeverityError, Object: r,
				Message:  fmt.Sprintf("the Deployment made no progress within its deadline of %ds: %s", secs, sentence(c.Message)),
				Evidence: []v1alpha1.Evidence{conditionEvidence(r, string(c.Type), c.Status, c.Reason, c.Message)}}, rank: rankDeadline})
		}
	}
	if dep.Spec.Paused {
		return
	}
	var newRS *Object
	var old []*appsv1.ReplicaSet
	for _, c := range o.Children {
		rs, ok := c.Obj.(*appsv1.ReplicaSet)
		if !ok {
			continue
		}
		if rev := dep.Annotations[revisionAnnotation]; rev != "" && rs.Annotations[revisionAnnotation] == rev {
			newRS = c
		} else if rs.Status.Replicas > 0 {
			old = append(old, rs)
		}
	}
	if newRS == nil || len(old) == 0 || below[newRS.Meta.GetUID()] == 0 && !deadline {
		return
	}
	rs := newRS.Obj.(*appsv1.ReplicaSet)
	nr := ref(newRS)
	running := int32(0)
	var names []string
	var ev []v1alpha1.Evidence
	for _, o := range old {
		running += o.Status.Replicas
		names = append(names, o.Name)
		ev = append(ev, fieldEvidence(v1alpha1.Ref(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), o), "status.replicas", fmt.Sprint(o.Status.Replicas)))
	}
	d.add(&cause{Cause: v1alpha1.Cause{Reason: "RolloutStuck", Severity: v1alpha1.SeverityError, Object: nr,
		Message: fmt.Sprintf("the rollout to ReplicaSet %s is stuck at %d of %d pods available, while ReplicaSet %s still runs %s",
			rs.Name, rs.Status.AvailableReplicas, replicas(rs.Spec.Replicas), strings.Join(names, ", "), plural(int(running), "pod", "pods")),
		Evidence: append([]v1alpha1.Evidence{fieldEvidence(nr, "status.availableReplicas", fmt.Sprint(rs.Status.AvailableReplicas))}, ev...)}, rank: rankRollout})
}

// job names a failed or suspended Job.
func (d *diagnosis) job(o *Object) {
	j, ok := o.Obj.(*batchv1.Job)
	if !ok {
		return
	}
	r := ref(o)
	if c := jobCondition(j, batchv1.JobFailed); c != nil {
		ev := []v1alpha1.Evidence{conditionEvidence(r, string(c.Type), c.Status, c.Reason, c.Message)}
		msg := fmt.Sprintf("Job %s failed", j.Name)
		if c.Message != "" {
			msg += ": " + sentence(c.Message)
		}
		// The pods it failed with, the last first.
		pods := podsOf(o)
		for i := len(pods) - 1; i >= 0; i-- {
			p := pods[i]
			if t := lastTermination(p); t != nil && p.Status.Phase == corev1.PodFailed {
				pr := v1alpha1.Ref(podGVK, p)
				ev = append(ev, fieldEvidence(pr, "status.containerStatuses["+t.name+"].state.terminated.reason", fmt.Sprintf("%s (exit code %d)", t.state.Reason, t.state.ExitCode)))
				msg += fmt.Sprintf("; pod %s's container %s terminated with %s (exit code %d)", p.Name, t.name, orDefault(t.state.Reason, "an error"), t.state.ExitCode)
				break
			}
		}
		d.add(&cause{Cause: v1alpha1.Cause{Reason: orDefault(c.Reason, "Failed"), Severity: v1alpha1.SeverityError, Object: r, Message: msg, Evidence: ev}, rank: rankJobs})
		return
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		ev := []v1alpha1.Evidence{fieldEvidence(r, "spec.suspend", "true")}
		if c := jobCondition(j, batchv1.JobSuspended); c != nil {
			ev = append(ev, conditionEvidence(r, string(c.Type), c.Status, c.Reason, c.Message))
		}
		d.add(&cause{Cause: v1alpha1.Cause{Reason: "JobSuspended", Severity: v1alpha1.SeverityWarning, Object: r,
			Message: fmt.Sprintf("Job %s is suspended: it runs no pod until resumed", j.Name), Evidence: ev}, rank: rankJobs})
	}
}

// podsOf returns the pods among o's children, oldest first.
func podsOf(o *Object) []*corev1.Pod {
	var pods []*corev1.Pod
	for _, c := range o.Children {
		if p, ok := c.Obj.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return pods
}

// cronJob names a suspended CronJob; its last Job is visited as any Job.
func (d *diagnosis) cronJob(o *Object) {
	cj, ok := o.Obj.(*batchv1.CronJob)
	if !ok || cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		return
	}
	r := ref(o)
	d.add(&cause{Cause: v1alpha1.Cause{Reason: "Suspended", Severity: v1alpha1.SeverityWarning, Object: r,
		Message:  fmt.Sprintf("CronJob %s is suspended: it starts no Job on its schedule %q", cj.Name, cj.Spec.Schedule),
		Evidence: []v1alpha1.Evidence{fieldEvidence(r, "spec.suspend", "true")}}, rank: rankJobs})
}

// lastJob returns the newest Job among o's children, or nil.
func lastJob(o *Object) *Object {
	var last *Object
	for _, c := range o.Children {
		if c.GVK.Kind != "Job" {
			continue
		}
		if last == nil {
			last = c
			continue
		}
		ct, lt := c.Meta.GetCreationTimestamp().Time, last.Meta.GetCreationTimestamp().Time
		if ct.After(lt) || ct.Equal(lt) && c.Meta.GetName() > last.Meta.GetName() {
			last = c
		}
	}
	return last
}

// claim names a claim that is Lost, or Pending with a Warning event saying
// why.
func (d *diagnosis) claim(o *Object) {
	pvc, ok := o.Obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	r := ref(o)
	phase := fieldEvidence(r, "status.phase", string(pvc.Status.Phase))
	switch pvc.Status.Phase {
	case corev1.ClaimLost:
		d.add(&cause{Cause: v1alpha1.Cause{Reason: "ClaimLost", Severity: v1alpha1.SeverityError, Object: r,
			Message: fmt.Sprintf("claim %s lost its volume %s", pvc.Name, pvc.Spec.VolumeName), Evidence: []v1alpha1.Evidence{phase}}, rank: rankReferences})
	case corev1.ClaimPending:
		e := d.lastEvent("PersistentVolumeClaim", pvc)
		if e == nil {
			return
		}
		d.add(&cause{Cause: v1alpha1.Cause{Reason: e.Reason, Severity: v1alpha1.SeverityError, Object: r,
			Message: fmt.Sprintf("claim %s is Pending: %s", pvc.Name, sentence(e.Message)), Evidence: []v1alpha1.Evidence{phase, eventEvidence(r, e)}}, rank: rankReferences})
	}
}

// nodeConditions are the conditions of a node that are bad when True.
var nodeConditions = []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeNetworkUnavailable}

// node names what is wrong with a node asked about: not Ready, cordoned,
// under pressure. pods counts the pods bound to it.
func (d *diagnosis) node(o *Object, pods int) {
	n, ok := o.Obj.(*corev1.Node)
	if !ok {
		return
	}
	r := ref(o)
	on := ""
	if pods > 0 {
		on = "; " + plural(pods, "pod is", "pods are") + " bound to it"
	}
	if c := nodeReady(n); c == nil || c.Status != corev1.ConditionTrue {
		reason, msg := "NodeNotReady", "the node is not Ready"
		var ev []v1alpha1.Evidence
		if c != nil {
			reason = orDefault(c.Reason, reason)
			msg = fmt.Sprintf("the node is not Ready (%s)", c.Status)
			if c.Message != "" {
				msg += ": " + sentence(c.Message)
			}
			ev = append(ev, conditionEvidence(r, string(c.Type), c.Status, c.Reason, c.Message))
		}
		d.add(&cause{Cause: v1alpha1.Cause{Reason: reason, Severity: v1alpha1.SeverityError, Object: r, Message: msg + on, Evidence: ev}, rank: rankNodes})
	}
	if n.Spec.Unschedulable {
		d.add(&cause{Cause: v1alpha1.Cause{Reason: "NodeNotSchedulable", Severity: v1alpha1.SeverityWarning, Object: r,
			Message: "the node is cordoned: no new pod is scheduled to it" + on, Evidence: []v1alpha1.Evidence{fieldEvidence(r, "spec.unschedulable", "true")}},
			rank: rankNodes, key: "cordoned"})
	}
	for _, c := range n.Status.Conditions {
		if slices.Contains(nodeConditions, c.Type) && c.Status == corev1.ConditionTrue {
			d.add(&cause{Cause: v1alpha1.Cause{Reason: orDefault(c.Reason, string(c.Type)), Severity: v1alpha1.SeverityWarning, Object: r,
				Message:  fmt.Sprintf("the node reports %s: %s", c.Type, sentence(c.Message)),
				Evidence: []v1alpha1.Evidence{conditionEvidence(r, string(c.Type), c.Status, c.Reason, c.Message)}},
				rank: rankNodes, key: "condition/" + string(c.Type)})
		}
	}
}

// generic names an object of another kind (a custom resource) whose Ready
// condition is False, with the condition's reason.
func (d *diagnosis) generic(o *Object) {
	c, ok := readyCondition(o)
	if !ok || c.status != string(corev1.ConditionFalse) {
		return
	}
	r := ref(o)
	msg := fmt.Sprintf("%s %s is not %s", o.GVK.Kind, o.Meta.GetName(), c.typ)
	if c.message != "" {
		msg += ": " + sentence(c.message)
	}
	d.add(&cause{Cause: v1alpha1.Cause{Reason: orDefault(c.reason, "NotReady"), Severity: v1alpha1.SeverityError, Object: r, Message: msg,
		Evidence: []v1alpha1.Evidence{conditionEvidence(r, c.typ, corev1.ConditionStatus(c.status), c.reason, c.message)}}, rank: rankRunning})
}

// condition is a condition read from an object of any kind.
type condition struct{ typ, status, reason, message string }

// readyCondition returns the Ready condition of an unstructured object, or
// its Available one.
func readyCondition(o *Object) (condition, bool) {
	u, ok := o.Obj.(*unstructured.Unstructured)
	if !ok {
		return condition{}, false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, want := range []string{"Ready", "Available"} {
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if !ok || m["type"] != want {
				continue
			}
			str := func(k string) string { s, _ := m[k].(string); return s }
			return condition{typ: want, status: str("status"), reason: str("reason"), message: str("message")}, true
		}
	}
	return condition{}, false
}
