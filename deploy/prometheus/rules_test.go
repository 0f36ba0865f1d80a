// Package prometheus_test checks the Prometheus alerting rules shipped in
// deploy/prometheus against the metrics doctor writes and, with
// DOCTOR_INTEGRATION=1, against Prometheus's own promtool.
package prometheus_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/internal/engines"
)

// TestRulesNameDoctorsMetrics: every doctor_* metric an alert or its test
// uses is one doctor writes (the recorded expositions in report/testdata),
// so renaming a metric cannot silently disarm an alert.
func TestRulesNameDoctorsMetrics(t *testing.T) {
	written := map[string]bool{}
	files, _ := filepath.Glob("../../report/testdata/*.prom")
	if len(files) == 0 {
		t.Fatal("no recorded expositions in report/testdata")
	}
	typeLine := regexp.MustCompile(`(?m)^# TYPE (doctor_[a-z_]+) `)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range typeLine.FindAllStringSubmatch(string(b), -1) {
			written[m[1]] = true
		}
	}
	name := regexp.MustCompile(`\bdoctor_[a-z_]+\b`)
	for _, f := range []string{"doctor.rules.yml", "doctor.rules.test.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range name.FindAllString(string(b), -1) {
			if !written[n] {
				t.Errorf("%s uses %s, which doctor does not write", f, n)
			}
		}
	}
}

func promtool(t *testing.T, args ...string) {
	t.Helper()
	bin := engines.Require(t, "prometheus", "promtool")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

// TestPromtoolCheckRules: the rules file is valid for Prometheus.
func TestPromtoolCheckRules(t *testing.T) { promtool(t, "check", "rules", "doctor.rules.yml") }

// TestPromtoolTestRules: the alerts fire, and stay quiet, as
// doctor.rules.test.yml says (a broken, a healthy and a warning-only
// machine; a stale report; a slow and a failed ladder).
func TestPromtoolTestRules(t *testing.T) { promtool(t, "test", "rules", "doctor.rules.test.yml") }
