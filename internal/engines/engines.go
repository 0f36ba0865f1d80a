// Package engines finds the external engines (promtool, node_exporter,
// ansible, ...) that doctor's integration tests run for real.
//
// The tests run when DOCTOR_INTEGRATION=1 (.ci/run sets it and installs
// the engines): then an engine that is missing or cannot start fails the
// test. Without it (plain `go test ./...` on a fresh machine) they are
// skipped, and the skip says how to run them.
package engines

import (
	"os"
	"os/exec"
	"testing"
)

// Enabled reports whether DOCTOR_INTEGRATION=1.
func Enabled() bool { return os.Getenv("DOCTOR_INTEGRATION") == "1" }

// Require returns the path of the first of names found on PATH. Without
// DOCTOR_INTEGRATION=1 it skips the test; with it, a missing engine fails
// the test (never skips), naming the Debian package that provides it.
func Require(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	if !Enabled() {
		t.Skipf("integration test: needs %s (Debian package %s); run with DOCTOR_INTEGRATION=1 as .ci/run does", names[0], pkg)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatalf("DOCTOR_INTEGRATION=1 but %s is not installed (apt-get install %s)", names[0], pkg)
	return ""
}
