package index

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// defaultSA is the reference every spec without a service account has. It
// sorts last, so expectations append it.
var defaultSA = Reference{Kind: RefServiceAccount, Name: "default", Via: []string{"serviceAccountName (default)"}}

func vol(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

func secretKey(name string, optional *bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k", Optional: optional,
	}}
}

func configMapKey(name string, optional *bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k", Optional: optional,
	}}
}

func secretEnvFrom(name string, optional *bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: optional,
	}}
}

func configMapEnvFrom(name string, optional *bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: optional,
	}}
}

func local(name string) *corev1.LocalObjectReference {
	return &corev1.LocalObjectReference{Name: name}
}

// usingSecret is a pod spec using Secret db in several ways and ConfigMap cfg
// once, the fixture of the index and store tests.
func usingSecret(sa string) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: sa,
		Volumes: []corev1.Volume{
			vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db"}}),
			vol("scratch", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}),
		},
		Containers: []corev1.Container{{
			Name: "app",
			Env:  []corev1.EnvVar{{Name: "PASS", ValueFrom: secretKey("db", nil)}},
			EnvFrom: []corev1.EnvFromSource{
				configMapEnvFrom("cfg", nil),
			},
		}},
	}
}

func TestSpecReferences(t *testing.T) {
	yes, no := ptr.To(true), ptr.To(false)
	// credential builds a spec with one volume using its credentials field.
	credential := func(src corev1.VolumeSource) *corev1.PodSpec {
		return &corev1.PodSpec{Volumes: []corev1.Volume{vol("v", src)}}
	}
	type specCase struct {
		name    string
		spec    *corev1.PodSpec
		podName string
		want    []Reference
	}
	cases := []specCase{
		{name: "nil spec", spec: nil, want: nil},
		{name: "empty spec runs as default", spec: &corev1.PodSpec{}, want: []Reference{defaultSA}},
		{
			name: "serviceAccountName",
			spec: &corev1.PodSpec{ServiceAccountName: "web"},
			want: []Reference{{Kind: RefServiceAccount, Name: "web", Via: []string{"serviceAccountName"}}},
		},
		{
			name: "deprecated serviceAccount alone",
			spec: &corev1.PodSpec{DeprecatedServiceAccount: "old"},
			want: []Reference{{Kind: RefServiceAccount, Name: "old", Via: []string{"serviceAccount"}}},
		},
		{
			name: "serviceAccountName wins over the deprecated field",
			spec: &corev1.PodSpec{ServiceAccountName: "web", DeprecatedServiceAccount: "old"},
			want: []Reference{{Kind: RefServiceAccount, Name: "web", Via: []string{"serviceAccountName"}}},
		},
		{
			name: "configMap, secret and claim volumes",
			spec: &corev1.PodSpec{Volumes: []corev1.Volume{
				vol("config", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Optional: yes,
				}}),
				vol("tls", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls", Optional: no}}),
				vol("data", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-0"}}),
				vol("tmp", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
			}},
			want: []Reference{
				{Kind: RefConfigMap, Name: "cfg", Via: []string{"volume config"}, Optional: true},
				{Kind: RefPVC, Name: "data-0", Via: []string{"volume data"}},
				{Kind: RefSecret, Name: "tls", Via: []string{"volume tls"}},
				defaultSA,
			},
		},
		{
			name: "projected volume",
			spec: &corev1.PodSpec{ServiceAccountName: "web", Volumes: []corev1.Volume{
				vol("bundle", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "key"}, Optional: yes}},
					// The token is the pod's own service account's: no
					// reference beyond serviceAccountName.
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
					{DownwardAPI: &corev1.DownwardAPIProjection{}},
				}}}),
			}},
			want: []Reference{
				{Kind: RefConfigMap, Name: "cfg", Via: []string{"projected volume bundle"}},
				{Kind: RefSecret, Name: "key", Via: []string{"projected volume bundle"}, Optional: true},
				{Kind: RefServiceAccount, Name: "web", Via: []string{"serviceAccountName"}},
			},
		},
		{
			name:    "ephemeral volume of a pod",
			spec:    &corev1.PodSpec{Volumes: []corev1.Volume{vol("scratch", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})}},
			podName: "web-1",
			want: []Reference{
				{Kind: RefPVC, Name: "web-1-scratch", Via: []string{"ephemeral volume scratch"}},
				defaultSA,
			},
		},
		{
			name: "ephemeral volume of a template",
			spec: &corev1.PodSpec{Volumes: []corev1.Volume{vol("scratch", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})}},
			want: []Reference{defaultSA},
		},
		{
			name: "csi without credentials",
			spec: credential(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}),
			want: []Reference{defaultSA},
		},
		{
			name: "env key refs in every container list",
			spec: &corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{
					{Name: "PLAIN", Value: "x"},
					{Name: "FIELD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "DB_PASSWORD", ValueFrom: secretKey("db", nil)},
					{Name: "MODE", ValueFrom: configMapKey("cfg", yes)},
				}}},
				InitContainers: []corev1.Container{{Name: "migrate", Env: []corev1.EnvVar{
					{Name: "X", ValueFrom: secretKey("migrations", no)},
				}}},
				EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: "debug", Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: secretKey("debug", yes)}},
				}}},
			},
			want: []Reference{
				{Kind: RefConfigMap, Name: "cfg", Via: []string{"env app/MODE"}, Optional: true},
				{Kind: RefSecret, Name: "db", Via: []string{"env app/DB_PASSWORD"}},
				{Kind: RefSecret, Name: "debug", Via: []string{"ephemeralContainer env debug/TOKEN"}, Optional: true},
				{Kind: RefSecret, Name: "migrations", Via: []string{"initContainer env migrate/X"}},
				defaultSA,
			},
		},
		{
			name: "envFrom in every container list",
			spec: &corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", EnvFrom: []corev1.EnvFromSource{
					configMapEnvFrom("cfg", nil), secretEnvFrom("db", yes),
				}}},
				InitContainers: []corev1.Container{{Name: "proxy", EnvFrom: []corev1.EnvFromSource{
					secretEnvFrom("proxy", nil),
				}}},
				EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: "debug", EnvFrom: []corev1.EnvFromSource{configMapEnvFrom("debug", nil)},
				}}},
			},
			want: []Reference{
				{Kind: RefConfigMap, Name: "cfg", Via: []string{"envFrom app"}},
				{Kind: RefConfigMap, Name: "debug", Via: []string{"ephemeralContainer envFrom debug"}},
				{Kind: RefSecret, Name: "db", Via: []string{"envFrom app"}, Optional: true},
				{Kind: RefSecret, Name: "proxy", Via: []string{"initContainer envFrom proxy"}},
				defaultSA,
			},
		},
		{
			name: "imagePullSecrets",
			spec: &corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}, {Name: "mirror"}}},
			want: []Reference{
				{Kind: RefSecret, Name: "mirror", Via: []string{"imagePullSecrets"}},
				{Kind: RefSecret, Name: "registry", Via: []string{"imagePullSecrets"}},
				defaultSA,
			},
		},
		{
			name: "uses of one object merge, sorted and de-duplicated",
			spec: &corev1.PodSpec{
				ServiceAccountName: "web",
				Volumes: []corev1.Volume{
					vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db"}}),
					vol("all", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
						{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}},
					}}}),
				},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "db"}},
				Containers: []corev1.Container{{
					Name: "app",
					Env:  []corev1.EnvVar{{Name: "USER", ValueFrom: secretKey("db", nil)}, {Name: "PASS", ValueFrom: secretKey("db", nil)}},
					// The same source twice is one place.
					EnvFrom: []corev1.EnvFromSource{secretEnvFrom("db", nil), secretEnvFrom("db", nil)},
				}},
				InitContainers: []corev1.Container{{Name: "migrate", Env: []corev1.EnvVar{{Name: "PASS", ValueFrom: secretKey("db", nil)}}}},
			},
			want: []Reference{
				{Kind: RefSecret, Name: "db", Via: []string{
					"env app/PASS", "env app/USER", "envFrom app", "imagePullSecrets",
					"initContainer env migrate/PASS", "projected volume all", "volume creds",
				}},
				{Kind: RefServiceAccount, Name: "web", Via: []string{"serviceAccountName"}},
			},
		},
		{
			name: "optional only if every use is",
			spec: &corev1.PodSpec{
				Volumes: []corev1.Volume{
					vol("a", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "all-optional", Optional: yes}}),
					vol("b", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "mixed", Optional: yes}}),
					vol("c", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "pull", Optional: yes}}),
					vol("d", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "unset"},
					}}),
				},
				Containers: []corev1.Container{{
					Name:    "app",
					Env:     []corev1.EnvVar{{Name: "A", ValueFrom: secretKey("all-optional", yes)}, {Name: "M", ValueFrom: secretKey("mixed", no)}},
					EnvFrom: []corev1.EnvFromSource{secretEnvFrom("all-optional", yes), configMapEnvFrom("unset", yes)},
				}},
				// Image pull secrets cannot be marked optional.
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
			},
			want: []Reference{
				{Kind: RefConfigMap, Name: "unset", Via: []string{"envFrom app", "volume d"}},
				{Kind: RefSecret, Name: "all-optional", Via: []string{"env app/A", "envFrom app", "volume a"}, Optional: true},
				{Kind: RefSecret, Name: "mixed", Via: []string{"env app/M", "volume b"}},
				{Kind: RefSecret, Name: "pull", Via: []string{"imagePullSecrets", "volume c"}},
				defaultSA,
			},
		},
		{
			// Invalid, so never in a store, but must not produce "" names.
			name: "references without a name are dropped",
			spec: &corev1.PodSpec{
				Volumes: []corev1.Volume{
					vol("a", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}),
					vol("b", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}),
					vol("c", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}),
					vol("d", corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{}}),
				},
				Containers:       []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "X", ValueFrom: secretKey("", nil)}}}},
				ImagePullSecrets: []corev1.LocalObjectReference{{}},
			},
			want: []Reference{defaultSA},
		},
		{
			name: "sorted by kind then name",
			spec: &corev1.PodSpec{
				ServiceAccountName: "a",
				ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "b"}, {Name: "a"}},
				Volumes: []corev1.Volume{
					vol("z", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "z"}}),
					vol("y", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "y"}}}),
					vol("x", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}),
				},
			},
			want: []Reference{
				{Kind: RefConfigMap, Name: "x", Via: []string{"volume x"}},
				{Kind: RefConfigMap, Name: "y", Via: []string{"volume y"}},
				{Kind: RefPVC, Name: "z", Via: []string{"volume z"}},
				{Kind: RefSecret, Name: "a", Via: []string{"imagePullSecrets"}},
				{Kind: RefSecret, Name: "b", Via: []string{"imagePullSecrets"}},
				{Kind: RefServiceAccount, Name: "a", Via: []string{"serviceAccountName"}},
			},
		},
	}
	// Each of these volumes holds its credentials in Secret s, named by the
	// field that holds them.
	for _, v := range []struct {
		field string
		src   corev1.VolumeSource
	}{
		{"csi.nodePublishSecretRef", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: local("s")}}},
		{"azureFile.secretName", corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "s", ShareName: "x"}}},
		{"cephfs.secretRef", corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{SecretRef: local("s")}}},
		{"cinder.secretRef", corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{SecretRef: local("s")}}},
		{"flexVolume.secretRef", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{SecretRef: local("s")}}},
		{"iscsi.secretRef", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{SecretRef: local("s")}}},
		{"rbd.secretRef", corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{SecretRef: local("s")}}},
		{"scaleIO.secretRef", corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{SecretRef: local("s")}}},
		{"storageos.secretRef", corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{SecretRef: local("s")}}},
	} {
		cases = append(cases, specCase{
			name: strings.Replace(v.field, ".", " ", 1),
			spec: credential(v.src),
			want: []Reference{{Kind: RefSecret, Name: "s", Via: []string{"volume v " + v.field}}, defaultSA},
		})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before *corev1.PodSpec
			if tc.spec != nil {
				before = tc.spec.DeepCopy()
			}
			got := SpecReferences(tc.spec, tc.podName)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SpecReferences (-want +got):\n%s", diff)
			}
			assertUnchanged(t, before, tc.spec)
		})
	}
}

// TestReferenceJSON pins the JSON shape output formats rely on: optional is
// left out when false.
func TestReferenceJSON(t *testing.T) {
	for _, tc := range []struct {
		ref  Reference
		want string
	}{
		{Reference{Kind: RefSecret, Name: "db", Via: []string{"imagePullSecrets"}}, `{"kind":"Secret","name":"db","via":["imagePullSecrets"]}`},
		{Reference{Kind: RefConfigMap, Name: "c", Via: []string{"envFrom app"}, Optional: true}, `{"kind":"ConfigMap","name":"c","via":["envFrom app"],"optional":true}`},
	} {
		b, err := json.Marshal(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("json = %s, want %s", b, tc.want)
		}
	}
}

func TestPodSpecOf(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: "tmpl"}}
	pod := newPod("default", "p")
	deploy := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: tmpl}}
	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: tmpl}}
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: tmpl}}
	ds := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: tmpl}}
	job := &batchv1.Job{Spec: batchv1.JobSpec{Template: tmpl}}
	cron := &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: tmpl.DeepCopy()}}
	podTemplate := &corev1.PodTemplate{Template: tmpl}
	cases := []struct {
		name string
		obj  any
		// want is the object's own spec, or nil for ok=false.
		want *corev1.PodSpec
	}{
		{"pod", pod, &pod.Spec},
		{"deployment", deploy, &deploy.Spec.Template.Spec},
		{"replicaset", rs, &rs.Spec.Template.Spec},
		{"statefulset", sts, &sts.Spec.Template.Spec},
		{"daemonset", ds, &ds.Spec.Template.Spec},
		{"job", job, &job.Spec.Template.Spec},
		{"cronjob", cron, &cron.Spec.JobTemplate.Spec.Template.Spec},
		{"replicationcontroller", rc, &rc.Spec.Template.Spec},
		{"podtemplate", podTemplate, &podTemplate.Template.Spec},
		{"replicationcontroller without template", &corev1.ReplicationController{}, nil},
		{"nil pod", (*corev1.Pod)(nil), nil},
		{"nil deployment", (*appsv1.Deployment)(nil), nil},
		{"nil replicaset", (*appsv1.ReplicaSet)(nil), nil},
		{"nil statefulset", (*appsv1.StatefulSet)(nil), nil},
		{"nil daemonset", (*appsv1.DaemonSet)(nil), nil},
		{"nil job", (*batchv1.Job)(nil), nil},
		{"nil cronjob", (*batchv1.CronJob)(nil), nil},
		{"nil replicationcontroller", (*corev1.ReplicationController)(nil), nil},
		{"nil podtemplate", (*corev1.PodTemplate)(nil), nil},
		{"untyped nil", nil, nil},
		{"service", &corev1.Service{}, nil},
		{"pod value", corev1.Pod{}, nil},
		// Unstructured objects are UsesIndexFunc's business: PodSpecOf hands
		// out the object's own spec, which an unstructured one has not.
		{"unstructured pod", toUnstructured(t, pod, "v1", "Pod"), nil},
		{"tombstone", tombstone(pod), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PodSpecOf(tc.obj)
			if ok != (tc.want != nil) || got != tc.want {
				t.Errorf("PodSpecOf = %p, %v; want %p, %v", got, ok, tc.want, tc.want != nil)
			}
		})
	}
}

func TestHasPodSpec(t *testing.T) {
	for _, tc := range []struct {
		gk   schema.GroupKind
		want bool
	}{
		{schema.GroupKind{Kind: "Pod"}, true},
		{schema.GroupKind{Kind: "ReplicationController"}, true},
		{schema.GroupKind{Kind: "PodTemplate"}, true},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, true},
		{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, true},
		{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, true},
		{schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, true},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, true},
		{schema.GroupKind{Group: "batch", Kind: "CronJob"}, true},
		{schema.GroupKind{Kind: "Service"}, false},
		{schema.GroupKind{Group: "example.com", Kind: "Pod"}, false},
		{schema.GroupKind{Kind: "Deployment"}, false},
	} {
		if got := HasPodSpec(tc.gk); got != tc.want {
			t.Errorf("HasPodSpec(%v) = %v, want %v", tc.gk, got, tc.want)
		}
	}
}

func TestUsesKey(t *testing.T) {
	if got, want := UsesKey(RefSecret, "default", "db"), "Secret/default/db"; got != want {
		t.Errorf("UsesKey = %q, want %q", got, want)
	}
}

func TestUsesIndexFunc(t *testing.T) {
	pod := newPod("shop", "web-1", func(p *corev1.Pod) { p.Spec = usingSecret("web") })
	podKeys := []string{
		"ConfigMap/shop/cfg",
		"PersistentVolumeClaim/shop/web-1-scratch",
		"Secret/shop/db",
		"ServiceAccount/shop/web",
	}
	// Templates have no ephemeral claim: it is named after a pod.
	tmplKeys := []string{"ConfigMap/shop/cfg", "Secret/shop/db", "ServiceAccount/shop/web"}
	meta := metav1.ObjectMeta{Namespace: "shop", Name: "web"}
	tmpl := corev1.PodTemplateSpec{Spec: usingSecret("web")}
	deploy := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Template: tmpl}}
	cron := &batchv1.CronJob{ObjectMeta: meta, Spec: batchv1.CronJobSpec{
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}},
	}}
	// A custom resource with a pod template is not understood.
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": "shop", "name": "web"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"serviceAccountName": "web"}}},
	}}
	malformed := func(spec any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"namespace": "shop", "name": "bad"},
			"spec":     spec,
		}}
	}
	cases := []indexCase{
		{name: "pod", obj: pod, want: podKeys},
		{name: "pod without references runs as default", obj: newPod("shop", "bare"), want: []string{"ServiceAccount/shop/default"}},
		{name: "deployment", obj: deploy, want: tmplKeys},
		{name: "replicaset", obj: &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Template: tmpl}}, want: tmplKeys},
		{name: "statefulset", obj: &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Template: tmpl}}, want: tmplKeys},
		{name: "daemonset", obj: &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Template: tmpl}}, want: tmplKeys},
		{name: "job", obj: &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: tmpl}}, want: tmplKeys},
		{name: "cronjob", obj: cron, want: tmplKeys},
		{name: "podtemplate", obj: &corev1.PodTemplate{ObjectMeta: meta, Template: tmpl}, want: tmplKeys},
		{
			name: "replicationcontroller",
			obj:  &corev1.ReplicationController{ObjectMeta: meta, Spec: corev1.ReplicationControllerSpec{Template: tmpl.DeepCopy()}},
			want: tmplKeys,
		},
		{name: "replicationcontroller without template", obj: &corev1.ReplicationController{ObjectMeta: meta}, want: nil},
		{name: "tombstone", obj: tombstone(pod), want: podKeys},
		{name: "unstructured pod", obj: toUnstructured(t, pod, "v1", "Pod"), want: podKeys},
		{name: "unstructured deployment", obj: toUnstructured(t, deploy, "apps/v1", "Deployment"), want: tmplKeys},
		{name: "unstructured cronjob", obj: toUnstructured(t, cron, "batch/v1", "CronJob"), want: tmplKeys},
		{name: "tombstone of unstructured", obj: tombstone(toUnstructured(t, pod, "v1", "Pod")), want: podKeys},
		{name: "unstructured custom resource", obj: cr, want: nil},
		{name: "unstructured pod without spec", obj: malformed(nil), want: nil},
		{name: "unstructured pod with a string spec", obj: malformed("x"), want: nil},
		{name: "unstructured pod with malformed volumes", obj: malformed(map[string]any{"volumes": int64(3)}), want: nil},
		{name: "partial metadata", obj: partial(pod, "v1", "Pod"), want: nil},
		{name: "tombstone of partial metadata", obj: tombstone(partial(pod, "v1", "Pod")), want: nil},
		{name: "service", obj: &corev1.Service{ObjectMeta: meta}, wantErr: "uses index: expected an object with a pod spec, got *v1.Service"},
		{name: "tombstone of a service", obj: tombstone(&corev1.Service{ObjectMeta: meta}), wantErr: "got *v1.Service"},
		{name: "nil deployment", obj: (*appsv1.Deployment)(nil), wantErr: "got nil *v1.Deployment"},
	}
	runIndexCases(t, UsesIndexFunc, append(cases, wrongTypes(UsesIndex)...))
}

func TestUsesStore(t *testing.T) {
	s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{UsesIndex: UsesIndexFunc})
	web1 := newPod("shop", "web-1", func(p *corev1.Pod) {
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PASS", ValueFrom: secretKey("db", nil)}}
		p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{configMapEnvFrom("cfg", nil)}
	})
	web2 := newPod("shop", "web-2", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db"}})}
	})
	// The same Secret name in another namespace is another Secret.
	other := newPod("other", "db-client", func(p *corev1.Pod) {
		p.Spec.ServiceAccountName = "client"
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "db"}}
	})
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			ServiceAccountName: "web",
			Volumes: []corev1.Volume{vol("config", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
			}})},
		}}},
	}
	// Keyless: a controller without a template and a metadata-only pod.
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "legacy"}}
	meta := partial(newPod("shop", "meta-only"), "v1", "Pod")
	objs := []any{web1, web2, other, deploy, rc, meta}
	unchanged := addAll(t, s, objs)

	t.Run("after add", func(t *testing.T) {
		assertGroups(t, s, UsesIndex, map[string][]string{
			"Secret/shop/db":              {"shop/web-1", "shop/web-2"},
			"Secret/other/db":             {"other/db-client"},
			"ConfigMap/shop/cfg":          {"shop/web", "shop/web-1"},
			"ServiceAccount/shop/default": {"shop/web-1", "shop/web-2"},
			"ServiceAccount/shop/web":     {"shop/web"},
			"ServiceAccount/other/client": {"other/db-client"},
		}, []string{"shop/legacy", "shop/meta-only"})
	})

	t.Run("update", func(t *testing.T) {
		// New objects, as an informer stores them: cached ones stay untouched.
		moved := web2.DeepCopy()
		moved.Spec.Volumes[0].Secret.SecretName = "db-v2"
		templated := rc.DeepCopy()
		templated.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: "legacy"}}
		for _, o := range []any{moved, templated} {
			if err := s.Update(o); err != nil {
				t.Fatal(err)
			}
		}
		if got := byIndex(t, s, UsesIndex, UsesKey(RefSecret, "shop", "db")); !cmp.Equal(got, []string{"shop/web-1"}) {
			t.Errorf("ByIndex(uses, Secret/shop/db) = %q", got)
		}
		if got := byIndex(t, s, UsesIndex, UsesKey(RefSecret, "shop", "db-v2")); !cmp.Equal(got, []string{"shop/web-2"}) {
			t.Errorf("ByIndex(uses, Secret/shop/db-v2) = %q", got)
		}
		if got := byIndex(t, s, UsesIndex, UsesKey(RefServiceAccount, "shop", "legacy")); !cmp.Equal(got, []string{"shop/legacy"}) {
			t.Errorf("ByIndex(uses, ServiceAccount/shop/legacy) = %q", got)
		}
	})

	t.Run("delete", func(t *testing.T) {
		for _, o := range []any{web1, deploy} {
			if err := s.Delete(o); err != nil {
				t.Fatal(err)
			}
		}
		for _, key := range []string{UsesKey(RefSecret, "shop", "db"), UsesKey(RefConfigMap, "shop", "cfg")} {
			if got := byIndex(t, s, UsesIndex, key); len(got) != 0 {
				t.Errorf("ByIndex(uses, %s) after delete = %q", key, got)
			}
		}
		if got := byIndex(t, s, UsesIndex, UsesKey(RefSecret, "other", "db")); !cmp.Equal(got, []string{"other/db-client"}) {
			t.Errorf("ByIndex(uses, Secret/other/db) = %q", got)
		}
	})

	unchanged()
}

// FuzzUsesIndexFunc feeds arbitrary JSON, as unstructured objects of the
// kinds with a pod spec, through UsesIndexFunc: it must not fail, panic (a
// store would), modify the object, or produce an empty name.
func FuzzUsesIndexFunc(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"p","namespace":"default"},"spec":{"serviceAccountName":"web","volumes":[{"name":"v","secret":{"secretName":"db"}}],
		  "containers":[{"name":"app","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"db","key":"k","optional":true}}}]}]}}`,
		`{"spec":{"template":{"spec":{"volumes":[{"name":"v","ephemeral":{}},{"name":"w","csi":{"nodePublishSecretRef":{"name":"c"}}}]}}}}`,
		`{"spec":{"volumes":"x","containers":[null,1,{"envFrom":[{"secretRef":{"name":7}}]}]}}`,
		`{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"imagePullSecrets":[{"name":""},{}]}}}}}}`,
		`{"template":{"spec":[]}}`,
		`{"spec":null}`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	kinds := []struct{ apiVersion, kind string }{
		{"v1", "Pod"}, {"v1", "PodTemplate"}, {"v1", "ReplicationController"}, {"apps/v1", "Deployment"},
		{"batch/v1", "Job"}, {"batch/v1", "CronJob"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			return
		}
		for _, k := range kinds {
			obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(m)}
			obj.SetAPIVersion(k.apiVersion)
			obj.SetKind(k.kind)
			before := runtime.DeepCopyJSON(obj.Object)
			keys, err := UsesIndexFunc(obj)
			if err != nil {
				t.Fatalf("%s: %v", k.kind, err)
			}
			for _, key := range keys {
				if len(key) == 0 || key[len(key)-1] == '/' {
					t.Errorf("%s: key %q names nothing", k.kind, key)
				}
			}
			assertUnchanged(t, before, obj.Object)
		}
	})
}

// BenchmarkUsesIndexFunc measures one call per op on a pod using a Secret
// four ways, a ConfigMap and an ephemeral claim: the work a store does on
// every pod update.
func BenchmarkUsesIndexFunc(b *testing.B) {
	pods := make([]any, 100)
	unstructuredPods := make([]any, len(pods))
	for i := range pods {
		p := newPod("shop", fmt.Sprintf("web-%d", i), func(p *corev1.Pod) { p.Spec = usingSecret("web") })
		p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Env: []corev1.EnvVar{{Name: "PASS", ValueFrom: secretKey("db", nil)}}}}
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
		pods[i] = p
		unstructuredPods[i] = toUnstructured(b, p, "v1", "Pod")
	}
	for _, bc := range []struct {
		name string
		objs []any
	}{{"typed", pods}, {"unstructured", unstructuredPods}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := UsesIndexFunc(bc.objs[i%len(bc.objs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	b.Run("SpecReferences", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p := pods[i%len(pods)].(*corev1.Pod)
			SpecReferences(&p.Spec, p.Name)
			i++
		}
	})
}
