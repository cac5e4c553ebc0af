package wire

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// serverTable is a table as the API server writes it: pods without their
// objects, and rows with a condition and an object.
const serverTable = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"242625","continue":"x"},` +
	`"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"Name must be unique.\n\nMore: \u003chttps://k8s.io\u003e","priority":0},{"name":"Restarts","type":"integer","format":"","description":"","priority":1}],` +
	`"rows":[{"cells":["web-0","2/2","Running","11 (3m ago)","11m","10.244.29.117","node-0027","\u003cnone\u003e",null,3,-1.5,1e3,9223372036854775808,true,false,"caf\u00e9 ☕"],"object":null},` +
	`{"cells":[],"conditions":[{"type":"Completed","status":"True","reason":"Done","message":"ok"}],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web-1","namespace":"shop","uid":"u-1"}}},` +
	`{"cells":[{"a":[1,2.5,"x"]},[true,null]]}]}`

// TestDecodeTableReadsTheServersFormByHand checks that the API server's form
// is read by hand, not handed to the general decoder, and to the same table.
func TestDecodeTableReadsTheServersFormByHand(t *testing.T) {
	for _, in := range []string{serverTable, " \n" + serverTable + "\n ", `{"kind":"Table","rows":null}`, `{"rows":[],"kind":"Table"}`} {
		fast, err := decodeTableFast([]byte(in))
		if err != nil {
			t.Fatalf("decodeTableFast(%.60q): %v", in, err)
		}
		want, err := decodeTableReflect([]byte(in))
		if err != nil {
			t.Fatalf("decodeTableReflect(%.60q): %v", in, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Errorf("decodeTableFast(%.60q) =\n%#v\nwant\n%#v", in, fast, want)
		}
	}
	tbl, err := DecodeTable([]byte(serverTable))
	if err != nil {
		t.Fatal(err)
	}
	cells := tbl.Rows[0].Cells
	for i, want := range []any{"web-0", nil, int64(3), float64(-1.5), float64(1000), float64(9223372036854775808), true, "café ☕"} {
		at := []int{0, 8, 9, 10, 11, 12, 13, 15}[i]
		if !reflect.DeepEqual(cells[at], want) {
			t.Errorf("cell %d is %#v (%T), want %#v (%T)", at, cells[at], cells[at], want, want)
		}
	}
	if got := string(tbl.Rows[1].Object.Raw); !strings.Contains(got, `"name":"web-1"`) {
		t.Errorf("row 1's object is %q", got)
	}
}

// TestDecodeTableAsTheGeneralDecoder checks inputs off the API server's form
// and malformed ones: DecodeTable reads them as the general decoder does.
func TestDecodeTableAsTheGeneralDecoder(t *testing.T) {
	for _, in := range decodeTableSeeds {
		checkDecodeTable(t, []byte(in))
	}
}

var decodeTableSeeds = []string{
	serverTable,
	`{"kind":"PodList","items":[]}`,
	`{"kind":"Table","rows":[{"cells":["a"]}],"rows":[{"conditions":[]}]}`,
	`{"kind":"Table","rows":[{"cells":["a"],"cells":["b"]}]}`,
	`{"kind":"Table","r\u006fws":[{"cells":["a"]}]}`,
	`{"kind":"Table","Rows":[{"cells":["a"]}]}`,
	`{"KIND":"Table"}`,
	`{"kind":"Table","rows":{}}`,
	`{"kind":"Table","rows":[{"cells":"a"}]}`,
	`{"kind":"Table","rows":[{"cells":["a\x01"]}]}`,
	`{"kind":"Table","rows":[{"cells":["\ud800 \xff x"]}]}`,
	`{"kind":"Table","rows":[{"cells":[01]}]}`,
	`{"kind":"Table","rows":[{"cells":[1.]}]}`,
	`{"kind":"Table","rows":[{"cells":[-]}]}`,
	`{"kind":"Table","rows":[{"cells":[1e400]}]}`,
	`{"kind":"Table","rows":[{"cells":[tru]}]}`,
	`{"kind":"Table","rows":[{"cells":[nul`,
	`{"kind":"Table","rows":[{"cells":["a",]}]}`,
	`{"kind":"Table","rows":[{"object":{"a":]}}]}`,
	`{"kind":"Table","rows":[{"object":[}]}`,
	`{"kind":"Table","extra":{"a":[1,{"b":"}"}]},"rows":[]}`,
	`{"kind":"Table","extra":{"a":[1,{"b":"}"]}],"rows":[]}`,
	`{"kind":"Table"} x`,
	`{"kind":"Table"}{}`,
	`{"kind":null}`,
	`{"kind":"Table","metadata":{"resourceVersion":5}}`,
	`{"kind":"Table","columnDefinitions":[{"name":"A","priority":"x"}]}`,
	`{"kind":"Table","rows":[{"conditions":null,"object":null,"cells":null}]}`,
	`{"kind":"Table","rows":[null]}`,
	`{"kind":"Table","rows":[{"cells":["a"] , "x" : [ 1 , 2 ] } ] }`,
	``,
	`{"kind":"Table","rows":[{"cells":["\u003cnone\u003e","a\"b\\c\/d\b\f\n\r\t","\ud83d\ude00","\ud83d","\u00","\u00zz","a\qb","\u0000\u001f","\u00e9\xff"]}]}`,
	`null`,
	`[]`,
	`"Table"`,
}

// checkDecodeTable checks DecodeTable against the general decoder on in, and
// that the hand-read, where it reads in, reads it alike.
func checkDecodeTable(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := decodeTableReflect(in)
	got, err := DecodeTable(in)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("DecodeTable(%q): error %v, the general decoder's %v", in, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeTable(%q) =\n%#v\nthe general decoder's\n%#v", in, got, want)
	}
	fast, fastErr := decodeTableFast(in)
	switch {
	case errors.Is(fastErr, errUnusual):
	case (fastErr != nil) != (wantErr != nil):
		t.Fatalf("decodeTableFast(%q): error %v, the general decoder's %v", in, fastErr, wantErr)
	case fastErr == nil && !reflect.DeepEqual(fast, want):
		t.Fatalf("decodeTableFast(%q) =\n%#v\nthe general decoder's\n%#v", in, fast, want)
	}
}

func FuzzDecodeTable(f *testing.F) {
	for _, s := range decodeTableSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecodeTable(t, in)
	})
}

// BenchmarkDecodeTable reads a table of 10,000 pods as the API server writes
// it (includeObject=None), by hand and through the general decoder.
func BenchmarkDecodeTable(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"1"},"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"","priority":0}],"rows":[`)
	for i := range 10000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"cells":["auth-%d-f4g4mptpmq-gdlwx","2/2","Running","11 (3m ago)","11m","10.244.29.%d","bench-node-%04d","<none>","<none>"],"object":null}`, i, i%250, i%1000)
	}
	sb.WriteString("]}")
	data := []byte(sb.String())
	for _, c := range []struct {
		name string
		read func([]byte) error
	}{
		{"hand", func(d []byte) error { _, err := decodeTableFast(d); return err }},
		{"general", func(d []byte) error { _, err := decodeTableReflect(d); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := c.read(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
