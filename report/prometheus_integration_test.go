package report_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/internal/engines"
	"github.com/tfdoctor/doctor/report"
)

// promtoolCheck runs `promtool check metrics` on an exposition.
func promtoolCheck(t *testing.T, promtool, name string, b []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics %s: %v\n%s", name, err, out)
	}
}

// TestPromtoolCheckMetrics: every recorded exposition doctor writes (the
// scenarios' golden files, the ladder, doctor watch) and one with hostile
// GPU names pass Prometheus's own linter.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := engines.Require(t, "prometheus", "promtool")
	files, _ := filepath.Glob("testdata/*.prom")
	more, _ := filepath.Glob("../watch/testdata/*.prom")
	files = append(files, more...)
	if len(files) < 6 {
		t.Fatalf("only %d recorded expositions found", len(files))
	}
	for _, f := range files {
		promtoolCheck(t, promtool, f, readFile(t, f))
	}
	var b bytes.Buffer
	if err := report.Prometheus(&b, hostileReport()); err != nil {
		t.Fatal(err)
	}
	promtoolCheck(t, promtool, "hostile GPU names", b.Bytes())
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
