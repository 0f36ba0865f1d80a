package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
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

// TestFrameworkLogStep: after the checks, Evaluate reads a failed
// framework probe's stderr with explain's engine (an explicit step, no
// hook): the generic cause of the runtime check becomes the log's.
func TestFrameworkLogStep(t *testing.T) {
	stderr := "2024-01-01 E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:423] Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version."
	for _, c := range []struct {
		stderr, want, ladder string
	}{
		{stderr, "cudnn_version_mismatch", "gpu_compute_failed"},
		{"", "gpu_compute_failed", ""},
		{"nothing anyone recognises\n", "gpu_compute_failed", ""},
	} {
		s := &host.Snapshot{Verification: &host.Verification{Rungs: []host.Rung{{Name: host.RungFramework, Status: host.RungFail,
			Cause: "gpu_compute_failed", Summary: "TensorFlow failed at matmul", Stderr: c.stderr}}}}
		r, err := Evaluate(s, Options{Only: []string{checks.VerifyFramework.ID}})
		if err != nil {
			t.Fatal(err)
		}
		var f *checks.Finding
		for i := range r.Findings {
			if r.Findings[i].Check == checks.VerifyFramework.ID {
				f = &r.Findings[i]
			}
		}
		if f == nil || f.Cause != c.want || (c.ladder != "" && f.Evidence["ladder_cause"] != c.ladder) {
			t.Errorf("stderr %.30q: %+v", c.stderr, f)
		}
	}
}
