// Package diagnose answers why an object is not serving from objects already
// read: the object and its owner subtree (whole objects), and what Sources
// looks up beside them (Warning events by involved object, nodes, the
// Services and PodDisruptionBudgets that select a pod template, whether a
// referenced object exists). It is pure: it lists nothing and watches
// nothing, and the same objects give the same causes in the same order. The
// query engine (pkg/query, Session.Why) reads the objects through its
// informers and indexes and implements Sources over them.
//
// # Causes
//
// A cause is the reason, the culprit object, one sentence and the evidence
// it rests on (v1alpha1.Cause). The reason is the Kubernetes one where the
// evidence carries one, an event's or a condition's, else one of ours:
//
//	class       reason                       culprit           evidence
//	creation    FailedCreate                 ResourceQuota,    the controller's ReplicaFailure
//	                                         ServiceAccount,   condition, its FailedCreate events
//	                                         LimitRange,
//	                                         ValidatingAdmissionPolicy
//	                                         (else the controller)
//	scheduling  FailedScheduling             Pod (selector,    PodScheduled condition,
//	                                         affinity,         FailedScheduling events, nodes'
//	                                         requests), Node   labels, taints and allocatable
//	                                         (taint, cordon),
//	                                         PersistentVolumeClaim
//	            SchedulingGated              Pod               PodScheduled condition
//	references  MissingReference             the missing       the pod template's field
//	                                         ConfigMap, Secret,
//	                                         ServiceAccount or
//	                                         PersistentVolumeClaim
//	            ProvisioningFailed, ...      PersistentVolumeClaim  its events
//	running     ImagePullBackOff, ErrImagePull, CrashLoopBackOff,    container status, events
//	            CreateContainerConfigError, ... (the waiting reason)
//	            ContainersNotReady, ReadinessGatesNotReady           Ready condition, Unhealthy
//	            (the Ready condition's reason, after NotReadyGrace)  events
//	            the latest Warning event's reason (FailedMount, ...) for a pod that
//	            is not ready and has no other cause
//	nodes       the node's Ready reason      Node              Ready condition
//	            (NodeStatusUnknown, ...),
//	            NodeNotReady (no condition),
//	            NodeNotFound,
//	            NodeNotSchedulable (cordoned, Warning),
//	            a pressure condition's reason (a Node asked about, Warning)
//	jobs        BackoffLimitExceeded, ...    Job               Failed condition, failed pods
//	            (the Failed condition's)
//	            Suspended (CronJob, Warning), JobSuspended (Job, Warning)
//	rollouts    RolloutStuck                 the new ReplicaSet  old and new ReplicaSets' replicas
//	            ProgressDeadlineExceeded     Deployment        Progressing condition
//	serving     NoReadyPods                  Service           its selector, the pods it selects
//	            InsufficientPods, ...        PodDisruptionBudget (Warning)  its status
//	            (DisruptionAllowed's reason)
//
// Causes are ordered worst first: errors before warnings, then by class in
// the order of the table (what keeps pods from existing before what keeps
// them from running, the symptoms of a workload after their causes), then by
// culprit. Pods of one controller with the same cause are one cause, the
// first pod by name its culprit and the sentence saying how many more; the
// causes of one culprit other than a pod are one cause, the most telling
// first, the others' evidence added.
//
// # Verdict
//
// A subject with causes is Unhealthy. One without causes is Healthy when it
// is as its spec asks (a Deployment's replicas all updated and available, a
// Pod Ready or Succeeded, a Service with a ready pod, a CronJob whose last
// Job did not fail) and Unknown otherwise: something is wrong that no
// evidence read names, and Checked says what was looked at. A confident
// wrong answer is worse than none, so a cause is named only when the
// evidence names it: the scheduler's message and the nodes agree, a
// FailedCreate message is parsed, not guessed at.
package diagnose
