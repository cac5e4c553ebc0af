package where

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"k8s.io/client-go/openapi/openapitest"
)

// TestObjectMembers: objectMembers splits an object into the bytes of its
// members as encoding/json does, the last of a repeated name winning, and
// refuses what is not an object or does not end as one.
func TestObjectMembers(t *testing.T) {
	for _, doc := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a" : "x\"}{[\\" , "b":[1,{"c":"]"}], "d": {"e": null}}`,
		`{"a":true,"a":false}`, `{"\u00e9":-1.5e3}`, "{\n\t\"a\"\r\n:\t[ ]\n}\n",
	} {
		want := map[string]json.RawMessage{}
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got, err := objectMembers([]byte(doc))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, %v; want %q", doc, got, err, want)
		}
	}
	for _, doc := range []string{
		``, `[]`, `"a"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1`, `{"a":[}`, `{"a":{]}`,
		`{"a":"b}`, `{"a":1} x`, `{a:1}`, `{"a":1 "b":2}`, `{"a":[1,2}`,
	} {
		if got, err := objectMembers([]byte(doc)); err == nil {
			t.Errorf("%q was split: %q", doc, got)
		}
	}
}

// TestComponentSchemas: the schemas of a real document are those
// encoding/json reads.
func TestComponentSchemas(t *testing.T) {
	gv, ok := mustPaths(t)["api/v1"]
	if !ok {
		t.Fatal("no api/v1 document")
	}
	doc, err := gv.Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	got, err := componentSchemas(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 100 || !reflect.DeepEqual(got, want.Components.Schemas) {
		t.Errorf("%d schemas, want the %d encoding/json reads, the same", len(got), len(want.Components.Schemas))
	}
	for _, doc := range []string{`{}`, `{"components":null}`, `{"components":{}}`, `{"components":{"schemas":null}}`} {
		if got, err := componentSchemas([]byte(doc)); err != nil || len(got) != 0 {
			t.Errorf("%s: %v, %v; want no schemas", doc, got, err)
		}
	}
	for _, doc := range []string{`{"components":[]}`, `{"components":{"schemas":[]}}`, `{"components":{"schemas":{"a":}}}`} {
		if _, err := componentSchemas([]byte(doc)); err == nil {
			t.Errorf("%s was read", doc)
		}
	}
}

func mustPaths(t testing.TB) map[string]interface {
	Schema(string) ([]byte, error)
} {
	t.Helper()
	paths, err := openapitest.NewEmbeddedFileClient().Paths()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]interface {
		Schema(string) ([]byte, error)
	}{}
	for k, v := range paths {
		out[k] = v
	}
	return out
}

// FuzzObjectMembers: whatever the bytes, objectMembers never panics, and
// splits every JSON object as encoding/json does.
func FuzzObjectMembers(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":{"b":[1,"]}"]}}`, `{"a":"\\\""}`, `[1]`, `{"a":1,"a":2}`} {
		f.Add([]byte(seed))
	}
	if doc, err := os.ReadFile("testdata/pod-realistic.json"); err == nil {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := objectMembers(data)
		want := map[string]json.RawMessage{}
		if json.Unmarshal(data, &want) != nil {
			return
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: split to %q, %v; encoding/json reads %q", data, got, err, want)
		}
	})
}
