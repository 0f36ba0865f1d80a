package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/rules"
	"github.com/tfdoctor/doctor/watch"
)

// oneGPU is a GPU whose only process is busyPID, 95% busy.
type oneGPU struct{ busyPID int }

func (g oneGPU) Open() (watch.Inventory, error) {
	return watch.Inventory{Driver: "580.159.03", GPUs: []watch.GPUInfo{{Index: 0, Name: "NVIDIA H200", Minor: 0, ComputeCapability: "9.0", MemoryTotalMiB: 143771}}}, nil
}

func (g oneGPU) Sample() ([]watch.GPUSample, error) {
	u, m := 95, uint64(8192)
	s := watch.GPUSample{Index: 0, Util: &u, MemUsedMiB: &m, ProcsKnown: true}
	if g.busyPID > 0 {
		s.Procs = []watch.GPUProc{{PID: g.busyPID, UsedMiB: 8000}}
	}
	return []watch.GPUSample{s}, nil
}

func (oneGPU) Close() {}

// withGPUs is a factory whose doctor watch samples g.
func withGPUs(g watch.GPUs) *Factory {
	f := NewFactory(nil)
	f.WatchGPUs = func() watch.GPUs { return g }
	return f
}

func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// runCLI runs doctor with no standard input.
func runCLI(args ...string) (int, string, string) { return runCLIWith(NewFactory(nil), args...) }

// runCLIWith is runCLI with the dependencies of f.
func runCLIWith(f *Factory, args ...string) (int, string, string) {
	ios, _, out, errOut := iostreams.Test()
	f.IOStreams = ios
	code := MainWith(context.Background(), append([]string{"doctor"}, args...), f)
	return code, out.String(), errOut.String()
}

func TestWatchUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"watch", "--format", "yaml"}, `unknown --format "yaml"`},
		{[]string{"watch", "--duration", "0s"}, "--duration must be positive"},
		{[]string{"watch", "--duration", "1s", "--interval", "2s"}, "longer than --duration"},
		{[]string{"watch", "--interval", "1ms"}, "--interval must be at least"},
		{[]string{"watch", "--pid", "0"}, "--pid must be a positive process ID"},
		{[]string{"watch", "--pid", "-5"}, "--pid must be a positive process ID"},
		{[]string{"watch", "--pid", strconv.Itoa(1 << 30)}, "no process with PID 1073741824"},
		{[]string{"watch", "--pid", "abc"}, "invalid value"},
		{[]string{"watch", "extra"}, "watch takes no arguments"},
		{[]string{"watch", "--samples", filepath.Join(dir, "missing", "s.json")}, "does not exist"},
		{[]string{"watch", "--samples", dir}, "it is a folder"},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.msg) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and %q", tt.args, code, errOut, out, tt.msg)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: want a short message, got %q", tt.args, errOut)
		}
	}
}

// A CPU-only job: exit 1, JSON report with gpu_not_used as the root
// cause, samples written, plain live lines on stderr.
func TestWatchCPUOnlyJobJSON(t *testing.T) {
	f := withGPUs(oneGPU{})
	pid := sleeper(t)
	samples := filepath.Join(t.TempDir(), "samples.json")
	code, out, errOut := runCLIWith(f, "watch", "--pid", strconv.Itoa(pid), "--duration", "900ms", "--interval", "300ms", "--format", "json", "--samples", samples)
	if code != exitFindings {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var r rules.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if r.Schema != rules.ReportSchema || r.RootCause == nil || r.RootCause.Cause != "gpu_not_used" || r.Source != "watch" {
		t.Errorf("report: schema %q, root %+v, source %q", r.Schema, r.RootCause, r.Source)
	}
	if n := strings.Count(errOut, "\nwatch "); n != 3 {
		t.Errorf("stderr has %d sample lines, want 3:\n%s", n, errOut)
	}
	var s watch.Series
	b, err := os.ReadFile(samples)
	if err != nil || json.Unmarshal(b, &s) != nil || len(s.Samples) != 3 || s.PID != pid {
		t.Errorf("samples file: %v, %d samples", err, len(s.Samples))
	}
}

// The same job on the GPU is busy: exit 0; the text report starts with the
// verdict; --quiet keeps stderr empty; the app-level --format is honoured.
func TestWatchBusyText(t *testing.T) {
	pid := sleeper(t)
	f := withGPUs(oneGPU{busyPID: pid})
	code, out, errOut := runCLIWith(f, "watch", "--pid", strconv.Itoa(pid), "--duration", "900ms", "--interval", "300ms", "--quiet", "--no-color")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, "✓ GPU 0 busy: kernels ran 95% of the time") {
		t.Errorf("text report starts %q", strings.SplitN(out, "\n", 2)[0])
	}
	// The verdict is said once, what was watched under it, and the
	// footer names doctor watch, not the diagnosis.
	if n := strings.Count(out, "✓ GPU 0 busy: kernels ran"); n != 1 || strings.Contains(out, "doctor watch:") {
		t.Errorf("the verdict appears %d times:\n%s", n, out)
	}
	if lines := strings.Split(out, "\n"); len(lines) < 2 || !strings.HasPrefix(lines[1], "  Watched PID "+strconv.Itoa(pid)) {
		t.Errorf("second line %q", lines[1])
	}
	if want := "Details: doctor watch -v --pid " + strconv.Itoa(pid) + ". For a support ticket: doctor watch --format markdown --pid " + strconv.Itoa(pid) + "."; !strings.Contains(out, want) {
		t.Errorf("footer lacks %q:\n%s", want, out)
	}
	code, out, _ = runCLIWith(f, "--format", "json", "watch", "--pid", strconv.Itoa(pid), "--duration", "600ms", "--interval", "300ms", "-q")
	if code != exitOK || !strings.HasPrefix(out, "{") {
		t.Errorf("doctor --format json watch: exit %d, stdout %.40q", code, out)
	}
}

func TestWatchPrometheusAndMarkdown(t *testing.T) {
	pid := sleeper(t)
	f := withGPUs(oneGPU{busyPID: pid})
	code, out, _ := runCLIWith(f, "watch", "--pid", strconv.Itoa(pid), "--duration", "600ms", "--interval", "200ms", "-q", "--format", "prometheus")
	if code != exitOK || !strings.Contains(out, "doctor_status 0") || !strings.Contains(out, `doctor_watch_gpu_utilization_percent{gpu="0",stat="mean"} 95`) {
		t.Errorf("prometheus: exit %d\n%s", code, out)
	}
	code, out, _ = runCLIWith(f, "watch", "--pid", strconv.Itoa(pid), "--duration", "600ms", "--interval", "200ms", "-q", "--format", "markdown")
	if code != exitOK || !strings.Contains(out, "watch.busy") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
}

// Ctrl-C ends early and still prints the report.
func TestWatchInterrupted(t *testing.T) {
	pid := sleeper(t)
	f := withGPUs(oneGPU{busyPID: pid})
	ios, _, out, _ := iostreams.Test()
	f.IOStreams = ios
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	code := MainWith(ctx, []string{"doctor", "watch", "--pid", strconv.Itoa(pid), "--duration", "1m", "--interval", "200ms", "-q", "-f", "json"}, f)
	var r rules.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v", code, err)
	}
	found := false
	for _, fd := range r.Findings {
		found = found || (fd.ID == watch.IDSummary && fd.Evidence["ended"] == "interrupted")
	}
	if !found {
		t.Error("the report does not say the watch was interrupted")
	}
}

// doctor rules documents the verdicts and the new cause label.
func TestRulesListWatch(t *testing.T) {
	code, out, _ := runCLI("rules")
	for _, want := range []string{"watch.input_pipeline  (watch, link performance)", "gpu_underutilized", "watch.gpu_not_used"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("doctor rules lacks %q", want)
		}
	}
}
