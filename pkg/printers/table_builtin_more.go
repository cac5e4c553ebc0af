package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// More built-in kinds, following the same v1.34 server-side printers as table_builtin.go.

// serviceAccountColumns count the legacy token secrets, usually 0 since 1.24.
var serviceAccountColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Secrets", Type: "string", Description: corev1.ServiceAccount{}.SwaggerDoc()["secrets"]},
	ageColumn,
}

// serviceAccountCells counts the secrets the account lists.
func serviceAccountCells(sa *corev1.ServiceAccount, now time.Time) []any {
	return []any{sa.Name, int64(len(sa.Secrets)), ageSince(sa.CreationTimestamp, now)}
}

// replicationControllerColumns match the ReplicaSet ones, with a map selector.
var replicationControllerColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
}

// replicationControllerCells tolerates a nil template: it is a pointer in the v1 API.
func replicationControllerCells(rc *corev1.ReplicationController, now time.Time) []any {
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []any{
		rc.Name, int64(replicas(rc.Spec.Replicas)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
		ageSince(rc.CreationTimestamp, now),
		names, images, labels.FormatLabels(rc.Spec.Selector),
	}
}

// betaStorageClassAnnotation predates spec.storageClassName and still wins over it.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// pvcColumns include VOLUMEATTRIBUTESCLASS as a normal column, shown even when unset.
var pvcColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
	{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
	{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
	{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
	ageColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
}

// pvcCells shows Terminating while a claim waits on its protection finalizer.
func pvcCells(pvc *corev1.PersistentVolumeClaim, now time.Time) []any {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	// Capacity and modes are the bound volume's, so they stay empty until the claim is bound.
	capacity, accessModes := "", ""
	if pvc.Spec.VolumeName != "" {
		accessModes = accessModesString(pvc.Status.AccessModes)
		size := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = size.String()
	}
	class, ok := pvc.Annotations[betaStorageClassAnnotation]
	if !ok && pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	return []any{
		pvc.Name, phase, pvc.Spec.VolumeName, capacity, accessModes, class,
		derefOr(pvc.Spec.VolumeAttributesClassName, "<unset>"), ageSince(pvc.CreationTimestamp, now),
		volumeModeString(pvc.Spec.VolumeMode),
	}
}

// pvColumns: CLAIM is namespace/name since volumes are cluster-scoped.
var pvColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
	{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
	{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
	{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
	{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
	{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
	ageColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
}

// pvCells prints the storage capacity only; other resources never appear.
func pvCells(pv *corev1.PersistentVolume, now time.Time) []any {
	claim := ""
	if pv.Spec.ClaimRef != nil {
		claim = pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	class, ok := pv.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = pv.Spec.StorageClassName
	}
	return []any{
		pv.Name, size.String(), accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, derefOr(pv.Spec.VolumeAttributesClassName, "<unset>"), pv.Status.Reason,
		ageSince(pv.CreationTimestamp, now), volumeModeString(pv.Spec.VolumeMode),
	}
}

// accessModesString abbreviates access modes in kubectl's fixed order, whatever the spec's order.
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

// volumeModeString renders an optional volume mode.
func volumeModeString(mode *corev1.PersistentVolumeMode) string {
	if mode == nil {
		return "<unset>"
	}
	return string(*mode)
}

// storageClassColumns: the defaults the server applies show when the fields are unset.
var storageClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
	{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
	{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
	{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
	ageColumn,
}

// storageClassCells marks the default class in the name, where users look for it.
func storageClassCells(sc *storagev1.StorageClass, now time.Time) []any {
	name := sc.Name
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
		name += " (default)"
	}
	reclaimPolicy := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaimPolicy = string(*sc.ReclaimPolicy)
	}
	bindingMode := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		bindingMode = string(*sc.VolumeBindingMode)
	}
	// A bool cell, which the TablePrinter prints as true or false.
	expansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
	return []any{name, sc.Provisioner, reclaimPolicy, bindingMode, expansion, ageSince(sc.CreationTimestamp, now)}
}

// networkPolicyColumns: which pods the policy applies to, as selects and
// selected-by need to show it.
var networkPolicyColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
	ageColumn,
}

// networkPolicyCells prints the pod selector as kubectl does; an empty one,
// which selects every pod of the namespace, as <none>.
func networkPolicyCells(np *networkingv1.NetworkPolicy, now time.Time) []any {
	return []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), ageSince(np.CreationTimestamp, now)}
}

// ingressColumns: PORTS reflects TLS only, not the backends.
var ingressColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
	{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
	{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
	{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
	ageColumn,
}

// ingressCells prints hosts, load balancer addresses and the ports TLS opens.
func ingressCells(ing *networkingv1.Ingress, now time.Time) []any {
	// At most three hosts. kubectl then counts every rule past the third, hosts or not,
	// which this keeps for identical output.
	var hosts []string
	more := false
	for _, rule := range ing.Spec.Rules {
		if len(hosts) == 3 {
			more = true
			break
		}
		if rule.Host != "" {
			hosts = append(hosts, rule.Host)
		}
	}
	hostsCell := "*"
	if len(hosts) > 0 {
		hostsCell = strings.Join(hosts, ",")
	}
	if more {
		hostsCell = fmt.Sprintf("%s + %d more...", hostsCell, len(ing.Spec.Rules)-3)
	}
	// Wide on the server, so addresses are not clipped, as for services.
	addresses := sets.New[string]()
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		if lb.IP != "" {
			addresses.Insert(lb.IP)
		} else if lb.Hostname != "" {
			addresses.Insert(lb.Hostname)
		}
	}
	ports := "80"
	if len(ing.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	return []any{
		ing.Name, derefOr(ing.Spec.IngressClassName, "<none>"), hostsCell,
		strings.Join(sets.List(addresses), ","), ports, ageSince(ing.CreationTimestamp, now),
	}
}

// ingressClassColumns name the controller and its parameters.
var ingressClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
	{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
	ageColumn,
}

// ingressClassCells prints parameters as Kind[.group]/name.
func ingressClassCells(ic *networkingv1.IngressClass, now time.Time) []any {
	parameters := "<none>"
	if p := ic.Spec.Parameters; p != nil {
		parameters = p.Kind
		if p.APIGroup != nil {
			parameters += "." + *p.APIGroup
		}
		parameters += "/" + p.Name
	}
	return []any{ic.Name, ic.Spec.Controller, parameters, ageSince(ic.CreationTimestamp, now)}
}

// pdbColumns: one of the two limits is always N/A.
var pdbColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
	{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
	{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
	ageColumn,
}

// pdbCells prints the limits as given, integers or percentages.
func pdbCells(pdb *policyv1.PodDisruptionBudget, now time.Time) []any {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), ageSince(pdb.CreationTimestamp, now)}
}

// bindingColumns are the role binding columns; only the wide descriptions name the kind.
func bindingColumns(roleRefDoc, kind string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Role", Type: "string", Description: roleRefDoc},
		ageColumn,
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
	}
}

var (
	roleBindingColumns        = bindingColumns(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding")
	clusterRoleBindingColumns = bindingColumns(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding")
)

// roleBindingCells and clusterRoleBindingCells share bindingCells: the types differ only in scope.
func roleBindingCells(rb *rbacv1.RoleBinding, now time.Time) []any {
	return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, rb.CreationTimestamp, now)
}

func clusterRoleBindingCells(crb *rbacv1.ClusterRoleBinding, now time.Time) []any {
	return bindingCells(crb.Name, crb.RoleRef, crb.Subjects, crb.CreationTimestamp, now)
}

// bindingCells splits subjects by kind; subjects of other kinds are not shown, as in kubectl.
func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []any {
	var users, groups, serviceAccounts []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			serviceAccounts = append(serviceAccounts, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []any{
		name, ref.Kind + "/" + ref.Name, ageSince(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(serviceAccounts, ", "),
	}
}

// derefOr returns *s, or def when s is nil.
func derefOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
