// Package golden compares test output with files under testdata/. Run the tests
// with -update to rewrite the files, then review the diff:
//
//	go test ./cmd/ -run TestGetRun -update
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// The flag may already be defined by a test file of the package under test.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

// Updating reports whether -update was given.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Assert compares got with the file at path, or rewrites the file under -update.
func Assert(t testing.TB, path, got string) {
	t.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}
