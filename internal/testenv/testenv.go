// Package testenv decides what a test does when a tool it needs (python3,
// its venv module, gcc, bash, ldconfig) is missing: on a developer's
// machine it skips, saying why; in CI (CI=true, as CI services set it, or
// DOCTOR_INTEGRATION=1) it fails, so that a CI machine without the tools
// never passes by skipping. .ci/run installs them.
package testenv

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// Strict reports whether a missing tool fails the test instead of skipping it.
func Strict() bool {
	if v := os.Getenv("DOCTOR_INTEGRATION"); v != "" && v != "0" {
		return true
	}
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// Missing skips the test (or, when Strict, fails it) because a tool it
// needs is not there.
func Missing(t testing.TB, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...)
	if Strict() {
		t.Fatalf("%s (required: CI=true or DOCTOR_INTEGRATION is set; .ci/run installs it)", msg)
	}
	t.Skip(msg)
}
