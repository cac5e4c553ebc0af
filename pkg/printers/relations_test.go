package printers_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/shapes"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// relItem is an object of a relation list created age before treeNow.
func relItem(apiVersion, kind, namespace, name string, age time.Duration) v1alpha1.RelationItem {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	obj := &metav1.ObjectMeta{
		Namespace: namespace, Name: name, UID: types.UID("uid-" + strings.ToLower(kind) + "-" + name),
		CreationTimestamp: metav1.NewTime(treeNow.Add(-age)),
	}
	return v1alpha1.RelationItemFor(gvk, obj)
}

func relOwner(apiVersion, kind, namespace, name string) v1alpha1.OwnerReference {
	return v1alpha1.OwnerReference{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name, UID: types.UID("uid-" + strings.ToLower(kind) + "-" + name)}
}

// orphanDoc is what `kubectl idx orphans -A` prints: a missing cluster-scoped
// owner, several owners gone at once, an owner being deleted with
// --cascade=orphan, and kinds outside and inside the groups shown bare.
func orphanDoc() *v1alpha1.RelationList {
	static := relItem("v1", "Pod", "kube-system", "kube-proxy-worker-9", 90*24*time.Hour)
	static.MissingOwners = []v1alpha1.OwnerReference{relOwner("v1", "Node", "", "worker-9")}
	multi := relItem("v1", "Pod", "shop", "multi", 3*time.Hour)
	multi.MissingOwners = []v1alpha1.OwnerReference{relOwner("v1", "ConfigMap", "shop", "gone-cm"), relOwner("apps/v1", "ReplicaSet", "shop", "gone")}
	multi.OrphaningOwners = []v1alpha1.OwnerReference{relOwner("apps/v1", "Deployment", "shop", "leaving")}
	leaving := relItem("apps/v1", "ReplicaSet", "shop", "leaving-6b8", 10*24*time.Hour)
	leaving.OrphaningOwners = []v1alpha1.OwnerReference{relOwner("apps/v1", "Deployment", "shop", "leaving")}
	job := relItem("batch/v1", "Job", "ops", "backup-2900", 26*time.Hour)
	job.MissingOwners = []v1alpha1.OwnerReference{relOwner("batch/v1", "CronJob", "ops", "backup")}
	cert := relItem("cert-manager.io/v1", "Certificate", "shop", "web-tls", 40*24*time.Hour)
	cert.MissingOwners = []v1alpha1.OwnerReference{relOwner("networking.k8s.io/v1", "Ingress", "shop", "web")}
	return &v1alpha1.RelationList{
		TypeMeta:   v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.OrphanListKind},
		Items:      []v1alpha1.RelationItem{static, multi, leaving, job, cert},
		AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{"references to owners of kind Widget.widgets.example.com were not checked: the kind cannot be listed"}},
	}
}

// usesDoc is what `kubectl idx uses` prints in either direction.
func usesDoc(direction string) *v1alpha1.RelationList {
	doc := &v1alpha1.RelationList{TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.UsesListKind}, Direction: direction}
	switch direction {
	case "users":
		// What uses Secret db-creds.
		subject := relItem("v1", "Secret", "shop", "db-creds", 30*24*time.Hour)
		doc.Subject = &subject
		api := relItem("v1", "Pod", "shop", "api-0", time.Hour)
		api.Via = []string{"env app/DB_PASSWORD", "volume creds"}
		deploy := relItem("apps/v1", "Deployment", "shop", "api", 30*24*time.Hour)
		deploy.Via = []string{"env app/DB_PASSWORD", "volume creds"}
		cron := relItem("batch/v1", "CronJob", "ops", "db-backup", 7*24*time.Hour)
		cron.Via, cron.Optional = []string{"envFrom backup"}, true
		doc.Items = []v1alpha1.RelationItem{deploy, cron, api}
	case "uses":
		// What pod api-0 uses, and whether each exists.
		subject := relItem("v1", "Pod", "shop", "api-0", time.Hour)
		doc.Subject = &subject
		cm := v1alpha1.RelationItem{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "api-config", Via: []string{"volume config"}, Exists: ptr.To(true)}
		secret := v1alpha1.RelationItem{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "db-creds", Via: []string{"env app/DB_PASSWORD", "volume creds"}, Exists: ptr.To(false)}
		flags := v1alpha1.RelationItem{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "flags", Via: []string{"envFrom app"}, Optional: true, Exists: ptr.To(false)}
		pvc := v1alpha1.RelationItem{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "shop", Name: "data-api-0", Via: []string{"volume data"}, Exists: ptr.To(true)}
		// A type the user may not list: existence unknown.
		sa := v1alpha1.RelationItem{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "shop", Name: "api", Via: []string{"serviceAccountName"}}
		doc.Items = []v1alpha1.RelationItem{cm, flags, pvc, secret, sa}
		doc.Warnings = []string{"cannot list serviceaccounts: forbidden"}
	}
	return doc
}

// printRelations prints doc as printTree does, checking the document is left
// as it was.
func printRelations(t *testing.T, doc *v1alpha1.RelationList, format, template string, noHeaders bool) string {
	t.Helper()
	return printDocument(t, "PrintRelationList", printers.PrintRelationList, doc, format, template, noHeaders)
}

func TestPrintRelationListHuman(t *testing.T) {
	tests := []humanCase[*v1alpha1.RelationList]{
		{"orphans", orphanDoc(), "", false, "testdata/orphans.golden", []string{"NAMESPACE", "KIND", "NAME", "OWNER", "REASON", "AGE"}},
		{"orphans no headers", orphanDoc(), "", true, "testdata/orphans_no_headers.golden", nil},
		{"users", usesDoc("users"), "", false, "testdata/uses_users.golden", []string{"NAMESPACE", "KIND", "NAME", "VIA"}},
		{"uses", usesDoc("uses"), "", false, "testdata/uses_uses.golden", []string{"NAMESPACE", "KIND", "NAME", "VIA", "EXISTS"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := printRelations(t, tc.doc, tc.format, "", tc.noHeaders)
			golden.Assert(t, tc.golden, out)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if tc.header != nil {
				if got := strings.Fields(lines[0]); !reflect.DeepEqual(got, tc.header) {
					t.Errorf("header = %q, want %q", got, tc.header)
				}
				lines = lines[1:]
			}
			if len(lines) != len(tc.doc.Items) {
				t.Errorf("%d rows, want %d", len(lines), len(tc.doc.Items))
			}
			if strings.Contains(out, "warning") || strings.Contains(out, "forbidden") {
				t.Error("warnings printed with the table")
			}
			// -o wide has no more columns to show.
			if wide := printRelations(t, tc.doc, "wide", "", tc.noHeaders); wide != out {
				t.Errorf("-o wide differs:\n%s", wide)
			}
		})
	}
}

// relationCells returns each row's cells split on runs of two or more spaces,
// which no cell of these fixtures contains.
func relationCells(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
		var cells []string
		for _, c := range strings.Split(line, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				cells = append(cells, c)
			}
		}
		rows = append(rows, cells)
	}
	return rows
}

func TestPrintRelationListColumns(t *testing.T) {
	t.Run("orphans", func(t *testing.T) {
		got := relationCells(printRelations(t, orphanDoc(), "", "", false))
		want := [][]string{
			{"kube-system", "Pod", "kube-proxy-worker-9", "Node/worker-9", "OwnerNotFound", "90d"},
			// Missing owners first, then orphaning ones; one missing owner
			// is enough to be OwnerNotFound.
			{"shop", "Pod", "multi", "ConfigMap/gone-cm,ReplicaSet/gone,Deployment/leaving", "OwnerNotFound", "3h"},
			{"shop", "ReplicaSet", "leaving-6b8", "Deployment/leaving", "OwnerOrphaning", "10d"},
			{"ops", "Job", "backup-2900", "CronJob/backup", "OwnerNotFound", "26h"},
			// Kinds outside core, apps and batch are qualified.
			{"shop", "Certificate.cert-manager.io", "web-tls", "Ingress/web", "OwnerNotFound", "40d"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rows:\n got  %q\n want %q", got, want)
		}
	})
	t.Run("uses", func(t *testing.T) {
		got := relationCells(printRelations(t, usesDoc("uses"), "", "", false))
		want := [][]string{
			{"shop", "ConfigMap", "api-config", "volume config", "true"},
			{"shop", "ConfigMap", "flags", "envFrom app", "false"},
			{"shop", "PersistentVolumeClaim", "data-api-0", "volume data", "true"},
			{"shop", "Secret", "db-creds", "env app/DB_PASSWORD, volume creds", "false"},
			{"shop", "ServiceAccount", "api", "serviceAccountName", "<unknown>"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rows:\n got  %q\n want %q", got, want)
		}
	})
	t.Run("users", func(t *testing.T) {
		got := relationCells(printRelations(t, usesDoc("users"), "", "", false))
		want := [][]string{
			{"shop", "Deployment", "api", "env app/DB_PASSWORD, volume creds"},
			{"ops", "CronJob", "db-backup", "envFrom backup"},
			{"shop", "Pod", "api-0", "env app/DB_PASSWORD, volume creds"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rows:\n got  %q\n want %q", got, want)
		}
	})
}

// TestPrintRelationListEmpty checks that an empty answer prints no table (the
// command says "No resources found" on stderr) but a complete document.
func TestPrintRelationListEmpty(t *testing.T) {
	for _, doc := range []*v1alpha1.RelationList{
		{TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.OrphanListKind}, Items: []v1alpha1.RelationItem{}},
		{TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.OrphanListKind}},
		{TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.UsesListKind}, Direction: "uses"},
	} {
		for _, format := range []string{"", "wide", "name"} {
			for _, noHeaders := range []bool{false, true} {
				if out := printRelations(t, doc, format, "", noHeaders); out != "" {
					t.Errorf("%s -o %q --no-headers=%v printed %q", doc.Kind, format, noHeaders, out)
				}
			}
		}
		// Items and warnings are arrays, never null, however the document
		// was built.
		_, raw := decodeRelations(t, printRelations(t, doc, "json", "", false))
		for _, k := range []string{"items", "warnings"} {
			if v, ok := raw[k].([]any); !ok || len(v) != 0 {
				t.Errorf("%s %s = %#v, want []", doc.Kind, k, raw[k])
			}
		}
		if out := printRelations(t, doc, "yaml", "", false); !strings.Contains(out, "items: []\n") || !strings.Contains(out, "warnings: []\n") {
			t.Errorf("%s -o yaml:\n%s", doc.Kind, out)
		}
	}
}

func TestPrintRelationListNames(t *testing.T) {
	tests := []struct {
		name string
		doc  *v1alpha1.RelationList
		want []string
	}{
		{"orphans", orphanDoc(), []string{
			"pod/kube-proxy-worker-9",
			"pod/multi",
			"replicaset.apps/leaving-6b8",
			"job.batch/backup-2900",
			"certificate.cert-manager.io/web-tls",
		}},
		{"users", usesDoc("users"), []string{"deployment.apps/api", "cronjob.batch/db-backup", "pod/api-0"}},
		// What does not exist is named too: the names are of the references.
		{"uses", usesDoc("uses"), []string{
			"configmap/api-config", "configmap/flags", "persistentvolumeclaim/data-api-0", "secret/db-creds", "serviceaccount/api",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := printRelations(t, tc.doc, "name", "", false), strings.Join(tc.want, "\n")+"\n"; got != want {
				t.Errorf("-o name:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func decodeRelations(t *testing.T, out string) (shapes.RelationList, map[string]any) {
	t.Helper()
	return decodeDocument[shapes.RelationList](t, out)
}

func TestPrintRelationListJSON(t *testing.T) {
	t.Run("orphans", func(t *testing.T) {
		out := printRelations(t, orphanDoc(), "json", "", false)
		golden.Assert(t, "testdata/orphans_json.golden", out)
		doc, raw := decodeRelations(t, out)
		if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "OrphanList" || doc.Subject != nil || doc.Direction != "" {
			t.Errorf("document = %+v", doc)
		}
		if _, ok := raw["subject"]; ok {
			t.Error("orphans have a subject")
		}
		if len(doc.Items) != 5 || len(doc.Warnings) != 1 {
			t.Fatalf("%d items, %d warnings", len(doc.Items), len(doc.Warnings))
		}
		// A cluster-scoped owner has no namespace key at all.
		node := raw["items"].([]any)[0].(map[string]any)["missingOwners"].([]any)[0].(map[string]any)
		if _, ok := node["namespace"]; ok || node["kind"] != "Node" || node["uid"] != "uid-node-worker-9" {
			t.Errorf("missing Node owner = %v", node)
		}
		multi := doc.Items[1]
		if len(multi.MissingOwners) != 2 || len(multi.OrphaningOwners) != 1 || multi.OrphaningOwners[0].Name != "leaving" {
			t.Errorf("pod multi = %+v", multi)
		}
		if multi.CreationTimestamp != "2025-06-01T09:00:00Z" || multi.UID != "uid-pod-multi" {
			t.Errorf("pod multi metadata = %+v", multi)
		}
	})
	t.Run("uses", func(t *testing.T) {
		out := printRelations(t, usesDoc("uses"), "json", "", false)
		golden.Assert(t, "testdata/uses_json.golden", out)
		doc, raw := decodeRelations(t, out)
		if doc.Kind != "UsesList" || doc.Direction != "uses" || doc.Subject == nil || doc.Subject.Name != "api-0" {
			t.Errorf("document = %+v", doc)
		}
		// exists: true, false, or absent when it could not be checked.
		var exists []any
		for _, it := range raw["items"].([]any) {
			v, ok := it.(map[string]any)["exists"]
			if !ok {
				v = "absent"
			}
			exists = append(exists, v)
		}
		if want := []any{true, false, true, false, "absent"}; !reflect.DeepEqual(exists, want) {
			t.Errorf("exists = %v, want %v", exists, want)
		}
		if !doc.Items[1].Optional || doc.Items[0].Optional {
			t.Errorf("optional = %v, %v", doc.Items[0].Optional, doc.Items[1].Optional)
		}
	})
	t.Run("users", func(t *testing.T) {
		doc, raw := decodeRelations(t, printRelations(t, usesDoc("users"), "json", "", false))
		if doc.Direction != "users" || len(doc.Items) != 3 {
			t.Errorf("document = %+v", doc)
		}
		// Who uses an object is not checked for existence: it was listed.
		for _, it := range raw["items"].([]any) {
			if _, ok := it.(map[string]any)["exists"]; ok {
				t.Errorf("user %v has exists", it)
			}
		}
		if w, ok := raw["warnings"].([]any); !ok || len(w) != 0 {
			t.Errorf("warnings = %#v, want []", raw["warnings"])
		}
	})
}

func TestPrintRelationListDelegateFormats(t *testing.T) {
	t.Run("yaml", func(t *testing.T) {
		out := printRelations(t, orphanDoc(), "yaml", "", false)
		golden.Assert(t, "testdata/orphans_yaml.golden", out)
		assertSameDocument(t, out, printRelations(t, orphanDoc(), "json", "", false))
	})

	runFormatCases(t, printRelations, []formatCase[*v1alpha1.RelationList]{
		{"jsonpath names", "jsonpath", "{.items[*].name}", orphanDoc(), "kube-proxy-worker-9 multi leaving-6b8 backup-2900 web-tls"},
		{"jsonpath orphaning", "jsonpath", "{.items[?(@.orphaningOwners)].name}", orphanDoc(), "multi leaving-6b8"},
		{"jsonpath missing owners", "jsonpath", "{.items[1].missingOwners[*].kind}", orphanDoc(), "ConfigMap ReplicaSet"},
		{"jsonpath subject", "jsonpath", "{.direction} {.subject.kind}/{.subject.name}", usesDoc("users"), "users Secret/db-creds"},
		{"jsonpath missing uses", "jsonpath", "{.items[?(@.exists==false)].name}", usesDoc("uses"), "flags db-creds"},
		{"jsonpath empty", "jsonpath", "{.items[*].name}", &v1alpha1.RelationList{TypeMeta: v1alpha1.TypeMeta{Kind: v1alpha1.OrphanListKind}}, ""},
		{"go-template", "go-template", "{{range .items}}{{.kind}}/{{.name}} {{end}}", usesDoc("users"), "Deployment/api CronJob/db-backup Pod/api-0 "},
	})
}

// TestPrintRelationListCustomColumns: custom-columns prints a row per item,
// as kubectl get does for a list, not one row for the document.
func TestPrintRelationListCustomColumns(t *testing.T) {
	got := printRelations(t, usesDoc("users"), "custom-columns", "KIND:.kind,NAME:.name,VIA:.via[0]", false)
	want := "KIND         NAME        VIA\n" +
		"Deployment   api         env app/DB_PASSWORD\n" +
		"CronJob      db-backup   envFrom backup\n" +
		"Pod          api-0       env app/DB_PASSWORD\n"
	if got != want {
		t.Errorf("-o custom-columns:\n%s\nwant\n%s", got, want)
	}
	empty := printRelations(t, &v1alpha1.RelationList{TypeMeta: v1alpha1.TypeMeta{Kind: v1alpha1.OrphanListKind}, Items: []v1alpha1.RelationItem{}}, "custom-columns", "NAME:.name", false)
	if empty != "NAME\n" {
		t.Errorf("-o custom-columns of no items: %q, want the header alone", empty)
	}
}

func TestRelationItemFor(t *testing.T) {
	created := metav1.NewTime(treeNow.Add(-time.Hour))
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-tls", UID: "c-uid", CreationTimestamp: created}}
	got := v1alpha1.RelationItemFor(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}, obj)
	want := v1alpha1.RelationItem{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Namespace: "shop", Name: "web-tls", UID: "c-uid", CreationTimestamp: &created}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RelationItemFor() = %+v, want %+v", got, want)
	}
	if got.CreationTimestamp == &obj.CreationTimestamp {
		t.Error("RelationItemFor points into the cached object")
	}
	// No timestamp, no creationTimestamp.
	got = v1alpha1.RelationItemFor(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, &metav1.ObjectMeta{Name: "worker-1"})
	if got.CreationTimestamp != nil || got.APIVersion != "v1" || got.Namespace != "" {
		t.Errorf("RelationItemFor(node) = %+v", got)
	}
}
