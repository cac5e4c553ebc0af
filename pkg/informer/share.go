package informer

import (
	"encoding/binary"
	"slices"
	"sync"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
)

// Sharer makes the objects informers keep share the parts they have in
// common, in place of a copy of each part per object: a warm cache keeps
// its informers' objects for hours, and most of a pod is its template's.
// The pods of one ReplicaSet have the same containers (arguments,
// environment, probes, resources, security contexts), volumes, affinity and
// tolerations, and the same labels but for a few; every pod of a namespace
// has the same service account token volume. Decoded, each pod has its own
// copy of all of it: 16 KB of Go heap for a realistic pod without
// managedFields (the bench's: 12 KB of JSON with them), of which sharing
// leaves 6 to 8 KB.
//
// What is shared is kept once, in the first object that had it, and the
// objects after it point to that copy: a canonical value is looked up by
// its protobuf encoding, which is the same for equal values (map keys are
// encoded sorted). Only the parts that repeat across objects are looked up
// (an object's metadata maps and owner references, and a pod's or a pod
// template's spec, but its volume mounts and per-pod volume names); a
// pod's status is its own, its strings (images, reasons, node addresses)
// interned (package unique), as are the metadata's namespace and the
// strings of what is not shared.
//
// Cached objects are read-only (see the package doc): nothing changes a
// part after it is shared, and a DeepCopy copies it whole, so a shared part
// reads, prints and copies as a part of its own would. Sharing applies to
// objects decoded from protobuf: the encoding does not tell an empty list
// from a missing one, which JSON decoding keeps apart.
//
// The canonical values are found in two generations of at most
// sharerGeneration parts each: a part found in the older one moves to the
// newer, and the older one is forgotten when the newer one is full, so that
// parts no object has any more (a deleted Deployment's) are not held for
// ever. Objects keep what they share either way. A Sharer is safe for
// concurrent use; one serves every informer of a warm pool.
type Sharer struct {
	// generation is sharerGeneration but in tests.
	generation int

	mu       sync.Mutex
	cur, old map[string]any
	// key is the buffer the keys are built in, under mu.
	key []byte
}

// sharedWatch returns w with the objects of its additions and changes
// transformed (the informer's transform, which then finds nothing left to
// do) and shared by sharer before the reflector has them, as a list's
// pages are: sharing parts of an object before its transform drops them
// would keep them. A deletion's object leaves the store and is not shared.
func sharedWatch(w watch.Interface, transform cache.TransformFunc, sharer *Sharer) watch.Interface {
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Added || ev.Type == watch.Modified {
			if transform != nil {
				// An error is the informer's own transform's to report.
				if _, err := transform(ev.Object); err != nil {
					return ev, true
				}
			}
			sharer.Share(ev.Object)
		}
		return ev, true
	})
}

// sharerGeneration bounds the canonical values of a generation: 32,768
// parts are those of about 2,000 pod templates, the bench's at 20,000 pods,
// and their keys, the parts' encodings, a few MB.
const sharerGeneration = 1 << 15

// NewSharer returns an empty Sharer.
func NewSharer() *Sharer {
	return &Sharer{generation: sharerGeneration, cur: map[string]any{}, old: map[string]any{}}
}

// Share makes obj share its parts with the objects shared before it, and
// returns it. It changes obj, which must be freshly decoded and not yet
// read by anyone else (an informer's page or watch event, before it reaches
// the store). Objects it has no rules for are left as they are.
func (s *Sharer) Share(obj runtime.Object) runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch o := obj.(type) {
	case *corev1.Pod:
		s.meta(&o.ObjectMeta)
		s.podSpec(&o.Spec)
		s.podStatus(&o.Status)
	case *metav1.PartialObjectMetadata:
		s.meta(&o.ObjectMeta)
	case *appsv1.ReplicaSet, *appsv1.Deployment, *appsv1.DaemonSet, *appsv1.StatefulSet, *batchv1.Job:
		s.meta(o.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta))
		t, _ := index.PodTemplateOf(o)
		s.template(t)
	case metav1.ObjectMetaAccessor:
		if m, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
			s.meta(m)
		}
	}
	return obj
}

func (s *Sharer) template(t *corev1.PodTemplateSpec) {
	s.meta(&t.ObjectMeta)
	s.podSpec(&t.Spec)
}

// meta shares what objects of a namespace and of an owner have in common:
// labels, annotations, owner references, finalizers.
func (s *Sharer) meta(m *metav1.ObjectMeta) {
	m.Namespace = intern(m.Namespace)
	m.GenerateName = intern(m.GenerateName)
	m.Labels = s.stringMap(tagLabels, m.Labels)
	m.Annotations = s.stringMap(tagAnnotations, m.Annotations)
	m.OwnerReferences = shareSlice(s, tagOwnerReferences, m.OwnerReferences)
	m.Finalizers = s.strings(tagFinalizers, m.Finalizers)
}

func (s *Sharer) podSpec(p *corev1.PodSpec) {
	for i := range p.Volumes {
		v := &p.Volumes[i]
		// A volume's name may be the pod's own (the service account token's
		// kube-api-access-xxxxx); what it mounts is often every pod's.
		v.Name = intern(v.Name)
		v.VolumeSource = shareValue(s, tagVolumeSource, &v.VolumeSource)
	}
	s.containers(p.InitContainers)
	s.containers(p.Containers)
	p.RestartPolicy = corev1.RestartPolicy(intern(string(p.RestartPolicy)))
	p.DNSPolicy = corev1.DNSPolicy(intern(string(p.DNSPolicy)))
	p.NodeSelector = s.stringMap(tagNodeSelector, p.NodeSelector)
	p.ServiceAccountName = intern(p.ServiceAccountName)
	p.DeprecatedServiceAccount = intern(p.DeprecatedServiceAccount)
	p.NodeName = intern(p.NodeName)
	p.SecurityContext = sharePointer(s, tagPodSecurityContext, p.SecurityContext)
	p.ImagePullSecrets = shareSlice(s, tagImagePullSecrets, p.ImagePullSecrets)
	p.Subdomain = intern(p.Subdomain)
	p.Affinity = sharePointer(s, tagAffinity, p.Affinity)
	p.SchedulerName = intern(p.SchedulerName)
	p.Tolerations = shareSlice(s, tagTolerations, p.Tolerations)
	p.HostAliases = shareSlice(s, tagHostAliases, p.HostAliases)
	p.PriorityClassName = intern(p.PriorityClassName)
	p.DNSConfig = sharePointer(s, tagDNSConfig, p.DNSConfig)
	p.ReadinessGates = shareSlice(s, tagReadinessGates, p.ReadinessGates)
	p.TopologySpreadConstraints = shareSlice(s, tagTopologySpread, p.TopologySpreadConstraints)
	p.SchedulingGates = shareSlice(s, tagSchedulingGates, p.SchedulingGates)
	p.ResourceClaims = shareSlice(s, tagResourceClaims, p.ResourceClaims)
}

func (s *Sharer) containers(cs []corev1.Container) {
	for i := range cs {
		c := &cs[i]
		c.Name = intern(c.Name)
		c.Image = intern(c.Image)
		c.Command = s.strings(tagCommand, c.Command)
		c.Args = s.strings(tagArgs, c.Args)
		c.WorkingDir = intern(c.WorkingDir)
		c.Ports = shareSlice(s, tagPorts, c.Ports)
		c.EnvFrom = shareSlice(s, tagEnvFrom, c.EnvFrom)
		c.Env = shareSlice(s, tagEnv, c.Env)
		c.Resources = shareValue(s, tagResources, &c.Resources)
		c.ResizePolicy = shareSlice(s, tagResizePolicy, c.ResizePolicy)
		// Mounts name the pod's own token volume: their strings are
		// interned, the list is the pod's.
		for j := range c.VolumeMounts {
			m := &c.VolumeMounts[j]
			m.Name, m.MountPath, m.SubPath, m.SubPathExpr = intern(m.Name), intern(m.MountPath), intern(m.SubPath), intern(m.SubPathExpr)
		}
		c.VolumeDevices = shareSlice(s, tagVolumeDevices, c.VolumeDevices)
		c.LivenessProbe = sharePointer(s, tagProbe, c.LivenessProbe)
		c.ReadinessProbe = sharePointer(s, tagProbe, c.ReadinessProbe)
		c.StartupProbe = sharePointer(s, tagProbe, c.StartupProbe)
		c.Lifecycle = sharePointer(s, tagLifecycle, c.Lifecycle)
		c.TerminationMessagePath = intern(c.TerminationMessagePath)
		c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(intern(string(c.TerminationMessagePolicy)))
		c.ImagePullPolicy = corev1.PullPolicy(intern(string(c.ImagePullPolicy)))
		c.SecurityContext = sharePointer(s, tagSecurityContext, c.SecurityContext)
	}
}

// podStatus interns what a pod's status has in common with others': it is
// the pod's own (times, addresses, container IDs), written by its kubelet.
func (s *Sharer) podStatus(st *corev1.PodStatus) {
	st.Phase = corev1.PodPhase(intern(string(st.Phase)))
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status = corev1.PodConditionType(intern(string(c.Type))), corev1.ConditionStatus(intern(string(c.Status)))
		c.Reason, c.Message = intern(c.Reason), intern(c.Message)
	}
	st.Message, st.Reason = intern(st.Message), intern(st.Reason)
	st.NominatedNodeName = intern(st.NominatedNodeName)
	st.HostIP = intern(st.HostIP)
	st.HostIPs = shareSlice(s, tagHostIPs, st.HostIPs)
	s.containerStatuses(st.InitContainerStatuses)
	s.containerStatuses(st.ContainerStatuses)
	s.containerStatuses(st.EphemeralContainerStatuses)
	st.QOSClass = corev1.PodQOSClass(intern(string(st.QOSClass)))
}

func (s *Sharer) containerStatuses(cs []corev1.ContainerStatus) {
	for i := range cs {
		c := &cs[i]
		c.Name, c.Image, c.ImageID = intern(c.Name), intern(c.Image), intern(c.ImageID)
		for _, st := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
			if w := st.Waiting; w != nil {
				w.Reason, w.Message = intern(w.Reason), intern(w.Message)
			}
			if t := st.Terminated; t != nil {
				t.Reason, t.Message = intern(t.Reason), intern(t.Message)
			}
		}
		c.AllocatedResources = shareMap(s, tagResourceList, c.AllocatedResources)
		c.Resources = sharePointer(s, tagResources, c.Resources)
		c.User = sharePointer(s, tagContainerUser, c.User)
	}
}

// Tags tell the kinds of parts apart: two kinds may encode alike.
const (
	tagLabels byte = iota
	tagAnnotations
	tagOwnerReferences
	tagFinalizers
	tagVolumeSource
	tagNodeSelector
	tagPodSecurityContext
	tagImagePullSecrets
	tagAffinity
	tagTolerations
	tagHostAliases
	tagDNSConfig
	tagReadinessGates
	tagTopologySpread
	tagSchedulingGates
	tagResourceClaims
	tagCommand
	tagArgs
	tagPorts
	tagEnvFrom
	tagEnv
	tagResources
	tagResizePolicy
	tagVolumeDevices
	tagProbe
	tagLifecycle
	tagSecurityContext
	tagHostIPs
	tagResourceList
	tagContainerUser
)

// intern returns the one copy of v that every object shares.
func intern(v string) string {
	if v == "" {
		return v
	}
	return unique.Make(v).Value()
}

// marshaler is what the generated protobuf code of every API type has.
type marshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// appendProto appends m's protobuf encoding to b, after its length.
func appendProto(b []byte, m marshaler) []byte {
	n := m.Size()
	b = binary.AppendUvarint(b, uint64(n))
	start := len(b)
	b = slices.Grow(b, n)[:start+n]
	if _, err := m.MarshalToSizedBuffer(b[start:]); err != nil {
		// Nothing to share it by: a key that nothing else has.
		return append(b[:start], "\xff"...)
	}
	return b
}

// canonical returns the value that was shared under s.key, or stores v
// there and returns it; s.mu is held.
func canonical[T any](s *Sharer, v T) T {
	if c, ok := s.lookup(); ok {
		return c.(T)
	}
	s.store(v)
	return v
}

// lookup returns the value shared under s.key, moving it to the newer
// generation; s.mu is held.
func (s *Sharer) lookup() (any, bool) {
	if c, ok := s.cur[string(s.key)]; ok {
		return c, true
	}
	if c, ok := s.old[string(s.key)]; ok {
		s.cur[string(s.key)] = c
		return c, true
	}
	return nil, false
}

// store shares v under s.key, starting a generation when the newer one is
// full; s.mu is held.
func (s *Sharer) store(v any) {
	if len(s.cur) >= s.generation {
		s.old, s.cur = s.cur, make(map[string]any, len(s.cur))
	}
	s.cur[string(s.key)] = v
}

// shareSlice returns the shared list equal to v.
func shareSlice[E any, P interface {
	*E
	marshaler
}](s *Sharer, tag byte, v []E) []E {
	if len(v) == 0 {
		return v
	}
	s.key = append(s.key[:0], tag)
	for i := range v {
		s.key = appendProto(s.key, P(&v[i]))
	}
	return canonical(s, v)
}

// sharePointer returns the shared pointer to a value equal to *v.
func sharePointer[E any, P interface {
	*E
	marshaler
}](s *Sharer, tag byte, v P) P {
	if v == nil {
		return v
	}
	s.key = appendProto(append(s.key[:0], tag), v)
	return canonical(s, v)
}

// shareValue returns a copy of the shared value equal to *v: a struct held
// by value, whose lists, maps and pointers are then shared. The value
// shared is a copy of its own, not a pointer into the object v is part of.
func shareValue[E any, P interface {
	*E
	marshaler
}](s *Sharer, tag byte, v P) E {
	s.key = appendProto(append(s.key[:0], tag), v)
	if c, ok := s.lookup(); ok {
		return *c.(P)
	}
	c := P(new(E))
	*c = *v
	s.store(c)
	return *c
}

// strings returns the shared list of strings equal to v.
func (s *Sharer) strings(tag byte, v []string) []string {
	if len(v) == 0 {
		return v
	}
	s.key = append(s.key[:0], tag)
	for _, e := range v {
		s.key = binary.AppendUvarint(s.key, uint64(len(e)))
		s.key = append(s.key, e...)
	}
	return canonical(s, v)
}

// stringMap returns the shared map equal to v. One that is new is copied
// with its keys and values interned: label keys repeat across every object.
func (s *Sharer) stringMap(tag byte, v map[string]string) map[string]string {
	if len(v) == 0 {
		return v
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s.key = append(s.key[:0], tag)
	for _, k := range keys {
		s.key = binary.AppendUvarint(s.key, uint64(len(k)))
		s.key = append(s.key, k...)
		s.key = binary.AppendUvarint(s.key, uint64(len(v[k])))
		s.key = append(s.key, v[k]...)
	}
	if c, ok := s.lookup(); ok {
		return c.(map[string]string)
	}
	interned := make(map[string]string, len(v))
	for k, e := range v {
		interned[intern(k)] = intern(e)
	}
	s.store(interned)
	return interned
}

// shareMap returns the shared resource list equal to v.
func shareMap(s *Sharer, tag byte, v corev1.ResourceList) corev1.ResourceList {
	if len(v) == 0 {
		return v
	}
	// ResourceRequirements is the message that holds resource lists: its
	// encoding of v alone is v's.
	r := corev1.ResourceRequirements{Limits: v}
	s.key = appendProto(append(s.key[:0], tag), &r)
	return canonical(s, v)
}
