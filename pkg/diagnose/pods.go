package diagnose

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// podCauses are the states of a waiting container that are causes: the
// kubelet gave up on something, and says what. ContainerCreating and
// PodInitializing are not: they pass.
var podCauses = map[string]bool{
	"ImagePullBackOff": true, "ErrImagePull": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CrashLoopBackOff": true, "CreateContainerConfigError": true, "CreateContainerError": true,
	"RunContainerError": true, "PreCreateHookError": true, "PostStartHookError": true,
}

// podGroup is what the causes of a pod are merged by: its controller.
type podGroup struct {
	// name is the controller as Kind/name ("" for a pod of its own) and uid
	// its UID (the pod's own for a pod of its own).
	name, uid string
}

func groupOf(p *corev1.Pod) podGroup {
	if c := metav1.GetControllerOfNoCopy(p); c != nil {
		return podGroup{name: c.Kind + "/" + c.Name, uid: string(c.UID)}
	}
	return podGroup{uid: string(p.UID)}
}

// podCause returns a cause of pod p (ref), merged with the same cause of
// the pods of its controller.
func podCause(p *corev1.Pod, r v1alpha1.ObjectReference, rank int, reason, detail, message string, evidence ...v1alpha1.Evidence) *cause {
	g := groupOf(p)
	return &cause{
		Cause: v1alpha1.Cause{Reason: reason, Severity: v1alpha1.SeverityError, Object: r, Message: message, Evidence: evidence},
		rank:  rank, key: "pod|" + reason + "|" + g.uid + "|" + detail, group: g.name, perPod: g.name != "",
	}
}

// pod checks a pod: scheduling, its node, its containers, its readiness.
// parent is its owner in the subtree, nil for the subject itself.
func (d *diagnosis) pod(o *Object, parent *Object) {
	p, ok := o.Obj.(*corev1.Pod)
	if !ok || p.DeletionTimestamp != nil {
		// A pod being deleted is on its way out; its replacement tells.
		return
	}
	r := ref(o)
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return
	case corev1.PodFailed:
		// A controller replaces a failed pod, and a Job's failure is the
		// Job's: only a pod of its own is a cause.
		if parent == nil || metav1.GetControllerOfNoCopy(p) == nil {
			d.failedPod(p, r)
		}
		return
	}
	if d.scheduling(p, r) {
		return
	}
	if d.podNode(p, r) {
		// What a node that does not report says of its pods is stale.
		return
	}
	if d.containers(p, r) || d.readiness(p, r) {
		return
	}
	if !podReady(p) {
		d.podEvent(p, r)
	}
}

// failedPod names why a pod of its own failed.
func (d *diagnosis) failedPod(p *corev1.Pod, r v1alpha1.ObjectReference) {
	reason := p.Status.Reason
	if reason == "" {
		reason = "Failed"
	}
	msg := "the pod failed"
	if p.Status.Message != "" {
		msg += ": " + sentence(p.Status.Message)
	}
	ev := []v1alpha1.Evidence{fieldEvidence(r, "status.phase", string(p.Status.Phase))}
	if t := lastTermination(p); t != nil {
		ev = append(ev, fieldEvidence(r, "status.containerStatuses["+t.name+"].state.terminated.reason", fmt.Sprintf("%s (exit code %d)", t.state.Reason, t.state.ExitCode)))
		if p.Status.Message == "" {
			msg += fmt.Sprintf(": container %s terminated with %s (exit code %d)", t.name, orDefault(t.state.Reason, "an error"), t.state.ExitCode)
		}
	}
	d.add(podCause(p, r, rankRunning, reason, "", msg, ev...))
}

// termination is a container's terminated state.
type termination struct {
	name  string
	state *corev1.ContainerStateTerminated
}

// lastTermination returns the first container of p that terminated with an
// error, now or last.
func lastTermination(p *corev1.Pod) *termination {
	for _, st := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
			if t != nil && t.ExitCode != 0 {
				return &termination{name: st.Name, state: t}
			}
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// podCondition returns p's condition of type typ, or nil.
func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// podReady reports whether p is Ready.
func podReady(p *corev1.Pod) bool {
	c := podCondition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// scheduling names why p is not scheduled, when the scheduler has given
// up on it (or it waits for its scheduling gates), and reports whether it
// did. The scheduler's message says how many nodes each filter turned
// away, not which; the nodes themselves are read to name the culprit, in
// the scheduler's order: claims, node selector and affinity, taints and
// cordons, then resources.
func (d *diagnosis) scheduling(p *corev1.Pod, r v1alpha1.ObjectReference) bool {
	cond := podCondition(p, corev1.PodScheduled)
	if p.Spec.NodeName != "" || cond == nil || cond.Status != corev1.ConditionFalse {
		return false
	}
	condEv := conditionEvidence(r, string(corev1.PodScheduled), cond.Status, cond.Reason, cond.Message)
	if cond.Reason == corev1.PodReasonSchedulingGated {
		var gates []string
		for _, g := range p.Spec.SchedulingGates {
			gates = append(gates, g.Name)
		}
		d.add(podCause(p, r, rankScheduling, corev1.PodReasonSchedulingGated, "",
			fmt.Sprintf("the pod waits for its scheduling gates to be removed: %s", strings.Join(gates, ", ")), condEv))
		return true
	}
	if cond.Reason != corev1.PodReasonUnschedulable {
		return false
	}
	ev := []v1alpha1.Evidence{condEv}
	if e := d.lastEvent("Pod", p, "FailedScheduling"); e != nil {
		ev = append(ev, eventEvidence(r, e))
	}
	const reason = "FailedScheduling"
	if d.unboundClaims(p, r, ev) {
		return true
	}
	generic := func() bool {
		d.add(podCause(p, r, rankScheduling, reason, cond.Message, "the scheduler cannot place the pod: "+sentence(cond.Message), ev...))
		return true
	}
	nodes, ok := d.allNodes()
	if !ok || len(nodes) == 0 {
		return generic()
	}
	// Node selector and required node affinity.
	affinity := nodeaffinity.GetRequiredNodeAffinity(p)
	var eligible []*corev1.Node
	for _, n := range nodes {
		if match, err := affinity.Match(n); err == nil && match {
			eligible = append(eligible, n)
		}
	}
	if len(eligible) == 0 {
		what, field, value := selectorWords(p)
		d.add(podCause(p, r, rankScheduling, reason, "selector",
			fmt.Sprintf("no node matches %s (none of %s)", what, plural(len(nodes), "node", "nodes")),
			append([]v1alpha1.Evidence{fieldEvidence(r, field, value)}, ev...)...))
		return true
	}
	// Taints the pod does not tolerate, cordons.
	var open []*corev1.Node
	type block struct {
		node  *corev1.Node
		taint string
	}
	var blocked []block
	for _, n := range eligible {
		if t, ok := untolerated(p, n); ok {
			blocked = append(blocked, block{n, t})
			continue
		}
		open = append(open, n)
	}
	if len(open) == 0 {
		b := blocked[0]
		nr := v1alpha1.Ref(nodeGVK, b.node)
		msg := fmt.Sprintf("the pod does not tolerate the taint %s of node %s", b.taint, b.node.Name)
		if b.taint == cordoned {
			msg = fmt.Sprintf("node %s is cordoned", b.node.Name)
		}
		if len(blocked) > 1 {
			msg += fmt.Sprintf(", and each of the %d other nodes it may run on has a taint it does not tolerate or is cordoned", len(blocked)-1)
		} else if len(eligible) < len(nodes) {
			msg += ", the one node its node selector and affinity allow"
		}
		evs := []v1alpha1.Evidence{fieldEvidence(nr, "spec.taints", b.taint)}
		if b.taint == cordoned {
			evs = []v1alpha1.Evidence{fieldEvidence(nr, "spec.unschedulable", "true")}
		}
		d.add(&cause{Cause: v1alpha1.Cause{Reason: reason, Severity: v1alpha1.SeverityError, Object: nr, Message: msg, Evidence: append(evs, ev...)}, rank: rankScheduling})
		return true
	}
	// Resources: what the pod requests against what each open node has
	// free by the requests of its pods.
	if name, req, best, on, estimated := d.tooBig(p, open); name != "" {
		msg := fmt.Sprintf("the pod requests %s %s, more than any node it may run on has free: at most %s on %s", req.String(), name, best.String(), on)
		if estimated {
			msg += " (an estimate from the requests of the pods on each node)"
		} else {
			msg += " (its allocatable: what the pods on it request could not be read)"
		}
		d.add(podCause(p, r, rankScheduling, reason, "resources/"+string(name), msg,
			append([]v1alpha1.Evidence{fieldEvidence(r, "spec.containers[*].resources.requests."+string(name), req.String())}, ev...)...))
		return true
	}
	return generic()
}

// cordoned words a cordon among taints.
const cordoned = "cordoned"

// untolerated returns the first taint of n, NoSchedule or NoExecute, that p
// does not tolerate (as key=value:Effect), or cordoned for a cordoned node
// whose unschedulable taint p does not tolerate.
func untolerated(p *corev1.Pod, n *corev1.Node) (string, bool) {
	logger := klog.Background()
	tolerates := func(t *corev1.Taint) bool {
		for i := range p.Spec.Tolerations {
			if p.Spec.Tolerations[i].ToleratesTaint(logger, t, false) {
				return true
			}
		}
		return false
	}
	if n.Spec.Unschedulable && !tolerates(&corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}) {
		return cordoned, true
	}
	for i := range n.Spec.Taints {
		t := &n.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule || tolerates(t) {
			continue
		}
		return t.ToString(), true
	}
	return "", false
}

// selectorWords describes p's node selector or required affinity for a
// sentence, and names the field and its value for the evidence.
func selectorWords(p *corev1.Pod) (what, field, value string) {
	if len(p.Spec.NodeSelector) > 0 {
		var pairs []string
		for _, k := range slices.Sorted(maps.Keys(p.Spec.NodeSelector)) {
			pairs = append(pairs, k+"="+p.Spec.NodeSelector[k])
		}
		sel := strings.Join(pairs, ",")
		return "the pod's node selector " + sel, "spec.nodeSelector", sel
	}
	var terms []string
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			var reqs []string
			for _, m := range t.MatchExpressions {
				reqs = append(reqs, fmt.Sprintf("%s %s %s", m.Key, m.Operator, strings.Join(m.Values, ",")))
			}
			terms = append(terms, strings.Join(reqs, " and "))
		}
	}
	return "the pod's required node affinity", "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", strings.Join(terms, " or ")
}

// tooBig returns a resource p requests more of than any node of open has
// free, with the request, the most any node has free and which node that
// is; "" when every resource fits somewhere. Free is allocatable less the
// requests of the node's pods (Sources.Requested), an estimate: the
// scheduler's own count may differ by the pods it has just bound. When a
// node's requests cannot be read, its allocatable stands in for free and
// estimated is false.
func (d *diagnosis) tooBig(p *corev1.Pod, open []*corev1.Node) (name corev1.ResourceName, req, best resource.Quantity, on string, estimated bool) {
	reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	estimated = true
	free := make([]corev1.ResourceList, len(open))
	for i, n := range open {
		free[i] = n.Status.Allocatable.DeepCopy()
		used, ok := d.src.Requested(n.Name)
		if !ok {
			estimated = false
			continue
		}
		for res, q := range used {
			f := free[i][res]
			f.Sub(q)
			free[i][res] = f
		}
	}
	for _, res := range slices.Sorted(maps.Keys(reqs)) {
		want := reqs[res]
		if want.IsZero() {
			continue
		}
		fits, most, where := false, resource.Quantity{}, ""
		for i, n := range open {
			f, ok := free[i][res]
			if !ok {
				f = resource.Quantity{}
			}
			if want.Cmp(f) <= 0 {
				fits = true
				break
			}
			if where == "" || f.Cmp(most) > 0 {
				most, where = f, n.Name
			}
		}
		if !fits {
			if most.Sign() < 0 {
				most = resource.Quantity{}
			}
			return res, want, most, where, estimated
		}
	}
	return "", resource.Quantity{}, resource.Quantity{}, "", estimated
}

// unboundClaims names the claims that keep p from being scheduled: missing
// or not bound. It reports whether there were any.
func (d *diagnosis) unboundClaims(p *corev1.Pod, r v1alpha1.ObjectReference, ev []v1alpha1.Evidence) bool {
	found := false
	for _, v := range p.Spec.Volumes {
		name := ""
		switch {
		case v.PersistentVolumeClaim != nil:
			name = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			name = p.Name + "-" + v.Name
		default:
			continue
		}
		claim, known := d.src.Claim(p.Namespace, name)
		if !known {
			continue
		}
		d.checked["PersistentVolumeClaim"]++
		cr := coreRef("PersistentVolumeClaim", p.Namespace, name)
		via := fieldEvidence(r, "spec.volumes["+v.Name+"]", name)
		switch {
		case claim == nil:
			cr.Missing = true
			d.add(&cause{Cause: v1alpha1.Cause{Reason: "FailedScheduling", Severity: v1alpha1.SeverityError, Object: cr,
				Message: fmt.Sprintf("the pod's claim %s does not exist", name), Evidence: append([]v1alpha1.Evidence{via}, ev...)}, rank: rankScheduling})
			found = true
		case claim.Status.Phase != corev1.ClaimBound:
			cr = v1alpha1.Ref(claimGVK, claim)
			msg := fmt.Sprintf("the pod's claim %s is %s", name, claim.Status.Phase)
			evs := []v1alpha1.Evidence{fieldEvidence(cr, "status.phase", string(claim.Status.Phase)), via}
			if e := d.lastEvent("PersistentVolumeClaim", claim); e != nil {
				msg += ": " + sentence(e.Message)
				evs = append(evs, eventEvidence(cr, e))
			}
			d.add(&cause{Cause: v1alpha1.Cause{Reason: "FailedScheduling", Severity: v1alpha1.SeverityError, Object: cr, Message: msg, Evidence: append(evs, ev...)}, rank: rankScheduling})
			found = true
		}
	}
	return found
}

// podNode names what is wrong with the node p is bound to: gone, not
// Ready, cordoned. It reports whether the node does not report, so that
// what the pod's status says is stale.
func (d *diagnosis) podNode(p *corev1.Pod, r v1alpha1.ObjectReference) bool {
	if p.Spec.NodeName == "" {
		return false
	}
	n, known := d.nodeNamed(p.Spec.NodeName)
	if !known {
		return false
	}
	g := groupOf(p)
	podEv := fieldEvidence(r, "spec.nodeName", p.Spec.NodeName)
	if n == nil {
		nr := coreRef("Node", "", p.Spec.NodeName)
		nr.Missing = true
		d.add(&cause{Cause: v1alpha1.Cause{Reason: "NodeNotFound", Severity: v1alpha1.SeverityError, Object: nr,
			Message: fmt.Sprintf("the pod is bound to node %s, which does not exist", p.Spec.NodeName), Evidence: []v1alpha1.Evidence{podEv}},
			rank: rankNodes, key: "node|NodeNotFound|" + p.Spec.NodeName, group: g.name, perPod: true})
		return true
	}
	nr := v1alpha1.Ref(nodeGVK, n)
	if c := nodeReady(n); c == nil || c.Status != corev1.ConditionTrue {
		reason, status, msg := "NodeNotReady", corev1.ConditionUnknown, ""
		var ev []v1alpha1.Evidence
		if c != nil {
			reason, status, msg = orDefault(c.Reason, reason), c.Status, c.Message
			ev = append(ev, conditionEvidence(nr, string(corev1.NodeReady), c.Status, c.Reason, c.Message))
		}
		words := fmt.Sprintf("node %s, which the pod runs on, is not Ready (%s)", n.Name, status)
		if msg != "" {
			words += ": " + sentence(msg)
		}
		d.add(&cause{Cause: v1alpha1.Cause{Reason: reason, Severity: v1alpha1.SeverityError, Object: nr, Message: words, Evidence: append(ev, podEv)},
			rank: rankNodes, key: "node|ready|" + n.Name, group: g.name, perPod: true})
		return true
	}
	if n.Spec.Unschedulable {
		d.add(&cause{Cause: v1alpha1.Cause{Reason: "NodeNotSchedulable", Severity: v1alpha1.SeverityWarning, Object: nr,
			Message:  fmt.Sprintf("node %s, which the pod runs on, is cordoned: a drain will evict it, and no new pod goes there", n.Name),
			Evidence: []v1alpha1.Evidence{fieldEvidence(nr, "spec.unschedulable", "true"), podEv}},
			rank: rankNodes, key: "node|cordoned|" + n.Name, group: g.name, perPod: true})
	}
	return false
}

// nodeReady returns n's Ready condition, or nil.
func nodeReady(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// containers names the containers of p the kubelet cannot start or keep
// running, and reports whether there were any.
func (d *diagnosis) containers(p *corev1.Pod, r v1alpha1.ObjectReference) bool {
	found := false
	check := func(kind, path string, statuses []corev1.ContainerStatus) {
		for _, st := range statuses {
			w := st.State.Waiting
			if w == nil || !podCauses[w.Reason] {
				continue
			}
			field := fmt.Sprintf("status.%s[%s].state.waiting", path, st.Name)
			ev := []v1alpha1.Evidence{{Object: r, Field: field + ".reason", Value: w.Reason, Message: w.Message}}
			var msg string
			switch w.Reason {
			case "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull":
				msg = fmt.Sprintf("%s %s cannot pull its image %s", kind, st.Name, st.Image)
				if w.Message != "" {
					msg += ": " + sentence(w.Message)
				}
			case "CrashLoopBackOff":
				msg = fmt.Sprintf("%s %s keeps crashing: restarted %s", kind, st.Name, plural(int(st.RestartCount), "time", "times"))
				if t := st.LastTerminationState.Terminated; t != nil {
					msg += fmt.Sprintf(", last terminated with %s (exit code %d)", orDefault(t.Reason, "an error"), t.ExitCode)
					ev = append(ev, fieldEvidence(r, fmt.Sprintf("status.%s[%s].lastState.terminated.reason", path, st.Name), fmt.Sprintf("%s (exit code %d)", t.Reason, t.ExitCode)))
				}
				ev = append(ev, fieldEvidence(r, fmt.Sprintf("status.%s[%s].restartCount", path, st.Name), fmt.Sprint(st.RestartCount)))
			default:
				msg = fmt.Sprintf("%s %s cannot start", kind, st.Name)
				if w.Message != "" {
					msg += ": " + sentence(w.Message)
				}
			}
			if e := d.lastEvent("Pod", p, "BackOff", "Failed", "InspectFailed", "ErrImageNeverPull"); e != nil {
				ev = append(ev, eventEvidence(r, e))
			}
			d.add(podCause(p, r, rankRunning, w.Reason, kind+"/"+st.Name, msg, ev...))
			found = true
		}
	}
	check("init container", "initContainerStatuses", p.Status.InitContainerStatuses)
	check("container", "containerStatuses", p.Status.ContainerStatuses)
	return found
}

// readiness names a running pod that has not been ready for NotReadyGrace,
// and reports whether it did.
func (d *diagnosis) readiness(p *corev1.Pod, r v1alpha1.ObjectReference) bool {
	c := podCondition(p, corev1.PodReady)
	if p.Status.Phase != corev1.PodRunning || c == nil || c.Status == corev1.ConditionTrue {
		return false
	}
	since := c.LastTransitionTime.Time
	if since.IsZero() && p.Status.StartTime != nil {
		since = p.Status.StartTime.Time
	}
	if since.IsZero() || d.now.Sub(since) < NotReadyGrace {
		return false
	}
	var unready []string
	ev := []v1alpha1.Evidence{conditionEvidence(r, string(corev1.PodReady), c.Status, c.Reason, c.Message)}
	for _, st := range p.Status.ContainerStatuses {
		if !st.Ready {
			unready = append(unready, st.Name)
			ev = append(ev, fieldEvidence(r, "status.containerStatuses["+st.Name+"].ready", "false"))
		}
	}
	msg := fmt.Sprintf("the pod runs but has not been ready for %s", d.now.Sub(since).Round(timeUnit(d.now.Sub(since))))
	if len(unready) > 0 {
		msg = fmt.Sprintf("container %s runs but has not been ready for %s", strings.Join(unready, ", "), d.now.Sub(since).Round(timeUnit(d.now.Sub(since))))
	}
	if e := d.lastEvent("Pod", p, "Unhealthy", "ProbeWarning"); e != nil {
		msg += ": " + sentence(e.Message)
		ev = append(ev, eventEvidence(r, e))
	}
	d.add(podCause(p, r, rankRunning, orDefault(c.Reason, "NotReady"), "", msg, ev...))
	return true
}

// podEvent names the latest Warning event about a pod that is not ready and
// has no other cause: the kubelet's FailedMount, FailedCreatePodSandBox.
func (d *diagnosis) podEvent(p *corev1.Pod, r v1alpha1.ObjectReference) {
	e := d.lastEvent("Pod", p)
	if e == nil || e.Reason == "FailedScheduling" || (p.CreationTimestamp.After(EventTime(e)) && !EventTime(e).IsZero()) {
		return
	}
	d.add(podCause(p, r, rankRunning, e.Reason, "", "the pod is not ready: "+sentence(e.Message), eventEvidence(r, e)))
}

// timeUnit is what a duration is rounded to in a sentence: seconds under a
// minute, minutes under an hour, hours beyond.
func timeUnit(d time.Duration) time.Duration {
	switch {
	case d < time.Minute:
		return time.Second
	case d < time.Hour:
		return time.Minute
	}
	return time.Hour
}
