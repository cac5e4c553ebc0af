package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// benchPage is the size of the pages the wire benchmarks read: a LIST page
// of informer.DefaultPageSize objects, as the informers ask for.
const benchPage = 2000

// realisticPage returns a page of benchPage pods as heavy as a production
// cluster's (testdata/pod-realistic.json, a copy of the bench's: about 12 KB
// of JSON, half of it metadata, managedFields from two writers), with names
// and UIDs of their own, continued by a token: as a protobuf PodList, as a
// metadata-only protobuf PartialObjectMetadataList, and as a JSON
// PartialObjectMetadataList. Light fixtures make the stripper look faster
// than it is on a real cluster.
func realisticPage(b *testing.B) (pods, metas, metasJSON []byte) {
	b.Helper()
	data, err := os.ReadFile("testdata/pod-realistic.json")
	if err != nil {
		b.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(data, &pod); err != nil {
		b.Fatal(err)
	}
	lm := metav1.ListMeta{ResourceVersion: "48793", Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDg3OTN9"}
	podList := &corev1.PodList{ListMeta: lm}
	metaList := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"}, ListMeta: lm}
	for i := range benchPage {
		p := pod.DeepCopy()
		p.Name = fmt.Sprintf("%s-%05d", pod.Name, i)
		p.UID = types.UID(fmt.Sprintf("%s-%05d", pod.UID, i))
		podList.Items = append(podList.Items, *p)
		metaList.Items = append(metaList.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: p.ObjectMeta})
	}
	metasJSON, err = json.Marshal(metaList)
	if err != nil {
		b.Fatal(err)
	}
	return protobufList(b, "v1", "PodList", podList), protobufList(b, "meta.k8s.io/v1", "PartialObjectMetadataList", metaList), metasJSON
}

// BenchmarkStripManagedFields takes the managedFields out of a page of
// realistic pods, whole and metadata-only. The stripper writes over the
// answer, so each round first copies the page into the same buffer: a
// memmove of the page, in every figure before and after a change alike.
func BenchmarkStripManagedFields(b *testing.B) {
	pods, metas, _ := realisticPage(b)
	for _, c := range []struct {
		name string
		data []byte
	}{{"pods", pods}, {"metadata", metas}} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, len(c.data))
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				copy(buf, c.data)
				if _, err := stripManagedFields(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// bodyTripper answers every request with one answer, from memory.
type bodyTripper struct {
	contentType string
	body        []byte
}

func (a bodyTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {a.contentType}}, Body: io.NopCloser(bytes.NewReader(a.body)), Request: req}, nil
}

// BenchmarkPipeline reads a LIST page of realistic metadata-only pods
// through ListTransport to its end: the continue token found in the
// answer's first bytes, and the managedFields taken out of a protobuf answer
// when the page asks (strip), or not (keep); a JSON answer only gives its
// token. The body is read into io.Discard, not kept, so that the figures are
// the transport's own.
func BenchmarkPipeline(b *testing.B) {
	_, metas, metasJSON := realisticPage(b)
	for _, c := range []struct {
		name, contentType string
		body              []byte
		drop              bool
	}{
		{"protobuf strip", "application/vnd.kubernetes.protobuf", metas, true},
		{"protobuf keep", "application/vnd.kubernetes.protobuf", metas, false},
		{"json", "application/json", metasJSON, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			rt := ListTransport(bodyTripper{contentType: c.contentType, body: c.body})
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				var token string
				ctx := withListHook(context.Background(), listHook{onContinue: func(t string) { token = t }, dropManagedFields: c.drop})
				body := getList(b, rt, ctx)
				if _, err := io.Copy(io.Discard, body); err != nil {
					b.Fatal(err)
				}
				body.Close()
				if token == "" {
					b.Fatal("no continue token")
				}
			}
		})
	}
}

// getList sends a LIST of pods through rt with ctx and returns the answer's body.
func getList(b *testing.B, rt http.RoundTripper, ctx context.Context) io.ReadCloser {
	b.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://example.com/api/v1/pods?limit=2000", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	return resp.Body
}

// BenchmarkReadList reads a LIST page of realistic pods to decoded pods:
// through ListTransport, read whole and then decoded, as the REST client
// does (whole), and decoded item by item as it arrives (ReadList), both
// without managedFields.
func BenchmarkReadList(b *testing.B) {
	pods, _, _ := realisticPage(b)
	rt := ListTransport(bodyTripper{contentType: "application/vnd.kubernetes.protobuf", body: pods})
	hook := listHook{dropManagedFields: true}
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pods)))
		for b.Loop() {
			body := getList(b, rt, withListHook(context.Background(), hook))
			data, err := io.ReadAll(body)
			body.Close()
			if err != nil {
				b.Fatal(err)
			}
			var list corev1.PodList
			if err := decodeAnswer(data, &list); err != nil || len(list.Items) != benchPage {
				b.Fatal(err)
			}
		}
	})
	b.Run("as it arrives", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pods)))
		for b.Loop() {
			ctx := Streamed(withListHook(context.Background(), hook))
			body := getList(b, rt, ctx)
			var list corev1.PodList
			err := ReadList(ctx, body, &list, func([]byte) error { return errors.New("not protobuf") })
			body.Close()
			if err != nil || len(list.Items) != benchPage {
				b.Fatal(err)
			}
		}
	})
}
