package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listKeys reads data with ReadListKeys, one byte at a time when slow (an
// answer arriving in pieces), into "namespace/name@resourceVersion" lines.
func listKeys(data []byte, slow bool) ([]string, metav1.ListMeta, error) {
	var r io.Reader = bytes.NewReader(data)
	if slow {
		r = iotest.OneByteReader(r)
	}
	var keys []string
	lm, _, err := ReadListKeys(r, func(ns, name, rv []byte) bool {
		keys = append(keys, fmt.Sprintf("%s/%s@%s", ns, name, rv))
		return true
	})
	return keys, lm, err
}

// decodedKeys is what ReadListKeys should read of a list: its items'
// namespace, name and resourceVersion as the general decoder reads them.
func decodedKeys(t testing.TB, data []byte) ([]string, metav1.ListMeta) {
	t.Helper()
	var list metav1.PartialObjectMetadataList
	if err := decodeAnswer(data, &list); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range list.Items {
		keys = append(keys, fmt.Sprintf("%s/%s@%s", it.Namespace, it.Name, it.ResourceVersion))
	}
	return keys, list.ListMeta
}

// TestReadListKeys: the keys of a protobuf list answer, metadata-only or of
// whole objects, are those the general decoder reads, whether the answer
// arrives at once or byte by byte; the reading stops when asked; an answer
// cut short or of another shape is an error, never a shorter list.
func TestReadListKeys(t *testing.T) {
	for _, tc := range stripTestLists(t) {
		t.Run(tc.name, func(t *testing.T) {
			want, wantMeta := decodedKeys(t, tc.data)
			for _, slow := range []bool{false, true} {
				got, lm, err := listKeys(tc.data, slow)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) || lm.ResourceVersion != wantMeta.ResourceVersion || lm.Continue != wantMeta.Continue {
					t.Errorf("read %v (%+v), want %v (%+v)", got, lm, want, wantMeta)
				}
			}
			n := 0
			_, stopped, err := ReadListKeys(bytes.NewReader(tc.data), func(_, _, _ []byte) bool { n++; return false })
			if len(want) > 0 && (err != nil || !stopped || n != 1) {
				t.Errorf("asked to stop at the first item: %d items, stopped %v, %v", n, stopped, err)
			}
			// Cut short, it is refused, or (cut after the list, in the
			// envelope's last empty fields) read whole.
			for cut := 0; cut < len(tc.data); cut++ {
				if got, _, err := listKeys(tc.data[:cut], false); err == nil && fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("an answer cut to %d of %d bytes read as %v", cut, len(tc.data), got)
				}
			}
		})
	}
	for _, data := range []string{"", "k8s", `{"kind":"PodList"}`, "k8s\x00", "k8s\x00\x0a", "k8s\x00\x1a\x04gzip\x12\x00", "k8s\x00\x0b"} {
		if _, _, err := listKeys([]byte(data), false); err == nil {
			t.Errorf("%q was not refused", data)
		}
	}
	// A failed read is that failure.
	boom := errors.New("connection reset")
	data := stripTestLists(t)[0].data
	if _, _, err := ReadListKeys(io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(boom)), func(_, _, _ []byte) bool { return true }); !errors.Is(err, boom) {
		t.Errorf("a failed read: %v, want %v", err, boom)
	}
	// A connection that closed mid-answer (HTTP/2 reads io.ErrUnexpectedEOF)
	// is that, not the answer's shape, at whatever byte.
	for n := 0; n < len(data); n += 5 {
		lost := io.MultiReader(bytes.NewReader(data[:n]), iotest.ErrReader(io.ErrUnexpectedEOF))
		if _, _, err := ReadListKeys(lost, func(_, _, _ []byte) bool { return true }); !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errProtobufShape) {
			t.Fatalf("a connection closed after %d bytes: %v, want %v", n, err, io.ErrUnexpectedEOF)
		}
	}
}

// FuzzReadListKeys: whatever the bytes, ReadListKeys never panics, and when
// they decode as a metadata-only list answer it reads the keys the general
// decoder does, or refuses them.
func FuzzReadListKeys(f *testing.F) {
	for _, tc := range stripTestLists(f) {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, lm, err := listKeys(data, false)
		if err != nil {
			return
		}
		var list metav1.PartialObjectMetadataList
		if decodeAnswer(data, &list) != nil {
			return
		}
		want, wantMeta := decodedKeys(t, data)
		if fmt.Sprint(got) != fmt.Sprint(want) || lm.ResourceVersion != wantMeta.ResourceVersion {
			t.Fatalf("read %v at %q, the decoder %v at %q", got, lm.ResourceVersion, want, wantMeta.ResourceVersion)
		}
	})
}

// BenchmarkReadListKeys reads the keys of a metadata-only page of realistic
// pods, against decoding it.
func BenchmarkReadListKeys(b *testing.B) {
	_, metas, _ := realisticPage(b)
	b.Run("keys", func(b *testing.B) {
		b.SetBytes(int64(len(metas)))
		for b.Loop() {
			if _, _, err := ReadListKeys(bytes.NewReader(metas), func(_, _, _ []byte) bool { return true }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(metas)))
		for b.Loop() {
			var list metav1.PartialObjectMetadataList
			if err := decodeAnswer(metas, &list); err != nil {
				b.Fatal(err)
			}
		}
	})
}
