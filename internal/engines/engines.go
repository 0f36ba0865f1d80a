// Package engines finds the external engines (promtool, node_exporter,
// ansible, ...) that doctor's integration tests run for real.
//
// Those tests run only when DOCTOR_INTEGRATION is set (.ci/run sets it to 1
// and installs the engines): then an engine that is missing or cannot start
// fails the test (internal/testenv's strict mode). Without it, plain
// `go test ./...` skips them, and the skip says how to run them.
package engines

import (
	"os"
	"os/exec"
	"testing"

	"github.com/tfdoctor/doctor/internal/testenv"
)

// Enabled reports whether DOCTOR_INTEGRATION is set (and not "0").
func Enabled() bool {
	v := os.Getenv("DOCTOR_INTEGRATION")
	return v != "" && v != "0"
}

// Require returns the path of the first of names found on PATH. Without
// DOCTOR_INTEGRATION it skips the test; with it, a missing engine fails
// the test (never skips), naming the Debian package that provides it.
func Require(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	if !Enabled() {
		t.Skipf("integration test: needs %s (Debian package %s); set DOCTOR_INTEGRATION=1 to run it, as .ci/run does", names[0], pkg)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	testenv.Missing(t, "%s is not installed (apt-get install %s)", names[0], pkg)
	return ""
}
