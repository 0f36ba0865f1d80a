package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
)

// logCase is a log under testdata/explain/logs/<expected cause>/; the
// folder "none" expects no root cause.
type logCase struct {
	path, want string
}

func logCases(t *testing.T) []logCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/explain/logs/*/*.log")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test logs: %v", err)
	}
	var out []logCase
	for _, p := range paths {
		out = append(out, logCase{path: p, want: filepath.Base(filepath.Dir(p))})
	}
	return out
}

func explainFile(t *testing.T, path string) *Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Explain(f, ExplainOptions{Version: "test"})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// TestLogs: every realistic log (written from the message texts of
// knowledge.md sections 6 and 7) gets the root cause its folder names.
func TestLogs(t *testing.T) {
	for _, c := range logCases(t) {
		t.Run(strings.TrimPrefix(c.path, "testdata/explain/logs/"), func(t *testing.T) {
			r := explainFile(t, c.path)
			if got := topCause(r); got != c.want {
				var b strings.Builder
				for _, f := range r.Findings {
					b.WriteString("\n  " + f.ID + " " + string(f.Severity) + " " + string(f.Link) + " " + f.Cause + ": " + f.Title)
				}
				t.Errorf("root cause %s, want %s; findings:%s", got, c.want, b.String())
			}
		})
	}
}

// TestFrameworkLogHook: the runtime checks read a failed framework probe's
// stderr with explain's engine.
func TestFrameworkLogHook(t *testing.T) {
	if checks.ExplainFrameworkLog == nil {
		t.Fatal("package rules did not set checks.ExplainFrameworkLog")
	}
	cause, _, ok := checks.ExplainFrameworkLog("2024-01-01 E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:423] Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version.")
	if !ok || cause != "cudnn_version_mismatch" {
		t.Errorf("got %q %v", cause, ok)
	}
}
