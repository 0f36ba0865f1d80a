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

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/internal/testenv"
	"github.com/tfdoctor/doctor/verify"
)

// TestVerifyRungChild is not a test: the tests below run the test binary as
// the ladder's rung child, and this is where that child starts.
func TestVerifyRungChild(t *testing.T) {
	if os.Getenv("DOCTOR_VERIFY_CHILD") != "1" {
		t.Skip("runs only as the rung child of another test")
	}
	os.Exit(verify.ChildMain(os.Stdin, os.Stdout))
}

// useTestChild makes the ladder run its rungs in this test binary, and
// builds the fake CUDA libraries of verify/testdata.
func useTestChild(t *testing.T) (string, *Factory) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testenv.Missing(t, "gcc is needed to build the fake CUDA libraries")
	}
	dir := t.TempDir()
	for out, args := range map[string][]string{
		"libcuda.so.1":    {"../../verify/testdata/fakecuda.c"},
		"libcublas.so.12": {"../../verify/testdata/fakecublas.c", "-DFAKE_MAJOR=12"},
	} {
		cmd := exec.Command("gcc", append([]string{"-shared", "-fPIC", "-o", filepath.Join(dir, out)}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
	}
	f := NewFactory(nil)
	f.RungChild = func() []string { return []string{os.Args[0], "-test.run=^TestVerifyRungChild$"} }
	t.Setenv("DOCTOR_VERIFY_CHILD", "1")
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	os.Unsetenv("CUDA_VISIBLE_DEVICES")
	return dir, f
}

type jsonReport struct {
	Status    string `json:"status"`
	RootCause *struct {
		ID    string `json:"id"`
		Cause string `json:"cause"`
	} `json:"root_cause"`
	Findings []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
		Cause    string `json:"cause"`
	} `json:"findings"`
	Verification *host.Verification `json:"verification"`
}

func TestVerifyCommand(t *testing.T) {
	dir, f := useTestChild(t)
	common := []string{"verify", "--libcuda", filepath.Join(dir, "libcuda.so.1"), "--libcublas", filepath.Join(dir, "libcublas.so.12"),
		"--size", "32", "--runs", "2", "--framework", "none", "--format", "json"}

	code, out, errOut := runDoctorWith(t, f, "", common...)
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, out, errOut)
	}
	if code != 0 || r.Status != "ok" || r.Verification == nil || len(r.Verification.Rungs) != 2 {
		t.Fatalf("exit %d, report %+v\n%s", code, r, errOut)
	}
	for _, g := range r.Verification.Rungs {
		if g.Status != host.RungPass {
			t.Errorf("rung %s: %+v", g.Name, g)
		}
	}
	// The text report's footer names doctor verify, not the diagnosis.
	_, text, _ := runDoctorWith(t, f, "", append(append([]string{}, common[:len(common)-2]...), "--format", "text")...)
	if want := "Details: doctor verify -v. For a support ticket: doctor verify --format markdown."; !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
	ids := map[string]string{}
	for _, f := range r.Findings {
		ids[f.ID] = f.Severity
	}
	if ids["runtime.driver_compute"] != "ok" || ids["runtime.cublas_gemm"] != "ok" {
		t.Errorf("findings %v", ids)
	}
	for id := range ids {
		if !strings.HasPrefix(id, "runtime.") && !strings.HasPrefix(id, "perf.") {
			t.Errorf("verify reports only the runtime and performance links, got %s", id)
		}
	}

	// A hidden GPU: the driver rung names the cause, exit 1.
	t.Setenv("CUDA_VISIBLE_DEVICES", "-1")
	t.Setenv("FAKECUDA_INIT", "100")
	code, out, _ = runDoctorWith(t, f, "", common...)
	r = jsonReport{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if code != 1 || r.RootCause == nil || r.RootCause.Cause != "cuda_visible_devices_hides_gpu" || r.RootCause.ID != "runtime.driver_compute" {
		t.Errorf("exit %d, root cause %+v", code, r.RootCause)
	}

	// Text, with -v: each rung on stderr as it ends.
	code, out, errOut = runDoctorWith(t, f, "", append(common[:len(common)-2], "-v")...)
	if code != 1 || !strings.Contains(out, "Verification ladder") || !strings.Contains(out, "[cuda_visible_devices_hides_gpu]") || !strings.Contains(errOut, "doctor: rung driver    fail") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestVerifyUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"verify", "--size", "4"}, "size 4 is out of range"},
		{[]string{"verify", "--runs", "0", "--size", "7"}, "out of range"},
		{[]string{"verify", "--framework", "mxnet"}, `unknown framework "mxnet"`},
		{[]string{"verify", "--rung", "kernel"}, `unknown rung "kernel"`},
		{[]string{"verify", "--quick"}, "--quick skips the ladder"},
		{[]string{"verify", "--from", "x.json"}, "--from does not apply to doctor verify; it is taken by doctor"},
		{[]string{"verify", "--root", "/tmp"}, "--root does not apply"},
		{[]string{"verify", "now"}, "verify takes no arguments"},
		{[]string{"verify", "--rung-timeout", "-1s"}, "--rung-timeout must be positive"},
		{[]string{"verify", "--python", "/nonexistent/python3"}, "no such interpreter"},
		{[]string{"verify", "--format", "yaml"}, "unknown --format"},
		{[]string{"verify", "--libcuda", "/etc/passwd"}, "--libcuda /etc/passwd: not a loadable library"},
		{[]string{"verify", "--libcuda", "/nonexistent/libcuda.so.1"}, "--libcuda /nonexistent/libcuda.so.1: no such file"},
		{[]string{"verify", "--libcublas", "/etc"}, "--libcublas /etc: not a loadable library"},
	}
	for _, c := range cases {
		code, out, errOut := runDoctor(t, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.msg) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", c.args, code, errOut, out)
		}
	}
}

func TestVerifyRungCommandBadInput(t *testing.T) {
	ios, in, out, _ := iostreams.Test()
	in.WriteString("{not json\n")
	if code := Main(context.Background(), []string{"doctor", "verify", verify.ChildCommandName}, ios); code != 2 || !strings.Contains(out.String(), "expects a JSON request") {
		t.Errorf("exit %d, %q", code, out.String())
	}
}

// Plain doctor runs the ladder into the snapshot unless --quick.
func TestDiagnoseRunsLadderUnlessQuick(t *testing.T) {
	_, f := useTestChild(t)
	f.GPU = func() host.GPUSource { return noGPU{} }
	t.Setenv("PATH", "/nonexistent") // no python3: the framework rung is skipped quickly

	_, out, _ := runDoctorWith(t, f, "", "--quick", "--format", "json")
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Verification != nil {
		t.Errorf("--quick ran the ladder: %+v", r.Verification)
	}
	_, out, _ = runDoctorWith(t, f, "", "--format", "json", "--python", "no-such-python3")
	r = jsonReport{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Verification == nil || len(r.Verification.Rungs) != 3 {
		t.Fatalf("no ladder: %+v", r.Verification)
	}
}

type noGPU struct{}

func (noGPU) Read(ctx context.Context) (host.NVML, error) {
	return host.NVML{Error: "ERROR_LIBRARY_NOT_FOUND"}, nil
}

// TestTimeoutBoundsTheWholeRun: --timeout bounds the run, the ladder
// included. The examined Python is a real script that hangs (with a child
// of its own); doctor --timeout 4s ends soon after 4 s, the framework rung
// is reported as cut short (nothing proved; not a hang verdict), no process
// is left behind, and standard error said what doctor was waiting for.
func TestTimeoutBoundsTheWholeRun(t *testing.T) {
	dir := t.TempDir()
	marker := "3599." + strconv.Itoa(os.Getpid()) + "7" // unique: other tests on this machine sleep too
	pids := filepath.Join(dir, "pids")
	py := filepath.Join(dir, "bin", "python3")
	if err := os.MkdirAll(filepath.Dir(py), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho $$ >> " + pids + "\nsleep " + marker + " &\necho $! >> " + pids + "\nwait\n"
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f := NewFactory(nil)
	f.RungChild = func() []string { return []string{os.Args[0], "-test.run=^TestVerifyRungChild$"} }
	f.GPU = func() host.GPUSource { return noGPU{} }
	t.Setenv("DOCTOR_VERIFY_CHILD", "1")

	start := time.Now()
	_, out, errOut := runDoctorWith(t, f, "", "--python", py, "--timeout", "4s", "--format", "json")
	elapsed := time.Since(start)
	t.Logf("doctor --timeout 4s with a hanging Python ended after %s", elapsed.Round(time.Millisecond))
	if elapsed > 7*time.Second {
		t.Errorf("doctor ran %s with --timeout 4s", elapsed)
	}
	var r struct {
		Verification *struct {
			Rungs []struct {
				Name, Status, Summary string
				TimedOut              bool `json:"timed_out"`
			}
		}
		Findings []struct{ ID, Cause, Severity string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Verification == nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	for _, g := range r.Verification.Rungs {
		if g.Name == "framework" && (g.Status != "skip" || !g.TimedOut || !strings.Contains(g.Summary, "--timeout")) {
			t.Errorf("framework rung %+v, want a skip cut short by --timeout", g)
		}
	}
	for _, f := range r.Findings {
		if f.Cause == "driver_unresponsive" {
			t.Errorf("%s: a rung cut short by --timeout read as a hung driver", f.ID)
		}
	}
	if !strings.Contains(errOut, "waiting for ") {
		t.Errorf("standard error does not say what doctor waited for:\n%s", errOut)
	}
	time.Sleep(300 * time.Millisecond)
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	b, _ := os.ReadFile(pids)
	for _, p := range strings.Fields(string(b)) {
		if pid, _ := strconv.Atoi(p); pid > 0 && alive(pid) {
			t.Errorf("PID %d of the hanging Python still runs", pid)
		}
	}
}

// TestVerifyWithoutEvidenceIsNotAPass: on a machine where no rung can run
// (here: only the framework rung, and the examined Python has no
// framework, or there is no Python at all), doctor verify never says the
// GPU works: the GPU was not verified, exit 1.
func TestVerifyWithoutEvidenceIsNotAPass(t *testing.T) {
	f := NewFactory(nil)
	f.GPU = func() host.GPUSource { return noGPU{} }
	empty := t.TempDir() // a venv-like folder whose python3 has nothing installed
	py := filepath.Join(empty, "bin", "python3")
	if real, err := exec.LookPath("python3"); err == nil {
		if out, err := exec.Command(real, "-m", "venv", "--without-pip", empty).CombinedOutput(); err != nil {
			t.Logf("python3 -m venv: %v\n%s", err, out)
			py = ""
		}
	} else {
		py = ""
	}
	for _, args := range [][]string{
		{"verify", "--rung", "framework", "--python", "no-such-python3"},
		{"verify", "--rung", "framework", "--python", py},
	} {
		if args[len(args)-1] == "" {
			continue
		}
		code, out, errOut := runDoctorWith(t, f, "", args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1\n%s\n%s", args, code, out, errOut)
		}
		if strings.Contains(out, "No problem found") || strings.Contains(out, "should see the GPU") {
			t.Errorf("%v claims the GPU works:\n%s", args, out)
		}
		if !strings.Contains(out, "The GPU was not verified") {
			t.Errorf("%v does not say the GPU was not verified:\n%s", args, out)
		}
	}
}
