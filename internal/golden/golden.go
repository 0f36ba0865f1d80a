// Package golden compares test output with files recorded under testdata,
// and rewrites them when the tests run with -update. Every package's tests
// that record files share this one flag (the README lists the command that
// rewrites them all); review the rewrite with git diff.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the recorded (golden) files under testdata")

// Update reports whether the tests run with -update.
func Update() bool { return *update }

// Check compares got with the file at path; with -update it writes got
// there instead (creating the folder).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update records it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from what is recorded (-recorded +now); if the change is intended, rerun with -update and review the diff:\n%s", path, d)
	}
}
