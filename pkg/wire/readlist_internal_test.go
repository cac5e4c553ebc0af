package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"google.golang.org/protobuf/encoding/protowire"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestReadList: a protobuf LIST answer read as it arrives, in reads of any
// size, decodes to the list the whole answer decodes to, with its items'
// managedFields cleared when the hook asks (and only the items' own: a
// template's stay), and WithHeld counts the stripped answer; an answer that
// is not protobuf goes to the decoder whole; one cut short, or of another
// shape, is an error, as is a read error.
func TestReadList(t *testing.T) {
	for _, tc := range stripTestLists(t) {
		newList := func() runtime.Object { return reflect.New(reflect.TypeOf(tc.into).Elem()).Interface().(runtime.Object) }
		whole := newList()
		if err := decodeAnswer(tc.data, whole.(interface{ Unmarshal([]byte) error })); err != nil {
			t.Fatal(err)
		}
		stripped, err := stripManagedFields(bytes.Clone(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		for _, drop := range []bool{false, true} {
			want := whole
			wantHeld := len(tc.data)
			if drop {
				want, wantHeld = tc.want.(runtime.Object), len(stripped)
			}
			for name, r := range map[string]func() io.Reader{
				"whole":         func() io.Reader { return bytes.NewReader(tc.data) },
				"a byte a time": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(tc.data)) },
				"with EOF":      func() io.Reader { return iotest.DataErrReader(bytes.NewReader(tc.data)) },
			} {
				var held atomic.Int64
				ctx := WithHeld(context.Background(), drop, &held)
				got := newList()
				decoded := false
				if err := ReadList(ctx, r(), got, func([]byte) error { decoded = true; return nil }); err != nil {
					t.Fatalf("%s, %s, dropping managedFields %v: %v", tc.name, name, drop, err)
				}
				if decoded {
					t.Fatalf("%s, %s: a protobuf answer went to the decoder", tc.name, name)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, %s, dropping managedFields %v: decoded to\n%+v\nwant\n%+v", tc.name, name, drop, got, want)
				}
				// The envelope's bytes (the list's kind) are not counted: the
				// items and the list's metadata are.
				if n := int(held.Load()); n > wantHeld || n < wantHeld-64 {
					t.Errorf("%s, %s, dropping managedFields %v: %d bytes held, want about %d", tc.name, name, drop, n, wantHeld)
				}
			}
			for n := 0; n < len(tc.data); n += 7 {
				if err := ReadList(context.Background(), bytes.NewReader(tc.data[:n]), newList(), func([]byte) error { return nil }); err == nil && n >= len(protobufMagic) {
					t.Fatalf("%s cut to %d bytes was read", tc.name, n)
				}
			}
		}
	}
	// Items are decoded over zeroed memory, whatever the slice held past its
	// length.
	stale := make([]corev1.Pod, 5)
	for i := range stale {
		// Fields the encoding leaves out when empty: a pointer, a list.
		stale[i].Spec.ActiveDeadlineSeconds = new(int64)
		stale[i].Spec.Tolerations = []corev1.Toleration{{Key: "stale"}}
	}
	pods := &corev1.PodList{Items: stale[:0]}
	if err := ReadList(WithHeld(context.Background(), true, nil), bytes.NewReader(stripTestLists(t)[0].data), pods, func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if want := stripTestLists(t)[0].want; !reflect.DeepEqual(pods, want) {
		t.Errorf("read over a slice that held other pods:\n%+v\nwant\n%+v", pods, want)
	}
	json := []byte(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`)
	var held atomic.Int64
	var got []byte
	if err := ReadList(WithHeld(context.Background(), true, &held), bytes.NewReader(json), &corev1.PodList{}, func(data []byte) error { got = data; return nil }); err != nil || !bytes.Equal(got, json) || held.Load() != int64(len(json)) {
		t.Errorf("a JSON answer: %v, handed %q, %d bytes held", err, got, held.Load())
	}
	// A list whose items are not protobuf messages goes to the decoder too.
	got = nil
	data := stripTestLists(t)[0].data
	if err := ReadList(context.Background(), bytes.NewReader(data), &unstructured.UnstructuredList{}, func(data []byte) error { got = data; return nil }); err != nil || !bytes.Equal(got, data) {
		t.Errorf("a list of items that do not decode from protobuf: %v, handed %d bytes", err, len(got))
	}
	for _, data := range []string{"k8s\x00\x0a", "k8s\x00\x0b", "k8s\x00\x1a\x01x\x12\x00", "k8s\x00\x12\x05\x12\x03\x0a\x01"} {
		if err := ReadList(context.Background(), bytes.NewReader([]byte(data)), &appsv1.DeploymentList{}, func([]byte) error { return nil }); err == nil {
			t.Errorf("%q was read", data)
		}
	}
	cut := errors.New("connection reset by peer")
	if err := ReadList(context.Background(), io.MultiReader(bytes.NewReader(data[:600]), iotest.ErrReader(cut)), &corev1.PodList{}, func([]byte) error { return nil }); !errors.Is(err, cut) {
		t.Errorf("an answer cut by %v: %v", cut, err)
	}
	// An HTTP/2 stream whose connection closed reads io.ErrUnexpectedEOF: at
	// whatever byte, that is the error, never the answer's shape; the same
	// bytes ending cleanly are.
	for n := 0; n < len(data); n += 5 {
		lost := io.MultiReader(bytes.NewReader(data[:n]), iotest.ErrReader(io.ErrUnexpectedEOF))
		if err := ReadList(context.Background(), lost, &corev1.PodList{}, func([]byte) error { return nil }); !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errProtobufShape) {
			t.Fatalf("an answer whose connection closed after %d bytes: %v, want %v", n, err, io.ErrUnexpectedEOF)
		}
		if n < len(protobufMagic) {
			continue
		}
		if err := ReadList(context.Background(), bytes.NewReader(data[:n]), &corev1.PodList{}, func([]byte) error { return nil }); !errors.Is(err, errProtobufShape) {
			t.Fatalf("an answer that ends after %d bytes: %v, want %v", n, err, errProtobufShape)
		}
	}
}

// FuzzReadList: whatever the bytes, reading them as a list never panics; a
// metadata-only list answer that the general decoder decodes, ReadList reads
// to the same list, and without its items' managedFields when asked (for
// bytes no API server writes, which decode leniently, the same list written
// as the server writes it must).
func FuzzReadList(f *testing.F) {
	for _, tc := range stripTestLists(f) {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, gotStripped metav1.PartialObjectMetadataList
		err := ReadList(context.Background(), bytes.NewReader(data), &got, func([]byte) error { return errors.New("not protobuf") })
		errStripped := ReadList(WithHeld(context.Background(), true, nil), iotest.HalfReader(bytes.NewReader(data)), &gotStripped, func([]byte) error { return errors.New("not protobuf") })
		var want metav1.PartialObjectMetadataList
		if decodeAnswer(data, &want) != nil {
			return
		}
		if !plainList(data) || holdsGroup(data[len(protobufMagic):], 0) {
			// The general decoder reads no list as an empty one, an encoded
			// one as if it were not, of two lists the last, and passes over
			// groups: ReadList refuses all four (the API server writes none
			// of them).
			return
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("read as %+v (%v)\nwant %+v", got, err, want)
		}
		for i := range want.Items {
			want.Items[i].ManagedFields = nil
		}
		if errStripped == nil && reflect.DeepEqual(gotStripped, want) {
			return
		}
		written := protobufList(t, "meta.k8s.io/v1", "PartialObjectMetadataList", &got)
		gotStripped = metav1.PartialObjectMetadataList{}
		if err := ReadList(WithHeld(context.Background(), true, nil), bytes.NewReader(written), &gotStripped, func([]byte) error { return errors.New("not protobuf") }); err != nil || !reflect.DeepEqual(gotStripped, want) {
			t.Fatalf("the list as the server writes it reads without managedFields as %+v (%v)\nwant %+v", gotStripped, err, want)
		}
	})
}

// holdsGroup reports whether message b, or a message nested in it (a
// length-delimited field that reads whole as one), holds a group: a wire type
// the Kubernetes API does not use and the general decoder passes over.
func holdsGroup(b []byte, depth int) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return true
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		if typ == protowire.BytesType && depth < 8 {
			if v, _ := protowire.ConsumeBytes(b[n:]); holdsGroup(v, depth+1) {
				return true
			}
		}
		b = b[n+m:]
	}
	return false
}

// plainList reports whether the envelope of a protobuf answer holds a list,
// not encoded.
func plainList(data []byte) bool {
	var u runtime.Unknown
	if !bytes.HasPrefix(data, protobufMagic) || u.Unmarshal(data[len(protobufMagic):]) != nil || u.Raw == nil || u.ContentEncoding != "" {
		return false
	}
	lists := 0
	for b := data[len(protobufMagic):]; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		if num == unknownRawField && typ == protowire.BytesType {
			lists++
		}
		b = b[n+m:]
	}
	return lists == 1
}
