package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// decode is a JSON document as decoded JSON, numbers as int64 where whole
// (as runtime.DefaultUnstructuredConverter gives them).
func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return ints(m).(map[string]any)
}

func ints(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = ints(e)
		}
	case []any:
		for i, e := range t {
			t[i] = ints(e)
		}
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
	}
	return v
}

var schemaDeployment = appsv1.SchemeGroupVersion.WithKind("Deployment")

func TestPathString(t *testing.T) {
	p := Path{}.Field("spec").Field("template").Field("spec").Field("containers").Key("name", "web").Field("ports").Key("containerPort", int64(8080)).Field("protocol")
	if got, want := p.String(), `.spec.template.spec.containers[?(@.name=="web")].ports[?(@.containerPort==8080)].protocol`; got != want {
		t.Errorf("String %s, want %s", got, want)
	}
	if got, want := p.Short(), `.spec.template.spec.containers[name=web].ports[containerPort=8080].protocol`; got != want {
		t.Errorf("Short %s, want %s", got, want)
	}
	q := Path{}.Field("metadata").Field("labels").Field("app.kubernetes.io/name")
	if got, want := q.String(), `.metadata.labels.app\.kubernetes\.io/name`; got != want {
		t.Errorf("String %s, want %s", got, want)
	}
	if got, want := q.Short(), `.metadata.labels["app.kubernetes.io/name"]`; got != want {
		t.Errorf("Short %s, want %s", got, want)
	}
	if got, want := (Path{}.Field("args").Index(2)).String(), `.args[2]`; got != want {
		t.Errorf("String %s, want %s", got, want)
	}
	if !p.HasPrefix(p[:4]) || p[:4].HasPrefix(p) || !p[:4].Overlaps(p) {
		t.Errorf("prefixes of %s", p)
	}
	other := Path{}.Field("spec").Field("template").Field("spec").Field("containers").Key("name", "sidecar")
	if p.Overlaps(other) {
		t.Errorf("%s overlaps %s", p, other)
	}

	// The JSONPath reads the field with kubectl's JSONPath.
	obj := decode(t, `{spec: {template: {spec: {containers: [{name: side, ports: [{containerPort: 8080, protocol: UDP}]}, {name: web, ports: [{containerPort: 9090, protocol: TCP}, {containerPort: 8080, protocol: SCTP}]}]}}}, metadata: {labels: {app.kubernetes.io/name: shop}}}`)
	for _, tc := range []struct {
		p    Path
		want string
	}{{p, "SCTP"}, {q, "shop"}} {
		jp := jsonpath.New("p")
		if err := jp.Parse("{" + tc.p.String() + "}"); err != nil {
			t.Fatalf("%s: %v", tc.p, err)
		}
		var b strings.Builder
		if err := jp.Execute(&b, obj); err != nil {
			t.Fatalf("%s: %v", tc.p, err)
		}
		if b.String() != tc.want {
			t.Errorf("kubectl JSONPath %s reads %q, want %q", tc.p, b.String(), tc.want)
		}
		if v, ok := Lookup(obj, tc.p); !ok || v != tc.want {
			t.Errorf("Lookup %s: %v %v", tc.p, v, ok)
		}
	}
}

// changes renders changes as "PATH: OLD -> NEW", - for a side that is absent.
func changes(cs []Change) []string {
	out := []string{}
	for _, c := range cs {
		side := func(has bool, v any) string {
			if !has {
				return "-"
			}
			b, _ := json.Marshal(v)
			return string(b)
		}
		out = append(out, c.Path.String()+": "+side(c.HasOld, c.Old)+" -> "+side(c.HasNew, c.New))
	}
	return out
}

// TestDiffPodTemplate: lists with a merge key are compared entry by entry:
// an env entry inserted first, a port added, a container's image changed
// and a volume mount removed are one change each, named by their keys;
// lists without one (args) are one value.
func TestDiffPodTemplate(t *testing.T) {
	a := decode(t, `
metadata: {labels: {app: web, pod-template-hash: aaa}}
spec:
  containers:
  - name: web
    image: pause:3.10
    args: [--a, --b]
    env:
    - {name: LOG_LEVEL, value: info}
    - {name: MODE, value: x}
    volumeMounts:
    - {name: config, mountPath: /etc/web}
    - {name: cache, mountPath: /cache}
  - name: sidecar
    image: busybox:1
`)
	b := decode(t, `
metadata: {labels: {app: web, pod-template-hash: bbb}}
spec:
  containers:
  - name: sidecar
    image: busybox:1
  - name: web
    image: pause:3.9
    args: [--a, --c]
    env:
    - {name: FOO, value: "1"}
    - {name: LOG_LEVEL, value: info}
    - {name: MODE, value: "y"}
    ports:
    - {containerPort: 8080, protocol: TCP}
    volumeMounts:
    - {name: config, mountPath: /etc/web}
`)
	want := []string{
		`.metadata.labels.pod-template-hash: "aaa" -> "bbb"`,
		`.spec.containers[?(@.name=="web")].args: ["--a","--b"] -> ["--a","--c"]`,
		`.spec.containers[?(@.name=="web")].env[?(@.name=="FOO")]: - -> {"name":"FOO","value":"1"}`,
		`.spec.containers[?(@.name=="web")].env[?(@.name=="MODE")].value: "x" -> "y"`,
		`.spec.containers[?(@.name=="web")].image: "pause:3.10" -> "pause:3.9"`,
		`.spec.containers[?(@.name=="web")].ports: - -> [{"containerPort":8080,"protocol":"TCP"}]`,
		`.spec.containers[?(@.name=="web")].volumeMounts[?(@.mountPath=="/cache")]: {"mountPath":"/cache","name":"cache"} -> -`,
	}
	if diff := cmp.Diff(want, changes(Diff(a, b, PodTemplateKeys))); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}

	// Without keys, a list that differs is one value.
	if got := changes(Diff(a, b, nil)); len(got) != 2 || !strings.HasPrefix(got[1], ".spec.containers: ") {
		t.Errorf("without keys: %q", got)
	}
	// Entries that repeat a key are not keyed.
	dup := decode(t, `{spec: {containers: [{name: a, image: x}, {name: a, image: y}]}}`)
	dup2 := decode(t, `{spec: {containers: [{name: a, image: x}, {name: a, image: z}]}}`)
	if got := changes(Diff(dup, dup2, PodTemplateKeys)); len(got) != 1 || !strings.HasPrefix(got[0], ".spec.containers: ") {
		t.Errorf("repeated keys: %q", got)
	}
	if got := Diff(a, decode(t, mustJSON(t, a)), PodTemplateKeys); len(got) != 0 {
		t.Errorf("no change: %q", changes(got))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deployment is a Deployment as the server keeps it after four writers: kubectl apply
// (client-side) made it; kubectl set image changed the sidecar's image; a
// server-side apply manager of its own added env FOO, inserted before
// LOG_LEVEL, and port 8080/TCP; kubectl scale set the replicas.
const deployment = `
metadata:
  name: web
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: apps/v1
    time: "2026-03-01T10:00:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels:
          .: {}
          f:app: {}
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"web"}:
                .: {}
                f:args: {}
                f:env:
                  .: {}
                  k:{"name":"LOG_LEVEL"}:
                    .: {}
                    f:name: {}
                    f:value: {}
                f:image: {}
                f:name: {}
              k:{"name":"sidecar"}:
                .: {}
                f:name: {}
  - manager: kubectl-set
    operation: Update
    apiVersion: apps/v1
    time: "2026-03-01T10:05:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"sidecar"}:
                f:image: {}
  - manager: history-e2e
    operation: Apply
    apiVersion: apps/v1
    time: "2026-03-01T10:10:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"web"}:
                .: {}
                f:env:
                  k:{"name":"FOO"}:
                    .: {}
                    f:name: {}
                    f:value: {}
                f:name: {}
                f:ports:
                  k:{"containerPort":8080,"protocol":"TCP"}:
                    .: {}
                    f:containerPort: {}
                    f:protocol: {}
  - manager: kubectl
    operation: Update
    subresource: scale
    apiVersion: apps/v1
    time: "2026-03-01T10:15:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:replicas: {}
  labels: {app: web}
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}\n"}
spec:
  replicas: 4
  template:
    spec:
      containers:
      - name: web
        image: pause:3.10
        args: [--a, --b]
        env:
        - {name: FOO, value: "1"}
        - {name: LOG_LEVEL, value: info}
        ports:
        - {containerPort: 8080, protocol: TCP}
        - {containerPort: 8080, protocol: UDP}
      - name: sidecar
        image: busybox:2
`

// managersOf parses the managedFields of a decoded object.
func managersOf(t *testing.T, obj map[string]any) *Managers {
	t.Helper()
	var o metav1.ObjectMeta
	b, _ := json.Marshal(obj["metadata"])
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	m, err := ParseManagers(o.ManagedFields)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOwnersListEntries: list entries are attributed by their merge keys,
// never by index: env FOO, inserted at index 0 by the server-side apply
// manager, is that manager's, and LOG_LEVEL, now at index 1, still kubectl
// apply's, whether the path names them by key or by index; port 8080/TCP is
// found by containerPort alone (the patch merge key) or with the index of
// its entry, and 8080/UDP, which no one applied, has no owner; the key
// fields of an entry come with it; an atomic list (args) is owned whole.
func TestOwnersListEntries(t *testing.T) {
	obj := decode(t, deployment)
	delete(obj["metadata"].(map[string]any), "managedFields")
	m := managersOf(t, decode(t, deployment))
	web := Path{}.Field("spec").Field("template").Field("spec").Field("containers").Key("name", "web")
	webByIndex := Path{}.Field("spec").Field("template").Field("spec").Field("containers").Index(0)
	sidecar := Path{}.Field("spec").Field("template").Field("spec").Field("containers").Key("name", "sidecar")
	names := func(idx []int) []string {
		out := []string{}
		for _, i := range idx {
			out = append(out, m.Entries[i].Manager)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		p     Path
		exact bool
		want  []string
	}{
		{"env FOO by key", web.Field("env").Key("name", "FOO").Field("value"), true, []string{"history-e2e"}},
		{"env FOO by index", webByIndex.Field("env").Index(0).Field("value"), true, []string{"history-e2e"}},
		{"env LOG_LEVEL by index, after the entry inserted", webByIndex.Field("env").Index(1).Field("value"), true, []string{"kubectl-client-side-apply"}},
		{"env FOO's name, its key", web.Field("env").Key("name", "FOO").Field("name"), true, []string{"history-e2e"}},
		{"the env entry FOO", web.Field("env").Key("name", "FOO"), true, []string{"history-e2e"}},
		{"port 8080 by containerPort", web.Field("ports").Key("containerPort", int64(8080)), false, []string{"history-e2e"}},
		{"port 8080/TCP by index", web.Field("ports").Index(0).Field("protocol"), true, []string{"history-e2e"}},
		{"port 8080/UDP by index", web.Field("ports").Index(1).Field("protocol"), true, []string{}},
		{"the sidecar's image", sidecar.Field("image"), true, []string{"kubectl-set"}},
		{"the web container", web, true, []string{"kubectl-client-side-apply", "history-e2e"}},
		{"everything in the web container", web, false, []string{"kubectl-client-side-apply", "history-e2e"}},
		{"everything in the sidecar", sidecar, false, []string{"kubectl-client-side-apply", "kubectl-set"}},
		{"an element of an atomic list", web.Field("args").Index(1), true, []string{"kubectl-client-side-apply"}},
		{"replicas, through the scale subresource", Path{}.Field("spec").Field("replicas"), true, []string{"kubectl"}},
		{"the template, below", Path{}.Field("spec").Field("template"), false, []string{"kubectl-client-side-apply", "kubectl-set", "history-e2e"}},
		{"the template itself", Path{}.Field("spec").Field("template"), true, []string{}},
		{"a label", Path{}.Field("metadata").Field("labels").Field("app"), true, []string{"kubectl-client-side-apply"}},
		{"an entry gone, by key", web.Field("env").Key("name", "GONE"), false, []string{}},
	} {
		find := m.Owners
		if tc.exact {
			find = m.Exact
		}
		if diff := cmp.Diff(tc.want, names(find(obj, tc.p))); diff != "" {
			t.Errorf("%s (%s): (-want +got)\n%s", tc.name, tc.p, diff)
		}
	}

	// An entry removed from the object is still matched by its key in the
	// sets of those who owned it.
	gone := decode(t, deployment)
	delete(gone["metadata"].(map[string]any), "managedFields")
	c := gone["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["env"] = []any{}
	if got := names(m.Owners(gone, web.Field("env").Key("name", "FOO"))); !cmp.Equal(got, []string{"history-e2e"}) {
		t.Errorf("an entry no longer in the object: %q", got)
	}

	if _, err := ParseManagers([]metav1.ManagedFieldsEntry{{Manager: "bad", Operation: "Apply", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:a":`)}}}); err == nil || !strings.Contains(err.Error(), "manager bad (Apply)") {
		t.Errorf("bad fields: %v", err)
	}
}

func TestUncovered(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 3, 1, 10, m, 0, 0, time.UTC) }
	iv := func(a, b int) Interval { return Interval{From: at(a), To: at(b)} }
	for _, tc := range []struct {
		name    string
		covered []Interval
		want    []Interval
	}{
		{"nothing", nil, []Interval{iv(0, 60)}},
		{"everything", []Interval{iv(0, 60)}, nil},
		{"a stretch before", []Interval{iv(20, 70)}, []Interval{iv(0, 20)}},
		{"overlapping and holes", []Interval{iv(30, 40), iv(5, 10), iv(35, 50), iv(-10, 2)}, []Interval{iv(2, 5), iv(10, 30), iv(50, 60)}},
		{"outside", []Interval{iv(70, 80), iv(-20, -10)}, []Interval{iv(0, 60)}},
		{"empty intervals", []Interval{iv(10, 10)}, []Interval{iv(0, 60)}},
		{"less than a second", []Interval{{From: at(0).Add(500 * time.Millisecond), To: at(60)}}, nil},
	} {
		if diff := cmp.Diff(tc.want, Uncovered(at(0), at(60), tc.covered)); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, diff)
		}
	}
}

// TestYAMLLines: the lines are what kubectl -o yaml prints (sigs.k8s.io/yaml),
// block strings and quoting included, and each names the field it shows,
// list entries by their keys.
func TestYAMLLines(t *testing.T) {
	obj := decode(t, deployment)
	delete(obj["metadata"].(map[string]any), "managedFields")
	obj["metadata"].(map[string]any)["annotations"].(map[string]any)["note"] = "two\nlines"
	obj["spec"].(map[string]any)["strategy"] = map[string]any{}
	obj["spec"].(map[string]any)["paused"] = "true"
	obj["status"] = map[string]any{"conditions": []any{}, "nested": []any{[]any{"a", "b"}, int64(3)}}
	lines := YAMLLines(obj, KeysFor(schemaDeployment))
	var text []string
	for _, l := range lines {
		text = append(text, l.Text)
	}
	want, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.TrimSuffix(string(want), "\n"), strings.Join(text, "\n")); diff != "" {
		t.Errorf("YAML (-kubectl's +got):\n%s", diff)
	}
	shows := map[string]string{}
	for _, l := range lines {
		if _, ok := shows[strings.TrimSpace(l.Text)]; !ok {
			shows[strings.TrimSpace(l.Text)] = l.Path.String()
		}
	}
	for line, path := range map[string]string{
		"- containerPort: 8080": `.spec.template.spec.containers[?(@.name=="web")].ports[0].containerPort`,
		"- name: FOO":           `.spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="FOO")].name`,
		"- image: busybox:2":    `.spec.template.spec.containers[?(@.name=="sidecar")].image`,
		"- --b":                 `.spec.template.spec.containers[?(@.name=="web")].args[1]`,
		"lines":                 `.metadata.annotations.note`,
		"replicas: 4":           `.spec.replicas`,
		"- - a":                 `.status.nested[0][0]`,
		`paused: "true"`:        `.spec.paused`,
		"containers:":           `.spec.template.spec.containers`,
		"strategy: {}":          `.spec.strategy`,
		"- args:":               `.spec.template.spec.containers[?(@.name=="web")].args`,
		"conditions: []":        `.status.conditions`,
		"- 3":                   `.status.nested[1]`,
		"protocol: UDP":         `.spec.template.spec.containers[?(@.name=="web")].ports[1].protocol`,
		"note: |-":              `.metadata.annotations.note`,
		"name: web":             `.metadata.name`,
		"value: info":           `.spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="LOG_LEVEL")].value`,
		"image: pause:3.10":     `.spec.template.spec.containers[?(@.name=="web")].image`,
		"- name: LOG_LEVEL":     `.spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="LOG_LEVEL")].name`,
		"app: web":              `.metadata.labels.app`,
	} {
		if got, ok := shows[line]; !ok || got != path {
			t.Errorf("line %q shows %q, want %q", line, got, path)
		}
	}
}
