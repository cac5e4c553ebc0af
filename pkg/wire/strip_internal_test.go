package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"
	"testing/iotest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// managed returns managedFields of two writers, as the API server keeps them.
func managed() []metav1.ManagedFieldsEntry {
	t := metav1.NewTime(time.Date(2026, 11, 20, 20, 58, 0, 0, time.UTC))
	return []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{}}}`)}},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1", Subresource: "status",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:phase":{}}}`)}},
	}
}

// testObjectMeta is the metadata of object i, with managedFields when withManaged.
func testObjectMeta(i int, withManaged bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name: fmt.Sprintf("web-%d", i), Namespace: "shop", UID: "uid", ResourceVersion: "7", Generation: 3,
		Labels:          map[string]string{"app": "web", "pod-template-hash": "abc"},
		Annotations:     map[string]string{"checksum/config": "0123456789abcdef"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "rs-uid"}},
		Finalizers:      []string{"example.com/keep"},
	}
	if withManaged {
		m.ManagedFields = managed()
	}
	return m
}

// stripTestLists returns, for each kind of list the informers read in protobuf,
// the list as the server sends it and as it should decode once stripped.
func stripTestLists(t testing.TB) []struct {
	name       string
	data       []byte
	want, into interface {
		Unmarshal([]byte) error
	}
} {
	t.Helper()
	pods, podsWant := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7", Continue: "next"}}, &corev1.PodList{}
	metas, metasWant := &metav1.PartialObjectMetadataList{ListMeta: pods.ListMeta}, &metav1.PartialObjectMetadataList{}
	deps, depsWant := &appsv1.DeploymentList{}, &appsv1.DeploymentList{}
	for i := range 3 {
		pod := corev1.Pod{ObjectMeta: testObjectMeta(i, true), Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		pods.Items = append(pods.Items, pod)
		metas.Items = append(metas.Items, metav1.PartialObjectMetadata{ObjectMeta: pod.ObjectMeta})
		// A template's metadata is not the object's: its managedFields stay.
		dep := appsv1.Deployment{ObjectMeta: testObjectMeta(i, true), Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{ObjectMeta: testObjectMeta(i, true)}}}
		deps.Items = append(deps.Items, dep)
	}
	wantList := func(in, out interface {
		Marshal() ([]byte, error)
		Unmarshal([]byte) error
	}, clear func()) {
		data, err := in.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Unmarshal(data); err != nil {
			t.Fatal(err)
		}
		clear()
	}
	wantList(pods, podsWant, func() {
		for i := range podsWant.Items {
			podsWant.Items[i].ManagedFields = nil
		}
	})
	wantList(metas, metasWant, func() {
		for i := range metasWant.Items {
			metasWant.Items[i].ManagedFields = nil
		}
	})
	wantList(deps, depsWant, func() {
		for i := range depsWant.Items {
			depsWant.Items[i].ManagedFields = nil
		}
	})
	return []struct {
		name       string
		data       []byte
		want, into interface {
			Unmarshal([]byte) error
		}
	}{
		{"pods", protobufList(t, "v1", "PodList", pods), podsWant, &corev1.PodList{}},
		{"metadata-only", protobufList(t, "meta.k8s.io/v1", "PartialObjectMetadataList", metas), metasWant, &metav1.PartialObjectMetadataList{}},
		{"deployments with templates", protobufList(t, "apps/v1", "DeploymentList", deps), depsWant, &appsv1.DeploymentList{}},
	}
}

// decodeAnswer decodes a protobuf answer's list into into.
func decodeAnswer(data []byte, into interface{ Unmarshal([]byte) error }) error {
	if !bytes.HasPrefix(data, protobufMagic) {
		return errProtobufShape
	}
	var u runtime.Unknown
	if err := u.Unmarshal(data[len(protobufMagic):]); err != nil {
		return err
	}
	return into.Unmarshal(u.Raw)
}

// TestStripManagedFields: a protobuf list answer without its items'
// managedFields decodes to the same list with the items' managedFields
// cleared, and nothing else: not the list's metadata, not the managedFields of
// a template inside an item. An answer without managedFields comes back as it
// is; one of another shape, or cut short, is refused and left as it was.
func TestStripManagedFields(t *testing.T) {
	for _, tc := range stripTestLists(t) {
		t.Run(tc.name, func(t *testing.T) {
			out, err := stripManagedFields(bytes.Clone(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if len(out) >= len(tc.data) {
				t.Errorf("stripped answer is %d bytes, the answer %d", len(out), len(tc.data))
			}
			if err := decodeAnswer(out, tc.into); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tc.into, tc.want) {
				t.Errorf("stripped answer decodes to\n%+v\nwant\n%+v", tc.into, tc.want)
			}
			// Nothing left to take out: the same bytes.
			again, err := stripManagedFields(out)
			if err != nil {
				t.Fatal(err)
			}
			if &again[0] != &out[0] || len(again) != len(out) {
				t.Error("an answer without managedFields was copied")
			}
			// Cut short anywhere, it is refused and left as it was, or (cut
			// where a field ends) stripped like any message; it never panics.
			for n := 0; n < len(tc.data); n++ {
				cut := bytes.Clone(tc.data[:n])
				out, err := stripManagedFields(cut)
				if err != nil {
					if !bytes.Equal(cut, tc.data[:n]) {
						t.Fatalf("a refused prefix of %d bytes was changed", n)
					}
					continue
				}
				if again, err := stripManagedFields(bytes.Clone(out)); err != nil || !bytes.Equal(again, out) || len(out) > n {
					t.Fatalf("a prefix of %d bytes stripped to %d bytes, which strip again to %d (%v)", n, len(out), len(again), err)
				}
			}
		})
	}
	for _, data := range []string{"", "k8s", `{"kind":"PodList"}`, "k8s\x00\x0a", "k8s\x00\x12\x05\x12\x03\x0a\x01", "k8s\x00\x0b"} {
		if _, err := stripManagedFields([]byte(data)); err == nil {
			t.Errorf("%q was not refused", data)
		}
	}
}

// FuzzStripManagedFields: whatever the bytes, stripping never panics; what it
// returns is stripped already; and when the bytes are a metadata-only list
// answer, the stripped one decodes to the same list without managedFields, or
// (for bytes no API server writes) does not decode at all, never to another
// list.
//
// The generated decoders read a map entry's key and value against the end of
// the whole message that holds the map, not against the end of the entry: a
// label whose length runs past its entry decodes, taking in the bytes after
// it. Stripping moves what follows, so such an answer may not decode once
// stripped. A refusal is safe; what is checked then is that the same list,
// written as the API server writes it, strips to what it should.
func FuzzStripManagedFields(f *testing.F) {
	for _, tc := range stripTestLists(f) {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := stripManagedFields(bytes.Clone(data))
		if err != nil {
			return
		}
		again, err := stripManagedFields(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("stripping the stripped answer: %v, changed %v", err, !bytes.Equal(again, out))
		}
		var want metav1.PartialObjectMetadataList
		if decodeAnswer(data, &want) != nil {
			return
		}
		for i := range want.Items {
			want.Items[i].ManagedFields = nil
		}
		var got metav1.PartialObjectMetadataList
		if err := decodeAnswer(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			// Only bytes the decoders read leniently: the same list as the
			// server writes it must strip and decode to the list.
			var full metav1.PartialObjectMetadataList
			if decodeAnswer(data, &full) != nil {
				t.Fatal("the answer decoded once and not twice")
			}
			written := protobufList(t, "meta.k8s.io/v1", "PartialObjectMetadataList", &full)
			stripped, err := stripManagedFields(written)
			if err != nil {
				t.Fatalf("the list as the server writes it is refused: %v", err)
			}
			got = metav1.PartialObjectMetadataList{}
			if err := decodeAnswer(stripped, &got); err != nil {
				t.Fatalf("the list as the server writes it does not decode once stripped: %v", err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("stripped answer decodes to\n%+v\nwant\n%+v", got, want)
		}
	})
}

// answerTripper answers every request with status, contentType and body, cut
// by failAfter bytes with err when err is set.
type answerTripper struct {
	status      int
	contentType string
	body        []byte
	failAfter   int
	err         error
}

func (a answerTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var body io.Reader = bytes.NewReader(a.body)
	if a.err != nil {
		body = io.MultiReader(bytes.NewReader(a.body[:a.failAfter]), iotest.ErrReader(a.err))
	}
	return &http.Response{StatusCode: a.status, Header: http.Header{"Content-Type": {a.contentType}}, Body: io.NopCloser(body), Request: req}, nil
}

// TestListTransport: a LIST page request (one with a listHook) gets its
// continue token from the answer, and a protobuf answer without its items'
// managedFields when the hook asks; a JSON answer, a failed request and a
// request without a hook pass untouched, and an answer cut short fails with
// the transport's error.
func TestListTransport(t *testing.T) {
	lists := stripTestLists(t)
	pods := lists[0].data
	stripped, err := stripManagedFields(bytes.Clone(pods))
	if err != nil {
		t.Fatal(err)
	}
	jsonList := []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"next"},"items":[{"metadata":{"name":"a","managedFields":[{"manager":"kubelet"}]}}]}`)
	cut := errors.New("connection reset by peer")
	tests := []struct {
		name      string
		answer    answerTripper
		hook      *listHook
		want      []byte
		wantToken string
		wantErr   error
	}{
		{"protobuf, managedFields dropped", answerTripper{status: 200, contentType: "application/vnd.kubernetes.protobuf", body: pods}, &listHook{dropManagedFields: true}, stripped, "next", nil},
		{"protobuf, managedFields kept", answerTripper{status: 200, contentType: "application/vnd.kubernetes.protobuf", body: pods}, &listHook{}, pods, "next", nil},
		{"JSON", answerTripper{status: 200, contentType: "application/json", body: jsonList}, &listHook{dropManagedFields: true}, jsonList, "next", nil},
		{"not a LIST page", answerTripper{status: 200, contentType: "application/vnd.kubernetes.protobuf", body: pods}, nil, pods, "", nil},
		{"an error", answerTripper{status: 410, contentType: "application/vnd.kubernetes.protobuf", body: pods}, &listHook{dropManagedFields: true}, pods, "", nil},
		{"cut short", answerTripper{status: 200, contentType: "application/vnd.kubernetes.protobuf", body: pods, failAfter: 600, err: cut}, &listHook{dropManagedFields: true}, nil, "next", cut},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var token string
			if tc.hook != nil {
				hook := *tc.hook
				hook.onContinue = func(tok string) { token = tok }
				ctx = withListHook(ctx, hook)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://example.com/api/v1/pods?limit=3", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := ListTransport(tc.answer).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			if cerr := resp.Body.Close(); cerr != nil {
				t.Fatal(cerr)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("reading the body: %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && !bytes.Equal(got, tc.want) {
				t.Errorf("body of %d bytes, want %d", len(got), len(tc.want))
			}
			if token != tc.wantToken {
				t.Errorf("continue token %q, want %q", token, tc.wantToken)
			}
		})
	}
}
