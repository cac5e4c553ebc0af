package index

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// Reference kinds: the Kind of a Reference and the first part of a UsesIndex
// key. All four are namespaced and a pod can only name objects in its own
// namespace, so kind and name identify the object.
const (
	RefConfigMap      = "ConfigMap"
	RefSecret         = "Secret"
	RefPVC            = "PersistentVolumeClaim"
	RefServiceAccount = "ServiceAccount"
)

// Reference is one object a pod spec refers to and every place it does so.
// Only names are kept, never what the object holds: a pod spec has no Secret
// data, and a Reference must not acquire any.
//
// Via says where the spec names the object, one entry per place, sorted and
// without duplicates. V is a volume name, C a container name, VAR an
// environment variable name:
//
//	volume V                          volumes[V].configMap, .secret or .persistentVolumeClaim
//	projected volume V                a configMap or secret source of volumes[V].projected
//	ephemeral volume V                the claim generated for volumes[V].ephemeral (pods only)
//	volume V FIELD                    a volume's credentials, FIELD one of csi.nodePublishSecretRef,
//	                                  azureFile.secretName, cephfs.secretRef, cinder.secretRef,
//	                                  flexVolume.secretRef, iscsi.secretRef, rbd.secretRef,
//	                                  scaleIO.secretRef, storageos.secretRef
//	env C/VAR                         containers[C].env[VAR].valueFrom.configMapKeyRef or .secretKeyRef
//	envFrom C                         containers[C].envFrom[].configMapRef or .secretRef
//	initContainer env C/VAR           the same for initContainers (sidecars included)
//	initContainer envFrom C
//	ephemeralContainer env C/VAR      the same for ephemeralContainers
//	ephemeralContainer envFrom C
//	imagePullSecrets                  imagePullSecrets[]
//	serviceAccountName                serviceAccountName
//	serviceAccount                    the deprecated serviceAccount, used when serviceAccountName is empty
//	serviceAccountName (default)      neither is set: the pod runs as "default"
type Reference struct {
	Kind string   `json:"kind"`
	Name string   `json:"name"`
	Via  []string `json:"via"`
	// Optional is true only if every use is marked optional, that is when the
	// pod starts without the object. Uses that cannot be marked (claims,
	// credentials, image pull secrets, the service account) never are.
	Optional bool `json:"optional,omitempty"`
}

// PodSpecOf returns the pod spec of a *corev1.Pod, or the spec of the pod
// template of a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob
// (spec.jobTemplate.spec.template), ReplicationController or PodTemplate. It
// returns ok=false for anything else, for nil pointers, and for a
// ReplicationController without a template. The spec is the object's own, so
// it is as read-only as the object.
func PodSpecOf(obj any) (spec *corev1.PodSpec, ok bool) {
	spec, _ = podSpecOf(obj)
	return spec, spec != nil
}

// podSpecOf is PodSpecOf that also reports whether obj is of a type that has a
// pod spec, so that UsesIndexFunc can tell a template-less
// ReplicationController (data: no key) from a type it cannot index (a
// programming error).
func podSpecOf(obj any) (spec *corev1.PodSpec, known bool) {
	if o, ok := obj.(*corev1.Pod); ok {
		// A typed nil in an interface is not == nil, and reading through it
		// would panic inside the store's lock.
		if o != nil {
			return &o.Spec, true
		}
		return nil, false
	}
	t, known := PodTemplateOf(obj)
	if t == nil {
		return nil, known
	}
	return &t.Spec, true
}

// PodTemplateOf returns the pod template of a Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job, CronJob (spec.jobTemplate.spec.template),
// ReplicationController or PodTemplate, the object's own. known reports
// whether obj is one of them and not a nil pointer; a ReplicationController
// may have no template (nil, true).
func PodTemplateOf(obj any) (template *corev1.PodTemplateSpec, known bool) {
	// A typed nil in an interface is not == nil, and reading through it would
	// panic inside the store's lock.
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, false
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template, true
	case *appsv1.ReplicaSet:
		return &o.Spec.Template, true
	case *appsv1.StatefulSet:
		return &o.Spec.Template, true
	case *appsv1.DaemonSet:
		return &o.Spec.Template, true
	case *batchv1.Job:
		return &o.Spec.Template, true
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template, true
	case *corev1.ReplicationController:
		return o.Spec.Template, true
	case *corev1.PodTemplate:
		return &o.Template, true
	}
	return nil, false
}

// podSpecPaths locates the pod spec in unstructured objects of the kinds
// PodSpecOf accepts. Versions are left out: the layout has not changed
// between the versions the API server still serves.
var podSpecPaths = map[schema.GroupKind][]string{
	{Kind: "Pod"}:                        {"spec"},
	{Kind: "ReplicationController"}:      {"spec", "template", "spec"},
	{Kind: "PodTemplate"}:                {"template", "spec"},
	{Group: "apps", Kind: "Deployment"}:  {"spec", "template", "spec"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec", "template", "spec"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec", "template", "spec"},
	{Group: "apps", Kind: "DaemonSet"}:   {"spec", "template", "spec"},
	{Group: "batch", Kind: "Job"}:        {"spec", "template", "spec"},
	{Group: "batch", Kind: "CronJob"}:    {"spec", "jobTemplate", "spec", "template", "spec"},
}

// HasPodSpec reports whether objects of kind gk carry a pod spec, that is
// whether UsesIndex can key them. Add UsesIndex only to the informers of such
// kinds: UsesIndexFunc returns an error for other typed objects, on which a
// store panics.
func HasPodSpec(gk schema.GroupKind) bool {
	_, ok := podSpecPaths[gk]
	return ok
}

// SpecReferences lists the ConfigMaps, Secrets, PersistentVolumeClaims and
// ServiceAccounts spec refers to, one Reference per object, sorted by kind
// then name. podName names the claims of ephemeral volumes, which only exist
// for pods: pass "" for a template, whose ephemeral volumes are then left out.
// A nil spec has no references; any other has at least its service account.
func SpecReferences(spec *corev1.PodSpec, podName string) []Reference {
	uses := collectUses(spec, podName)
	if len(uses) == 0 {
		return nil
	}
	sortByObject(uses)
	var refs []Reference
	for start, end := 0, 0; start < len(uses); start = end {
		end = runEnd(uses, start)
		run := uses[start:end]
		r := Reference{Kind: run[0].kind, Name: run[0].name, Via: make([]string, 0, len(run)), Optional: true}
		for _, u := range run {
			r.Via = append(r.Via, u.via.String())
			r.Optional = r.Optional && u.optional
		}
		slices.Sort(r.Via)
		r.Via = slices.Compact(r.Via)
		refs = append(refs, r)
	}
	return refs
}

// UsesIndex is the name of the index from a referenced object to the pods and
// workloads that use it: keys are UsesKey(kind, namespace, name) for each
// object SpecReferences lists, so one index answers "who uses Secret db" for
// all four kinds.
const UsesIndex = "uses"

// UsesIndexFunc is the IndexFunc of UsesIndex. It keys the kinds PodSpecOf
// accepts, typed or unstructured; tombstones are unwrapped. Metadata-only
// objects and unstructured objects of other kinds, custom resources with pod
// templates included, get no key: their spec is not known or not understood.
// So does a ReplicationController without a template, and an unstructured
// object whose spec does not decode, since one malformed object must not
// panic the store. Any other typed object is an error naming its type.
func UsesIndexFunc(obj any) ([]string, error) {
	m, err := objectMeta(UsesIndex, obj)
	if err != nil {
		return nil, err
	}
	var spec *corev1.PodSpec
	isPod := false
	// meta.Accessor returned the object itself, which is what to look into.
	switch o := m.(type) {
	case *metav1.PartialObjectMetadata:
		return nil, nil
	case *unstructured.Unstructured:
		gk := o.GroupVersionKind().GroupKind()
		if spec = unstructuredPodSpec(o, gk); spec == nil {
			return nil, nil
		}
		isPod = gk == schema.GroupKind{Kind: "Pod"}
	default:
		var known bool
		if spec, known = podSpecOf(m); !known {
			return nil, fmt.Errorf("%s index: expected an object with a pod spec, got %T", UsesIndex, m)
		}
		_, isPod = m.(*corev1.Pod)
	}
	podName := ""
	if isPod {
		podName = m.GetName()
	}
	uses := collectUses(spec, podName)
	if len(uses) == 0 {
		return nil, nil
	}
	// Via strings are not rendered here: a store calls this on every update of
	// every pod, mostly status changes, and only needs kind and name.
	keys := make([]string, 0, len(uses))
	ns := m.GetNamespace()
	sortByObject(uses)
	for start, end := 0, 0; start < len(uses); start = end {
		end = runEnd(uses, start)
		keys = append(keys, UsesKey(uses[start].kind, ns, uses[start].name))
	}
	return keys, nil
}

// UsesKey returns the UsesIndex key of the object of kind (one of the Ref
// constants) named name in namespace: "Kind/namespace/name". Kinds and
// namespaces cannot contain '/', so the key splits back unambiguously.
func UsesKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

// unstructuredPodSpec decodes the pod spec of u, of kind gk, or returns nil
// when gk has none or it is absent or malformed.
func unstructuredPodSpec(u *unstructured.Unstructured, gk schema.GroupKind) *corev1.PodSpec {
	path, ok := podSpecPaths[gk]
	if !ok {
		return nil
	}
	// NoCopy: the converter only reads the map, and a deep copy of a whole
	// pod spec per index call would double the cost.
	raw, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	m, isMap := raw.(map[string]any)
	if !found || err != nil || !isMap {
		return nil
	}
	spec := &corev1.PodSpec{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(m, spec) != nil {
		return nil
	}
	return spec
}

// via is the place of one use, kept in parts and rendered only when asked:
// building the string for every use would allocate on the index's hot path.
type via struct {
	prefix, owner, sep, detail string
}

func (v via) String() string {
	return v.prefix + v.owner + v.sep + v.detail
}

// use is one place where a spec names an object.
type use struct {
	kind, name string
	via        via
	optional   bool
}

// sortByObject sorts uses by kind and name, so that the uses of one object
// are adjacent. Sorting a flat list rather than merging into a map keeps an
// index call to one allocation for the list.
func sortByObject(uses []use) {
	slices.SortFunc(uses, func(a, b use) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
	})
}

// runEnd returns the end of the run of uses, sorted by sortByObject, that
// name the same object as uses[start].
func runEnd(uses []use, start int) int {
	end := start + 1
	for end < len(uses) && uses[end].kind == uses[start].kind && uses[end].name == uses[start].name {
		end++
	}
	return end
}

// usesCollector accumulates the uses found in one spec.
type usesCollector struct {
	uses []use
}

// add records a use. A reference without a name fails validation and names
// nothing, so it is dropped rather than keyed as "".
func (c *usesCollector) add(kind, name string, v via, optional bool) {
	if name != "" {
		c.uses = append(c.uses, use{kind: kind, name: name, via: v, optional: optional})
	}
}

// collectUses walks every field of spec that names a ConfigMap, Secret,
// PersistentVolumeClaim or ServiceAccount.
func collectUses(spec *corev1.PodSpec, podName string) []use {
	if spec == nil {
		return nil
	}
	// Most pods use a handful of objects; starting with room for them saves
	// the reallocations of growing from nil.
	c := &usesCollector{uses: make([]use, 0, 8)}
	for i := range spec.Volumes {
		c.volume(&spec.Volumes[i], podName)
	}
	for i := range spec.Containers {
		ct := &spec.Containers[i]
		c.env(appContainers, ct.Name, ct.Env, ct.EnvFrom)
	}
	for i := range spec.InitContainers {
		ct := &spec.InitContainers[i]
		c.env(initContainers, ct.Name, ct.Env, ct.EnvFrom)
	}
	for i := range spec.EphemeralContainers {
		ct := &spec.EphemeralContainers[i]
		c.env(ephemeralContainers, ct.Name, ct.Env, ct.EnvFrom)
	}
	for _, s := range spec.ImagePullSecrets {
		c.add(RefSecret, s.Name, via{prefix: "imagePullSecrets"}, false)
	}
	// The API server copies serviceAccountName into the deprecated field and
	// back, so either may be the only one set in a template written by hand;
	// with neither, admission assigns "default".
	switch {
	case spec.ServiceAccountName != "":
		c.add(RefServiceAccount, spec.ServiceAccountName, via{prefix: "serviceAccountName"}, false)
	case spec.DeprecatedServiceAccount != "":
		c.add(RefServiceAccount, spec.DeprecatedServiceAccount, via{prefix: "serviceAccount"}, false)
	default:
		c.add(RefServiceAccount, "default", via{prefix: "serviceAccountName (default)"}, false)
	}
	return c.uses
}

// volume records the objects volume v names.
func (c *usesCollector) volume(v *corev1.Volume, podName string) {
	at := via{prefix: "volume ", owner: v.Name}
	// field renders the place of a credentials reference inside the volume.
	field := func(f string) via { return via{prefix: "volume ", owner: v.Name, sep: " ", detail: f} }
	src := &v.VolumeSource
	// Validation allows one source per volume; testing each anyway costs
	// nothing and keeps hand-built objects from hiding a reference.
	if s := src.ConfigMap; s != nil {
		c.add(RefConfigMap, s.Name, at, ptr.Deref(s.Optional, false))
	}
	if s := src.Secret; s != nil {
		c.add(RefSecret, s.SecretName, at, ptr.Deref(s.Optional, false))
	}
	if s := src.PersistentVolumeClaim; s != nil {
		c.add(RefPVC, s.ClaimName, at, false)
	}
	if s := src.Projected; s != nil {
		// serviceAccountToken sources project the pod's own service account,
		// already a reference; downwardAPI and clusterTrustBundle sources name
		// nothing namespaced.
		p := via{prefix: "projected volume ", owner: v.Name}
		for _, ps := range s.Sources {
			if ps.ConfigMap != nil {
				c.add(RefConfigMap, ps.ConfigMap.Name, p, ptr.Deref(ps.ConfigMap.Optional, false))
			}
			if ps.Secret != nil {
				c.add(RefSecret, ps.Secret.Name, p, ptr.Deref(ps.Secret.Optional, false))
			}
		}
	}
	// The ephemeral volume controller names the claim after the pod and the
	// volume; a template has no pod name yet, hence no claim.
	if src.Ephemeral != nil && podName != "" {
		c.add(RefPVC, podName+"-"+v.Name, via{prefix: "ephemeral volume ", owner: v.Name}, false)
	}
	// Credentials of CSI and in-tree volumes: Secrets in the pod's namespace.
	// A nil reference has no name, which add drops.
	if s := src.CSI; s != nil {
		c.add(RefSecret, refName(s.NodePublishSecretRef), field("csi.nodePublishSecretRef"), false)
	}
	if s := src.AzureFile; s != nil {
		c.add(RefSecret, s.SecretName, field("azureFile.secretName"), false)
	}
	if s := src.CephFS; s != nil {
		c.add(RefSecret, refName(s.SecretRef), field("cephfs.secretRef"), false)
	}
	if s := src.Cinder; s != nil {
		c.add(RefSecret, refName(s.SecretRef), field("cinder.secretRef"), false)
	}
	if s := src.FlexVolume; s != nil {
		c.add(RefSecret, refName(s.SecretRef), field("flexVolume.secretRef"), false)
	}
	if s := src.ISCSI; s != nil {
		c.add(RefSecret, refName(s.SecretRef), field("iscsi.secretRef"), false)
	}
	if s := src.RBD; s != nil {
		c.add(RefSecret, refName(s.SecretRef), field("rbd.secretRef"), false)
	}
	if s := src.ScaleIO; s != nil {
		c.add(RefSecret, refName(s.SecretRef), field("scaleIO.secretRef"), false)
	}
	if s := src.StorageOS; s != nil {
		c.add(RefSecret, refName(s.SecretRef), field("storageos.secretRef"), false)
	}
}

// refName returns the name r refers to, "" for none.
func refName(r *corev1.LocalObjectReference) string {
	if r == nil {
		return ""
	}
	return r.Name
}

// containerList holds the Via prefixes of one of a spec's container lists,
// spelt out so that recording a use does not concatenate them.
type containerList struct {
	env, envFrom string
}

var (
	appContainers       = containerList{env: "env ", envFrom: "envFrom "}
	initContainers      = containerList{env: "initContainer env ", envFrom: "initContainer envFrom "}
	ephemeralContainers = containerList{env: "ephemeralContainer env ", envFrom: "ephemeralContainer envFrom "}
)

// env records the objects named by the env and envFrom of container, one of
// the containers of list.
func (c *usesCollector) env(list containerList, container string, env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
	for i := range env {
		from := env[i].ValueFrom
		if from == nil {
			continue
		}
		at := via{prefix: list.env, owner: container, sep: "/", detail: env[i].Name}
		if r := from.ConfigMapKeyRef; r != nil {
			c.add(RefConfigMap, r.Name, at, ptr.Deref(r.Optional, false))
		}
		if r := from.SecretKeyRef; r != nil {
			c.add(RefSecret, r.Name, at, ptr.Deref(r.Optional, false))
		}
	}
	at := via{prefix: list.envFrom, owner: container}
	for i := range envFrom {
		if r := envFrom[i].ConfigMapRef; r != nil {
			c.add(RefConfigMap, r.Name, at, ptr.Deref(r.Optional, false))
		}
		if r := envFrom[i].SecretRef; r != nil {
			c.add(RefSecret, r.Name, at, ptr.Deref(r.Optional, false))
		}
	}
}
