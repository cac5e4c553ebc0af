package wire

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// joined reads readStripped's answer from r, with size as the expected size.
func joined(r io.Reader, size int) ([]byte, error) {
	parts, err := readStripped(r, size)
	if err != nil {
		return nil, err
	}
	return bytes.Join(parts, nil), nil
}

// TestReadStripped: an answer read as it arrives, in reads of any size and
// into a buffer of any expected size, is the answer stripManagedFields
// writes, byte for byte, for each kind of list the informers read; it decodes
// to the list without its items' managedFields, and nothing else (a
// template's managedFields stay). An answer cut short is served as it came
// but for the items that arrived whole, whose lengths and the list's are
// shortened by what was taken out; bytes of another shape are served as they
// came; a read error is returned.
func TestReadStripped(t *testing.T) {
	for _, tc := range stripTestLists(t) {
		t.Run(tc.name, func(t *testing.T) {
			want, err := stripManagedFields(bytes.Clone(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			readers := map[string]func() io.Reader{
				"whole":         func() io.Reader { return bytes.NewReader(tc.data) },
				"a byte a time": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(tc.data)) },
				"half a time":   func() io.Reader { return iotest.HalfReader(bytes.NewReader(tc.data)) },
				"with EOF":      func() io.Reader { return iotest.DataErrReader(bytes.NewReader(tc.data)) },
			}
			for name, r := range readers {
				for _, size := range []int{0, 10, len(want), 10 * len(tc.data)} {
					got, err := joined(r(), size)
					if err != nil {
						t.Fatalf("%s, size %d: %v", name, size, err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s, size %d: %d bytes, want stripManagedFields' %d", name, size, len(got), len(want))
					}
				}
			}
			got, err := joined(bytes.NewReader(tc.data), 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := decodeAnswer(got, tc.into); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tc.into, tc.want) {
				t.Errorf("stripped answer decodes to\n%+v\nwant\n%+v", tc.into, tc.want)
			}
			// Nothing left to take out: the same bytes.
			again, err := joined(bytes.NewReader(got), 0)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("a stripped answer read again: %v, changed %v", err, !bytes.Equal(again, got))
			}
			// Cut short anywhere: never a panic, never longer than the cut,
			// and what strips again the same.
			for n := 0; n < len(tc.data); n++ {
				out, err := joined(iotest.HalfReader(bytes.NewReader(tc.data[:n])), 0)
				if err != nil {
					t.Fatalf("a prefix of %d bytes: %v", n, err)
				}
				if len(out) > n {
					t.Fatalf("a prefix of %d bytes served as %d", n, len(out))
				}
				if n < 200 && len(out) == n && !bytes.Equal(out, tc.data[:n]) {
					t.Fatalf("a prefix of %d bytes, before any item ends, was changed", n)
				}
			}
		})
	}
	for _, data := range []string{"", "k8s", `{"kind":"PodList"}`, "k8s\x00\x0a", "k8s\x00\x12\x05\x12\x03\x0a\x01", "k8s\x00\x0b", "k8s\x00\x12\xff\xff\xff\xff\x7f"} {
		got, err := joined(bytes.NewReader([]byte(data)), 0)
		if err != nil || string(got) != data {
			t.Errorf("%q served as %q (%v), want it as it came", data, got, err)
		}
	}
	cut := errors.New("connection reset by peer")
	data := stripTestLists(t)[0].data
	if _, err := readStripped(io.MultiReader(bytes.NewReader(data[:600]), iotest.ErrReader(cut)), 0); !errors.Is(err, cut) {
		t.Errorf("an answer cut by %v: %v", cut, err)
	}
}

// FuzzReadStripped: whatever the bytes, reading them stripped never panics
// and never serves more than came; what it serves has nothing left to take
// out; and when the bytes are a metadata-only list answer that
// stripManagedFields strips, it serves a list that decodes as stripManagedFields'
// does.
func FuzzReadStripped(f *testing.F) {
	for _, tc := range stripTestLists(f) {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := joined(iotest.HalfReader(bytes.NewReader(data)), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > len(data) {
			t.Fatalf("%d bytes served as %d", len(data), len(got))
		}
		again, err := joined(bytes.NewReader(got), 0)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("reading the stripped answer again: %v, changed %v", err, !bytes.Equal(again, got))
		}
		want, err := stripManagedFields(bytes.Clone(data))
		if err != nil {
			return
		}
		var wantList metav1.PartialObjectMetadataList
		if decodeAnswer(want, &wantList) != nil {
			return
		}
		var gotList metav1.PartialObjectMetadataList
		if err := decodeAnswer(got, &gotList); err != nil || !reflect.DeepEqual(gotList, wantList) {
			t.Fatalf("decodes to\n%+v (%v)\nwant stripManagedFields'\n%+v", gotList, err, wantList)
		}
	})
}
