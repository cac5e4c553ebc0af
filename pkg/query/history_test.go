package query_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// historySession is a session over historyObjects in shop; forbidden names
// the types whose lists the server forbids.
func historySession(t *testing.T, cond *where.Conditions, forbidden ...string) (*query.Session, query.ObjectRef) {
	t.Helper()
	s := fakeapi.New(nil, fixtures.HistoryObjects()...)
	s.BeforeList = func(req *http.Request) *metav1.Status {
		for _, f := range forbidden {
			if strings.HasSuffix(req.URL.Path, "/"+f) {
				return forbiddenList(f)
			}
		}
		return nil
	}
	fixtures.ForbidMetadataList(s)
	return historySessionOf(t, s, cond, "deployment/web")
}

// historySessionOf is a session over s in shop, which serves the types of
// fixtures.HistoryAPIResources, with the --where conditions cond, and the
// object ref (type/name) of the question.
func historySessionOf(t *testing.T, s *fakeapi.Server, cond *where.Conditions, ref string) (*query.Session, query.ObjectRef) {
	t.Helper()
	tg := shopTarget(t, fixtures.HistoryAPIResources())
	session, _ := newSession(t, s, query.Config{Target: tg, Where: cond})
	return session, objectRef(t, tg.Mapper, ref)
}

// line renders an entry for comparison: time, object, source, action,
// managers and changes.
func line(e v1alpha1.HistoryEntry) string {
	var who []string
	for _, m := range e.Managers {
		who = append(who, m.Manager)
	}
	var changes []string
	for _, c := range e.Changes {
		s := c.Path
		if c.Old != nil {
			s += " " + string(c.Old.Raw)
		}
		if c.New != nil {
			s += " -> " + string(c.New.Raw)
		}
		var by []string
		for _, m := range c.Managers {
			by = append(by, m.Manager)
		}
		if len(by) > 0 {
			s += " by " + strings.Join(by, ",")
		}
		changes = append(changes, s)
	}
	what := e.Action
	if e.Revision != nil {
		what = fmt.Sprintf("%s %d", what, e.Revision.Number)
	}
	return fmt.Sprintf("+%s %s/%s %s %s [%s] %s", e.Time.Sub(fixtures.HistoryStart), strings.ToLower(e.Object.Kind), e.Object.Name, e.Source, what, strings.Join(who, ","), strings.Join(changes, "; "))
}

func historyLines(h *v1alpha1.History) []string {
	var out []string
	for _, e := range h.Entries {
		out = append(out, line(e))
	}
	return out
}

// TestSessionHistory: the revisions diffed one after the other, each field
// attributed to the manager that owns it (env FOO, an entry inserted
// first, to the server-side apply manager; the ReplicaSet's
// pod-template-hash to the controller), the scale and the ConfigMap's edit
// from managedFields, events, creations, in time order; the whole window
// covered, so no gap.
func TestSessionHistory(t *testing.T) {
	s, obj := historySession(t, nil)
	h, err := s.History(testContext(t), obj, query.HistoryOptions{Now: fixtures.HistoryNow, Uses: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`+0s deployment/web revision Rollout 1 [kubectl-client-side-apply] .spec.template -> {"metadata":{"labels":{"app":"web","pod-template-hash":"h1"}},"spec":{"containers":[{"env":[{"name":"LOG_LEVEL","valueFrom":{"configMapKeyRef":{"key":"LOG_LEVEL","name":"web-config"}}}],"image":"pause:3.10","name":"web","resources":{}}]}} by kubectl-client-side-apply`,
		// kubectl apply's last write made revision 1: the rollout shows its
		// template fields, this entry the others.
		`+0s deployment/web managedFields Written [kubectl-client-side-apply] .metadata.labels.app -> "web"; .spec.selector -> {"matchLabels":{"app":"web"}}`,
		`+0s deployment/web managedFields Written [kubectl] .spec.replicas -> 4`,
		`+0s configmap/web-config object Created [] `,
		`+0s deployment/web object Created [] `,
		`+10m0s deployment/web revision Rollout 2 [kubectl-set] .spec.template.metadata.labels.pod-template-hash "h1" -> "h2"; .spec.template.spec.containers[?(@.name=="web")].image "pause:3.10" -> "pause:3.9" by kubectl-set`,
		`+20m0s deployment/web revision Rollout 3 [history-test] .spec.template.metadata.labels.pod-template-hash "h2" -> "h3" by kube-controller-manager; .spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="FOO")] -> {"name":"FOO","value":"1"} by history-test`,
		`+20m0s deployment/web event ScalingReplicaSet [] `,
		`+21m0s pod/web-h3-a object Created [] `,
		`+1h40m0s configmap/web-config managedFields Written [kubectl-patch] .data.LOG_LEVEL -> "debug"`,
		`+1h40m0s deployment/web event ScalingReplicaSet [] `,
	}
	if diff := cmp.Diff(want, historyLines(h)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if len(h.Gaps) != 0 {
		t.Errorf("gaps %+v, want none: the revisions cover the template since the creation, the events the last hour", h.Gaps)
	}
	// The scale's time is not kept: it came between the creation and now.
	for _, e := range h.Entries {
		if e.Source == v1alpha1.SourceManagedFields && e.Managers[0].Subresource == "scale" &&
			(e.Until == nil || !e.Until.Time.Equal(fixtures.HistoryNow) || !e.Time.Time.Equal(fixtures.HistoryStart) || e.Note != "managedFields keep no time for this write") {
			t.Errorf("the scale: %+v, want between the creation and now, with why", e)
		}
	}
	var sources []string
	for _, c := range h.Coverage {
		sources = append(sources, c.Source)
		if c.Unavailable != "" {
			t.Errorf("coverage %s unavailable: %s", c.Source, c.Unavailable)
		}
	}
	if want := []string{"revision", "event", "managedFields", "object"}; !slices.Equal(sources, want) {
		t.Errorf("coverage of %q, want %q", sources, want)
	}
	if len(h.Warnings) != 0 {
		t.Errorf("warnings %q", h.Warnings)
	}
}

// TestSessionHistoryGaps: a window beyond the object's creation and the
// events' hour is a gap, said with why; events the user may not list are a
// warning naming the type, the coverage says so, and the stretch they
// covered is a gap too.
func TestSessionHistoryGaps(t *testing.T) {
	s, obj := historySession(t, nil)
	h, err := s.History(testContext(t), obj, query.HistoryOptions{Now: fixtures.HistoryNow, Since: fixtures.HistoryNow.Add(-3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Gaps) != 1 || !h.Gaps[0].From.Equal(&metav1.Time{Time: fixtures.HistoryNow.Add(-3 * time.Hour)}) || !h.Gaps[0].To.Time.Equal(fixtures.HistoryStart) {
		t.Fatalf("gaps %+v, want the hour before the creation", h.Gaps)
	}
	for _, want := range []string{"deployment/web was created at 2026-03-01T10:00:00Z, after it", "before the oldest revision kept (revision 1", "events expire about 1h0m0s after they last happened", "no checkpoint was given"} {
		if !strings.Contains(h.Gaps[0].Reason, want) {
			t.Errorf("gap reason %q lacks %q", h.Gaps[0].Reason, want)
		}
	}

	s, obj = historySession(t, nil, "events", "replicasets")
	h, err = s.History(testContext(t), obj, query.HistoryOptions{Now: fixtures.HistoryNow})
	if err != nil {
		t.Fatal(err)
	}
	wantWarnings := []string{
		`cannot list replicasets.apps, the answer may be incomplete: replicasets.apps is forbidden: User "jane" cannot list resource "replicasets" in API group "apps" in the namespace "shop"`,
		`cannot list events, the answer may be incomplete: events is forbidden: User "jane" cannot list resource "events" in API group "" in the namespace "shop"`,
	}
	if diff := cmp.Diff(wantWarnings, h.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	unavailable := map[string]string{}
	for _, c := range h.Coverage {
		unavailable[c.Source] = c.Unavailable
	}
	if !strings.HasPrefix(unavailable["event"], "cannot list events: events is forbidden") || !strings.HasPrefix(unavailable["revision"], "cannot list replicasets.apps:") {
		t.Errorf("coverage unavailable %q", unavailable)
	}
	if len(h.Gaps) != 1 || !h.Gaps[0].From.Time.Equal(fixtures.HistoryStart) || !strings.Contains(h.Gaps[0].Reason, "the events could not be read") {
		t.Errorf("gaps %+v, want the whole window, nothing covering it", h.Gaps)
	}
	for _, e := range h.Entries {
		if e.Source == "revision" || e.Source == "event" {
			t.Errorf("entry %s from a source that could not be read", line(e))
		}
	}
}

// TestSessionHistoryPruned: revision 1 is no longer kept (pruned by
// revisionHistoryLimit): the stretch from the creation to revision 2, the
// oldest kept, is before the events' hour, and is a gap saying so.
func TestSessionHistoryPruned(t *testing.T) {
	var objs []runtime.Object
	for _, o := range fixtures.HistoryObjects() {
		if rs, ok := o.(*appsv1.ReplicaSet); ok && rs.Name == "web-h1" {
			continue
		}
		objs = append(objs, o)
	}
	s := fakeapi.New(nil, objs...)
	session, obj := historySessionOf(t, s, nil, "deployment/web")
	h, err := session.History(testContext(t), obj, query.HistoryOptions{Now: fixtures.HistoryNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Gaps) != 1 || !h.Gaps[0].From.Time.Equal(fixtures.HistoryStart) || !h.Gaps[0].To.Time.Equal(fixtures.HistoryStart.Add(10*time.Minute)) {
		t.Fatalf("gaps %+v, want the creation to revision 2, the oldest kept", h.Gaps)
	}
	for _, want := range []string{"it is before the oldest revision kept (revision 2, 2026-03-01T10:10:00Z)", "events expire about 1h0m0s after they last happened"} {
		if !strings.Contains(h.Gaps[0].Reason, want) {
			t.Errorf("gap reason %q lacks %q", h.Gaps[0].Reason, want)
		}
	}
	if strings.Contains(h.Gaps[0].Reason, "was created at") {
		t.Errorf("gap reason %q says the object was created after the gap", h.Gaps[0].Reason)
	}
	var revisions []int64
	for _, e := range h.Entries {
		if e.Revision != nil {
			revisions = append(revisions, e.Revision.Number)
		}
	}
	if !slices.Equal(revisions, []int64{2, 3}) {
		t.Errorf("revisions %v, want 2 and 3", revisions)
	}
	for _, c := range h.Coverage {
		if c.Source == v1alpha1.SourceRevision && !strings.Contains(c.Description, "revisions 2 to 3") || c.Source == v1alpha1.SourceRevision && !strings.Contains(c.Description, "the revisions before 2 are no longer kept") {
			t.Errorf("the revisions' coverage: %q", c.Description)
		}
	}
}

// TestSessionHistoryWhere: --where keeps the entries whose object matches.
func TestSessionHistoryWhere(t *testing.T) {
	cond, err := where.Parse([]string{`object.kind == "ConfigMap"`}, fixtures.HistoryNow)
	if err != nil {
		t.Fatal(err)
	}
	s, obj := historySession(t, cond)
	h, err := s.History(testContext(t), obj, query.HistoryOptions{Now: fixtures.HistoryNow, Uses: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`+0s configmap/web-config object Created [] `, `+1h40m0s configmap/web-config managedFields Written [kubectl-patch] .data.LOG_LEVEL -> "debug"`}
	if diff := cmp.Diff(want, historyLines(h)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

// TestSessionHistoryCheckpoint: a checkpoint of a watch of the namespace's
// pods and ReplicaSets covers the stretch it printed: its objects' last
// changes while it ran, one changed since and one gone since (under the
// Deployment through the references --owner followed) are entries; one of
// another cluster or another feed is refused in the checkpoint's words.
func TestSessionHistoryCheckpoint(t *testing.T) {
	dir := t.TempDir()
	// write records each delta a second after the one before: the
	// checkpoint's times are kept to the second.
	write := func(name string, stream checkpoint.Stream, deltas ...*feed.Delta) string {
		path := filepath.Join(dir, name)
		f, err := checkpoint.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := f.Resume([]checkpoint.Stream{stream}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range deltas {
			if i > 0 {
				time.Sleep(time.Second)
			}
			if err := h[0].Record(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stream := checkpoint.Stream{Context: "kind-a", Command: "watch", Resources: []string{"pods", "replicasets.apps"}, Namespace: "shop",
		Filters: []checkpoint.Filter{{Flag: "--owner", Value: "deployment/web uid d-web"}}, Cluster: &checkpoint.Cluster{}}
	rsRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-h3", UID: "rs-h3"}
	// The feed lists, then a second later prints a change of web-h3-a; web-h3-b
	// is deleted after it stopped, and web-h3-a changed again.
	path := write("cp", stream, &feed.Delta{Positions: map[int]string{0: "50", 1: "50"}, Put: []feed.Known{
		{Source: 0, Namespace: "shop", Name: "web-h3-a", UID: "p-a", ResourceVersion: "30", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
		{Source: 0, Namespace: "shop", Name: "web-h3-b", UID: "p-b", ResourceVersion: "31", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
		{Source: 1, Namespace: "shop", Name: "web-h3", UID: "rs-h3", ResourceVersion: "", Printed: true, Followed: true},
	}}, &feed.Delta{Positions: map[int]string{0: "60"}, Put: []feed.Known{
		{Source: 0, Namespace: "shop", Name: "web-h3-a", UID: "p-a", ResourceVersion: "35", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
	}})
	s, obj := historySession(t, nil)
	h, err := s.History(testContext(t), obj, query.HistoryOptions{Now: time.Now(), Since: fixtures.HistoryStart, Checkpoint: path, ContextName: "kind-a"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h.Entries {
		if e.Source == v1alpha1.SourceCheckpoint {
			got = append(got, fmt.Sprintf("%s/%s %s %s until=%v", strings.ToLower(e.Object.Kind), e.Object.Name, e.Action, e.ResourceVersion, e.Until != nil))
		}
	}
	want := []string{"pod/web-h3-a Changed 35 until=false", "pod/web-h3-a Changed 40 until=true", "pod/web-h3-b Deleted 31 until=true"}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checkpoint entries (-want +got):\n%s", diff)
	}
	var covered int
	for _, c := range h.Coverage {
		if c.Source == v1alpha1.SourceCheckpoint && c.From != nil {
			covered++
		}
	}
	if covered != 2 {
		t.Errorf("%d checkpoint coverages with a stretch, want pods and replicasets.apps: %+v", covered, h.Coverage)
	}

	other := stream
	other.Cluster = &checkpoint.Cluster{Server: "https://elsewhere:6443"}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"another cluster", write("other", other, &feed.Delta{Positions: map[int]string{0: "1", 1: "1"}}),
			`checkpoint ` + dir + `/other was written for another cluster: the server in context kind-a was https://elsewhere:6443, is ""; resume against the cluster it was written for, or give another file`},
		{"another context", path, `checkpoint ` + path + ` was written for another feed: the contexts were kind-a, are kind-b; resume with the same command, or give another file`},
	} {
		s, obj := historySession(t, nil)
		name := "kind-a"
		if tc.name == "another context" {
			name = "kind-b"
		}
		_, err := s.History(testContext(t), obj, query.HistoryOptions{Now: fixtures.HistoryNow, Checkpoint: tc.path, ContextName: name})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

// TestSessionBlame: the object's fields a manager owns, each with its
// managers, list entries by their merge keys.
func TestSessionBlame(t *testing.T) {
	s, obj := historySession(t, nil)
	b, err := s.Blame(testContext(t), obj)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range b.Fields {
		for _, i := range f.Managers {
			got[f.Path] = append(got[f.Path], b.Managers[i].Manager)
		}
	}
	for path, want := range map[string][]string{
		`.spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="FOO")].name`:       {"history-test"},
		`.spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="FOO")].value`:      {"history-test"},
		`.spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="LOG_LEVEL")].name`: {"kubectl-client-side-apply"},
		`.spec.template.spec.containers[?(@.name=="web")].image`:                            {"kubectl-set"},
		`.spec.replicas`:       {"kubectl"},
		`.metadata.labels.app`: {"kubectl-client-side-apply"},
		`.spec.template.spec.containers[?(@.name=="web")].env[?(@.name=="LOG_LEVEL")].valueFrom.configMapKeyRef.key`: {"kubectl-client-side-apply"},
	} {
		if !slices.Equal(got[path], want) {
			t.Errorf("%s: %q, want %q", path, got[path], want)
		}
	}
	var content map[string]any
	if err := json.Unmarshal(b.Content.Raw, &content); err != nil {
		t.Fatal(err)
	}
	if _, ok := content["metadata"].(map[string]any)["managedFields"]; ok || content["kind"] != "Deployment" {
		t.Errorf("content: kind %v, managedFields kept: %v", content["kind"], ok)
	}
}

// forbiddenList is RBAC's answer to jane's list of resource in shop.
func forbiddenList(resource string) *metav1.Status {
	gr := schema.GroupResource{Resource: resource}
	if resource == "replicasets" {
		gr.Group = "apps"
	}
	return &fixtures.Forbidden(gr, "shop").ErrStatus
}

// TestSessionHistoryRollback: a rollback takes up the ReplicaSet of an
// earlier revision under a new number (kubectl rollout undo): its first
// number is a revision at its creation, the new one a revision whose time is
// not kept, between the revision before it and now, diffed against that one.
func TestSessionHistoryRollback(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(fixtures.HistoryStart.Add(d)) }
	tmpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	}
	rs := func(name string, created time.Duration, image, revision, history string) *appsv1.ReplicaSet {
		a := map[string]string{"deployment.kubernetes.io/revision": revision}
		if history != "" {
			a["deployment.kubernetes.io/revision-history"] = history
		}
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("rs-" + name), CreationTimestamp: at(created), Annotations: a,
			OwnerReferences: []metav1.OwnerReference{fixtures.ControllerRef("apps/v1", "Deployment", "undo", "d-undo")}}, Spec: appsv1.ReplicaSetSpec{Template: tmpl(image)}}
	}
	objs := []runtime.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "undo", UID: "d-undo", CreationTimestamp: at(0)}, Spec: appsv1.DeploymentSpec{Template: tmpl("app:1")}},
		rs("undo-a", 0, "app:1", "3", "1"),
		rs("undo-b", 10*time.Minute, "app:2", "2", ""),
	}
	s := fakeapi.New(nil, objs...)
	session, obj := historySessionOf(t, s, nil, "deployment/undo")
	h, err := session.History(testContext(t), obj, query.HistoryOptions{Now: fixtures.HistoryNow})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h.Entries {
		if e.Revision == nil {
			continue
		}
		until := ""
		if e.Until != nil {
			until = " until +" + e.Until.Sub(fixtures.HistoryStart).String()
		}
		var paths []string
		for _, c := range e.Changes {
			paths = append(paths, c.Path+" "+raw(c.Old)+" -> "+raw(c.New))
		}
		got = append(got, fmt.Sprintf("%d %s +%s%s %s", e.Revision.Number, e.Revision.Object.Name, e.Time.Sub(fixtures.HistoryStart), until, strings.Join(paths, "; ")))
	}
	want := []string{
		`1 undo-a +0s .spec.template  -> {"metadata":{},"spec":{"containers":[{"image":"app:1","name":"app","resources":{}}]}}`,
		`2 undo-b +10m0s .spec.template.spec.containers[?(@.name=="app")].image "app:1" -> "app:2"`,
		`3 undo-a +10m0s until +2h0m0s .spec.template.spec.containers[?(@.name=="app")].image "app:2" -> "app:1"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rollouts (-want +got):\n%s", diff)
	}
}

// raw is a change's value as JSON, "" for none.
func raw(r *runtime.RawExtension) string {
	if r == nil {
		return ""
	}
	return string(r.Raw)
}
