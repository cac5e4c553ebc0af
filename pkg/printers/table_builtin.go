package printers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The columns and cells below follow k8s.io/kubernetes/pkg/printers/internalversion at v1.34,
// rewritten for the versioned k8s.io/api types that informers hold. Column names, order, types
// and descriptions are the server's, so `-o wide`, --show-labels and even `-o json` of the
// table look the same. Descriptions come from the same swagger docs the server uses.

var (
	objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}

	containersColumn = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
	imagesColumn     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}

	// builtinAgeColumns is what a built-in kind gets when only metadata is at hand.
	builtinAgeColumns = []metav1.TableColumnDefinition{nameColumn, ageColumn}
	// customResourceAgeColumns is the apiextensions server's default for a CRD version
	// without additionalPrinterColumns: the same Age, declared as a date.
	customResourceAgeColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Age", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	}
)

// builtinHandlers maps every built-in kind that has dedicated columns to its printer.
var builtinHandlers = map[schema.GroupKind]kindHandler{
	{Group: "", Kind: "Pod"}:                podHandler,
	{Group: "", Kind: "Service"}:            handlerFor(serviceColumns, serviceCells),
	{Group: "", Kind: "Node"}:               handlerFor(nodeColumns, nodeCells),
	{Group: "", Kind: "Namespace"}:          handlerFor(namespaceColumns, namespaceCells),
	{Group: "", Kind: "ConfigMap"}:          handlerFor(configMapColumns, configMapCells),
	{Group: "", Kind: "Secret"}:             handlerFor(secretColumns, secretCells),
	{Group: "", Kind: "Event"}:              handlerFor(eventColumns, coreEventCells),
	{Group: "events.k8s.io", Kind: "Event"}: handlerFor(eventColumns, eventsV1Cells),
	{Group: "apps", Kind: "Deployment"}:     handlerFor(deploymentColumns, deploymentCells),
	{Group: "apps", Kind: "ReplicaSet"}:     handlerFor(replicaSetColumns, replicaSetCells),
	{Group: "apps", Kind: "StatefulSet"}:    handlerFor(statefulSetColumns, statefulSetCells),
	{Group: "apps", Kind: "DaemonSet"}:      handlerFor(daemonSetColumns, daemonSetCells),
	{Group: "batch", Kind: "Job"}:           handlerFor(jobColumns, jobCells),
	{Group: "batch", Kind: "CronJob"}:       handlerFor(cronJobColumns, cronJobCells),
	// Beyond the kinds kubectl-idx was first written for: common kinds whose server-side
	// columns are simple enough to mirror, so they do not fall back to NAME and AGE.
	{Group: "", Kind: "ServiceAccount"}:                              handlerFor(serviceAccountColumns, serviceAccountCells),
	{Group: "", Kind: "ReplicationController"}:                       handlerFor(replicationControllerColumns, replicationControllerCells),
	{Group: "", Kind: "PersistentVolumeClaim"}:                       handlerFor(pvcColumns, pvcCells),
	{Group: "", Kind: "PersistentVolume"}:                            handlerFor(pvColumns, pvCells),
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                  handlerFor(storageClassColumns, storageClassCells),
	{Group: "networking.k8s.io", Kind: "Ingress"}:                    handlerFor(ingressColumns, ingressCells),
	{Group: "networking.k8s.io", Kind: "IngressClass"}:               handlerFor(ingressClassColumns, ingressClassCells),
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:              handlerFor(networkPolicyColumns, networkPolicyCells),
	{Group: "policy", Kind: "PodDisruptionBudget"}:                   handlerFor(pdbColumns, pdbCells),
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        handlerFor(roleBindingColumns, roleBindingCells),
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: handlerFor(clusterRoleBindingColumns, clusterRoleBindingCells),
}

// podHandler also sets the row conditions the server gives finished pods.
var podHandler = func() kindHandler {
	h := handlerFor(podColumns, podCells)
	h.conditions = func(obj runtime.Object) []metav1.TableRowCondition {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil
		}
		switch pod.Status.Phase {
		case corev1.PodSucceeded:
			return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
		case corev1.PodFailed:
			return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
		}
		return nil
	}
	return h
}()

// Pods.

// podColumns: the wide columns explain where and why a pod is (not) running.
var podColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
	{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
	{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
	ageColumn,
	{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
	{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
	{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
	{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
}

// nodeUnreachablePodReason is the reason the node lifecycle controller gives pods on a lost node
// (k8s.io/kubernetes/pkg/util/node.NodeUnreachablePodReason).
const nodeUnreachablePodReason = "NodeLost"

// podCells computes READY, STATUS and RESTARTS as kubectl does. STATUS starts from the phase
// and is overridden, in this order, by: the pod's reason, a scheduling gate, the first init
// container that has not finished, then the last regular container with a waiting or
// terminated reason, and finally deletion.
func podCells(pod *corev1.Pod, now time.Time) []any {
	restarts := 0
	sidecarRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestart, lastSidecarRestart metav1.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodScheduled && condition.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	// Sidecars (restartable init containers) run for the pod's lifetime, so they count as
	// containers in READY and their restarts stay in RESTARTS once the pod is initialized.
	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		initContainers[c.Name] = c
		if isSidecar(c) {
			totalContainers++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		status := &pod.Status.InitContainerStatuses[i]
		restarts += int(status.RestartCount)
		laterTermination(&lastRestart, status.LastTerminationState)
		sidecar := isSidecar(initContainers[status.Name])
		if sidecar {
			sidecarRestarts += int(status.RestartCount)
			laterTermination(&lastSidecarRestart, status.LastTerminationState)
		}
		switch {
		case status.State.Terminated != nil && status.State.Terminated.ExitCode == 0:
			continue
		case sidecar && status.Started != nil && *status.Started:
			if status.Ready {
				readyContainers++
			}
			continue
		case status.State.Terminated != nil:
			// The init container failed; say how.
			switch {
			case status.State.Terminated.Reason != "":
				reason = "Init:" + status.State.Terminated.Reason
			case status.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", status.State.Terminated.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", status.State.Terminated.ExitCode)
			}
		case status.State.Waiting != nil && status.State.Waiting.Reason != "" && status.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + status.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod.Status.Conditions, corev1.PodInitialized) {
		// Init containers that ran to completion no longer count; sidecars still do.
		restarts = sidecarRestarts
		lastRestart = lastSidecarRestart
		hasRunning := false
		// Backwards, so that the first container's reason wins, as in kubectl.
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			status := &pod.Status.ContainerStatuses[i]
			restarts += int(status.RestartCount)
			laterTermination(&lastRestart, status.LastTerminationState)
			switch {
			case status.State.Waiting != nil && status.State.Waiting.Reason != "":
				reason = status.State.Waiting.Reason
			case status.State.Terminated != nil && status.State.Terminated.Reason != "":
				reason = status.State.Terminated.Reason
			case status.State.Terminated != nil && status.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", status.State.Terminated.Signal)
			case status.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", status.State.Terminated.ExitCode)
			case status.Ready && status.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		// One finished container does not make a pod whose others still run "Completed".
		if reason == "Completed" && hasRunning {
			if podConditionTrue(pod.Status.Conditions, corev1.PodReady) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason:
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}

	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, ageSince(lastRestart, now))
	}

	// The server's v1 conversion makes podIP authoritative over podIPs[0] when both are set.
	podIP := pod.Status.PodIP
	if podIP == "" && len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	readinessGates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		trueGates := 0
		for _, gate := range pod.Spec.ReadinessGates {
			// Only the first condition of a type counts, as in kubectl.
			for _, condition := range pod.Status.Conditions {
				if condition.Type == gate.ConditionType {
					if condition.Status == corev1.ConditionTrue {
						trueGates++
					}
					break
				}
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", trueGates, len(pod.Spec.ReadinessGates))
	}

	return []any{
		pod.Name,
		fmt.Sprintf("%d/%d", readyContainers, totalContainers),
		reason,
		restartsCell,
		ageSince(pod.CreationTimestamp, now),
		orNone(podIP),
		orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName),
		readinessGates,
	}
}

// isSidecar reports whether c is a restartable init container (a sidecar).
func isSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// laterTermination moves *last forward to the finish time of state's last termination.
func laterTermination(last *metav1.Time, state corev1.ContainerState) {
	if state.Terminated == nil {
		return
	}
	if finished := state.Terminated.FinishedAt; last.Before(&finished) {
		*last = finished
	}
}

// podConditionTrue reports whether the first condition of type t is True.
func podConditionTrue(conditions []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, condition := range conditions {
		if condition.Type == t {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Workloads.

// deploymentColumns declare the counts as strings, as the server does, though cells are integers.
var deploymentColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	{Name: "Up-to-date", Type: "string", Description: extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
	{Name: "Available", Type: "string", Description: extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.DeploymentSpec{}.SwaggerDoc()["selector"]},
}

// deploymentCells prints READY as ready/desired: a rollout in progress shows as a gap.
func deploymentCells(d *appsv1.Deployment, now time.Time) []any {
	// Unlike the other workloads, kubectl prints an unparsable selector as "<invalid>".
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return []any{
		d.Name,
		fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas),
		ageSince(d.CreationTimestamp, now),
		names, images, selector,
	}
}

// replicaSetColumns, and the other workload columns, reuse the extensions/v1beta1 docs the server cites.
var replicaSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
}

// replicaSetCells prints desired, current and ready as separate integers, unlike deployments.
func replicaSetCells(rs *appsv1.ReplicaSet, now time.Time) []any {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []any{
		rs.Name,
		int64(replicas(rs.Spec.Replicas)),
		int64(rs.Status.Replicas),
		int64(rs.Status.ReadyReplicas),
		ageSince(rs.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
	}
}

// statefulSetColumns are the shortest workload table.
var statefulSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	ageColumn,
	containersColumn,
	imagesColumn,
}

// statefulSetCells has no selector cell: the server prints none for StatefulSets.
func statefulSetCells(s *appsv1.StatefulSet, now time.Time) []any {
	names, images := containerCells(s.Spec.Template.Spec.Containers)
	return []any{
		s.Name,
		fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicas(s.Spec.Replicas)),
		ageSince(s.CreationTimestamp, now),
		names, images,
	}
}

// daemonSetColumns put NODE SELECTOR before AGE, as kubectl does.
var daemonSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
	{Name: "Current", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
	{Name: "Ready", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
	{Name: "Up-to-date", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
	{Name: "Available", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
	{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
}

// daemonSetCells prints the pod template's node selector in the normal columns, because it
// explains DESIRED.
func daemonSetCells(ds *appsv1.DaemonSet, now time.Time) []any {
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	return []any{
		ds.Name,
		int64(ds.Status.DesiredNumberScheduled),
		int64(ds.Status.CurrentNumberScheduled),
		int64(ds.Status.NumberReady),
		int64(ds.Status.UpdatedNumberScheduled),
		int64(ds.Status.NumberAvailable),
		labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		ageSince(ds.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(ds.Spec.Selector),
	}
}

// jobColumns: STATUS sums up the job conditions, which COMPLETIONS alone cannot tell.
var jobColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "Status of the job."},
	{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
	{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

// jobCells derives STATUS from the job conditions and DURATION from start and completion,
// measured against now while the job runs.
func jobCells(job *batchv1.Job, now time.Time) []any {
	var completions string
	switch {
	case job.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	case job.Spec.Parallelism != nil && *job.Spec.Parallelism > 1:
		// A work-queue job: any one success completes it, several pods work at once.
		completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *job.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
	}

	var jobDuration string
	switch {
	case job.Status.StartTime == nil:
	case job.Status.CompletionTime == nil:
		jobDuration = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
	default:
		jobDuration = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	}

	// Terminal conditions beat deletion, which beats the transient conditions.
	var status string
	switch {
	case jobConditionTrue(job.Status.Conditions, batchv1.JobComplete):
		status = "Complete"
	case jobConditionTrue(job.Status.Conditions, batchv1.JobFailed):
		status = "Failed"
	case job.DeletionTimestamp != nil:
		status = "Terminating"
	case jobConditionTrue(job.Status.Conditions, batchv1.JobSuspended):
		status = "Suspended"
	case jobConditionTrue(job.Status.Conditions, batchv1.JobFailureTarget):
		status = "FailureTarget"
	case jobConditionTrue(job.Status.Conditions, batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	default:
		status = "Running"
	}

	names, images := containerCells(job.Spec.Template.Spec.Containers)
	return []any{
		job.Name, status, completions, jobDuration, ageSince(job.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(job.Spec.Selector),
	}
}

// jobConditionTrue reports whether the first condition of type t is True.
func jobConditionTrue(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, condition := range conditions {
		if condition.Type == t {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

// cronJobColumns take their docs from batch/v1beta1, as the server does.
var cronJobColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Schedule", Type: "string", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["schedule"]},
	{Name: "Timezone", Type: "string", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
	{Name: "Suspend", Type: "boolean", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["suspend"]},
	{Name: "Active", Type: "integer", Description: batchv1beta1.CronJobStatus{}.SwaggerDoc()["active"]},
	{Name: "Last Schedule", Type: "string", Description: batchv1beta1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

// cronJobCells prints LAST SCHEDULE as an age and "<none>" before the first run.
func cronJobCells(cj *batchv1.CronJob, now time.Time) []any {
	lastSchedule := "<none>"
	if cj.Status.LastScheduleTime != nil {
		lastSchedule = ageSince(*cj.Status.LastScheduleTime, now)
	}
	timeZone := "<none>"
	if cj.Spec.TimeZone != nil {
		timeZone = *cj.Spec.TimeZone
	}
	// The column is typed boolean but kubectl prints a capitalised string.
	suspend := "<unset>"
	if cj.Spec.Suspend != nil {
		suspend = "False"
		if *cj.Spec.Suspend {
			suspend = "True"
		}
	}
	names, images := containerCells(cj.Spec.JobTemplate.Spec.Template.Spec.Containers)
	return []any{
		cj.Name, cj.Spec.Schedule, timeZone, suspend, int64(len(cj.Status.Active)), lastSchedule,
		ageSince(cj.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector),
	}
}

// replicas reads a versioned spec.replicas. The server prints defaulted objects, and the
// default for every workload is 1, so an unset value prints as 1 too.
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// containerCells lays out the CONTAINERS and IMAGES cells of a pod template.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i := range containers {
		n[i], im[i] = containers[i].Name, containers[i].Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// Services.

// serviceColumns: only the selector is wide.
var serviceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
	{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
	{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
	{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
	ageColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
}

// serviceCells prints the primary cluster IP only; dual-stack services have more in clusterIPs.
func serviceCells(svc *corev1.Service, now time.Time) []any {
	clusterIP := "<none>"
	switch {
	case len(svc.Spec.ClusterIPs) > 0:
		clusterIP = svc.Spec.ClusterIPs[0]
	case svc.Spec.ClusterIP != "":
		// The API server fills clusterIPs from clusterIP when a service is written;
		// hand-made objects may lack it.
		clusterIP = svc.Spec.ClusterIP
	}
	ports := servicePorts(svc.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return []any{
		svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), ports,
		ageSince(svc.CreationTimestamp, now),
		labels.FormatLabels(svc.Spec.Selector),
	}
}

// serviceExternalIP renders EXTERNAL-IP. The server prints in wide mode, where load balancer
// addresses are not clipped to 16 characters, so neither are they here.
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		// Sorted and deduplicated, then the spec's external IPs as given.
		lb := sets.New[string]()
		for _, ingress := range svc.Status.LoadBalancer.Ingress {
			if ingress.IP != "" {
				lb.Insert(ingress.IP)
			} else if ingress.Hostname != "" {
				lb.Insert(ingress.Hostname)
			}
		}
		all := append(sets.List(lb), svc.Spec.ExternalIPs...)
		if len(all) == 0 {
			return "<pending>"
		}
		return strings.Join(all, ",")
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePorts renders PORT(S) as port[:nodePort]/protocol, comma separated.
func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, port := range ports {
		if port.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", port.Port, port.NodePort, port.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", port.Port, port.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

// Nodes.

// nodeColumns: the wide columns come from status.nodeInfo and status.addresses.
var nodeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the node"},
	{Name: "Roles", Type: "string", Description: "The roles of the node"},
	ageColumn,
	{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
	{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
	{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
	{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
}

const (
	// nodeRoleLabelPrefix marks a role in the label key: node-role.kubernetes.io/<role>.
	nodeRoleLabelPrefix = "node-role.kubernetes.io/"
	// nodeRoleLabel is the older form, with the role in the value.
	nodeRoleLabel = "kubernetes.io/role"
)

// nodeCells prints STATUS from the Ready condition plus cordoning, and ROLES from the role labels,
// sorted, since nodes carry no role field.
func nodeCells(node *corev1.Node, now time.Time) []any {
	// Only the Ready condition shows; kubectl keeps the last one if a type repeats.
	var ready *corev1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	status := "Unknown"
	if ready != nil {
		status = "NotReady"
		if ready.Status == corev1.ConditionTrue {
			status = "Ready"
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}

	roles := sets.New[string]()
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, nodeRoleLabelPrefix):
			if role := strings.TrimPrefix(k, nodeRoleLabelPrefix); role != "" {
				roles.Insert(role)
			}
		case k == nodeRoleLabel && v != "":
			roles.Insert(v)
		}
	}
	rolesCell := strings.Join(sets.List(roles), ",")

	info := node.Status.NodeInfo
	return []any{
		node.Name, status, orNone(rolesCell), ageSince(node.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
		orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
	}
}

// nodeAddress returns the node's first address of type t, or "<none>".
func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, address := range node.Status.Addresses {
		if address.Type == t {
			return address.Address
		}
	}
	return "<none>"
}

// Namespaces, config maps and secrets.

// namespaceColumns show the phase, which is how a namespace being deleted shows.
var namespaceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the namespace"},
	ageColumn,
}

// namespaceCells prints the phase as is: Active or Terminating.
func namespaceCells(ns *corev1.Namespace, now time.Time) []any {
	return []any{ns.Name, string(ns.Status.Phase), ageSince(ns.CreationTimestamp, now)}
}

// configMapColumns count keys, declared as a string column as on the server.
var configMapColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
	ageColumn,
}

// configMapCells counts text and binary keys together.
func configMapCells(cm *corev1.ConfigMap, now time.Time) []any {
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), ageSince(cm.CreationTimestamp, now)}
}

// secretColumns show the type, which tells TLS, token and opaque secrets apart.
var secretColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
	{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
	ageColumn,
}

// secretCells counts keys; values are never read.
func secretCells(s *corev1.Secret, now time.Time) []any {
	// stringData is write-only: the server has merged it into data before anything is read.
	return []any{s.Name, string(s.Type), int64(len(s.Data)), ageSince(s.CreationTimestamp, now)}
}

// Events.

// eventColumns serve both core/v1 and events.k8s.io/v1 Events: the server converts both to the
// same internal type before printing. The wide NAME column comes last and is the only one with
// the "name" format, which is where `kubectl get -o wide` puts it.
var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
	{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
	{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.Event{}.InvolvedObject.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
	{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: objectMetaDoc["name"]},
}

// eventFields are the fields the event printer reads, common to both Event APIs.
type eventFields struct {
	name, eventType, reason, message       string
	involved                               corev1.ObjectReference
	source                                 corev1.EventSource
	reportingController, reportingInstance string
	firstTimestamp, lastTimestamp          metav1.Time
	eventTime                              metav1.MicroTime
	count                                  int32
	series                                 *eventsv1.EventSeries
}

// coreEventCells reads a core/v1 Event.
func coreEventCells(e *corev1.Event, now time.Time) []any {
	f := eventFields{
		name: e.Name, eventType: e.Type, reason: e.Reason, message: e.Message,
		involved: e.InvolvedObject, source: e.Source,
		reportingController: e.ReportingController, reportingInstance: e.ReportingInstance,
		firstTimestamp: e.FirstTimestamp, lastTimestamp: e.LastTimestamp, eventTime: e.EventTime,
		count: e.Count,
	}
	if e.Series != nil {
		f.series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return eventCells(f, now)
}

// eventsV1Cells maps events.k8s.io/v1 fields the way the API server's conversion does.
func eventsV1Cells(e *eventsv1.Event, now time.Time) []any {
	return eventCells(eventFields{
		name: e.Name, eventType: e.Type, reason: e.Reason, message: e.Note,
		involved: e.Regarding, source: e.DeprecatedSource,
		reportingController: e.ReportingController, reportingInstance: e.ReportingInstance,
		firstTimestamp: e.DeprecatedFirstTimestamp, lastTimestamp: e.DeprecatedLastTimestamp, eventTime: e.EventTime,
		count: e.DeprecatedCount, series: e.Series,
	}, now)
}

// eventCells renders one event of either API.
func eventCells(e eventFields, now time.Time) []any {
	// New-style events have only eventTime; old-style ones only the timestamps.
	firstSeen := ageSince(e.firstTimestamp, now)
	if e.firstTimestamp.IsZero() {
		firstSeen = microAgeSince(e.eventTime, now)
	}
	lastSeen := ageSince(e.lastTimestamp, now)
	if e.lastTimestamp.IsZero() {
		lastSeen = firstSeen
	}
	count := e.count
	switch {
	case e.series != nil:
		lastSeen = microAgeSince(e.series.LastObservedTime, now)
		count = e.series.Count
	case count == 0:
		// Singleton events of the new API leave count unset.
		count = 1
	}

	object := strings.ToLower(e.involved.Kind)
	if e.involved.Name != "" {
		object += "/" + e.involved.Name
	}

	component := firstNonEmpty(e.source.Component, e.reportingController)
	source := component
	if instance := firstNonEmpty(e.source.Host, e.reportingInstance); instance != "" {
		source = component + ", " + instance
	}

	return []any{
		lastSeen, e.eventType, e.reason, object, e.involved.FieldPath, source,
		strings.TrimSpace(e.message), firstSeen, int64(count), e.name,
	}
}

// firstNonEmpty returns the first non-empty string of ss, or "".
func firstNonEmpty(ss ...string) string {
	if i := slices.IndexFunc(ss, func(s string) bool { return s != "" }); i >= 0 {
		return ss[i]
	}
	return ""
}

// orNone returns s, or "<none>" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// orUnknown returns s, or "<unknown>" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
