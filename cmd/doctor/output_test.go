package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withoutClock drops the lines that hold the time of the run and how long
// explain took, the things two runs of the same report differ in.
func withoutClock(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "doctor_last_run_timestamp_seconds ") && !strings.Contains(l, `collector="explain"`) && !strings.Contains(l, `"explain": `) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// checkWritten: the file holds what standard output would have held,
// standard output is empty, the mode is 0644, and no temporary file is
// left beside it.
func checkWritten(t *testing.T, name, path, stdout, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if withoutClock(string(b)) != withoutClock(want) || want == "" {
		t.Errorf("%s: -o file differs from standard output:\n%s\n---\n%s", name, b, want)
	}
	if stdout != "" {
		t.Errorf("%s: with -o, standard output should be empty, got %q", name, stdout)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("%s: mode %v, want 0644", name, st.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".doctor-") {
			t.Errorf("%s: temporary file %s left behind", name, e.Name())
		}
	}
}

// TestOutputEveryFormat: -o FILE works for every format of the diagnosis,
// wherever it is written on the command line.
func TestOutputEveryFormat(t *testing.T) {
	for _, format := range formats {
		dir := t.TempDir()
		path := filepath.Join(dir, "report."+format)
		args := []string{"--from", scenarioSnap("no-driver"), "--format", format}
		code, want, _ := runDoctor(t, "", args...)
		if code != exitFindings {
			t.Fatalf("%s: exit %d", format, code)
		}
		code, out, errOut := runDoctor(t, "", append(args, "-o", path)...)
		if code != exitFindings {
			t.Fatalf("%s -o: exit %d: %s", format, code, errOut)
		}
		checkWritten(t, format, path, out, want)
		// Again, before the other flags, over the file just written.
		code, out, _ = runDoctor(t, "", append([]string{"--output=" + path}, args...)...)
		if code != exitFindings {
			t.Fatalf("%s --output=: exit %d", format, code)
		}
		checkWritten(t, format+" (rewritten)", path, out, want)
	}
}

// TestOutputEveryCommand: explain, verify and watch take -o as well.
func TestOutputEveryCommand(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "tf.log")
	os.WriteFile(logFile, []byte("2024-01-01 12:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"), 0o644)
	dir := t.TempDir()
	for _, format := range formats {
		path := filepath.Join(dir, "explain."+format)
		code, want, _ := runDoctor(t, "", "explain", logFile, "--format", format)
		code2, out, errOut := runDoctor(t, "", "explain", "-o", path, logFile, "--format", format)
		if code != code2 {
			t.Errorf("explain %s: exit %d without -o, %d with: %s", format, code, code2, errOut)
		}
		checkWritten(t, "explain "+format, path, out, want)
	}

	pid := sleeper(t)
	gpus := withGPUs(oneGPU{busyPID: pid})
	path := filepath.Join(dir, "watch.prom")
	code, out, errOut := runCLIWith(gpus, "watch", "--pid", strconv.Itoa(pid), "--duration", "400ms", "--interval", "200ms", "-q", "--format", "prometheus", "-o", path)
	b, _ := os.ReadFile(path)
	if code != exitOK || out != "" || !strings.Contains(string(b), `doctor_watch_gpu_utilization_percent{gpu="0",stat="mean"} 95`) {
		t.Errorf("watch -o: exit %d, stdout %q, stderr %s, file:\n%s", code, out, errOut, b)
	}

	vdir, vf := useTestChild(t)
	path = filepath.Join(dir, "verify.json")
	code, out, errOut = runDoctorWith(t, vf, "", "verify", "--libcuda", filepath.Join(vdir, "libcuda.so.1"), "--libcublas", filepath.Join(vdir, "libcublas.so.12"),
		"--size", "32", "--runs", "2", "--framework", "none", "--format", "json", "-o", path)
	b, _ = os.ReadFile(path)
	if code != exitOK || out != "" || !strings.Contains(string(b), `"doctor.report/v1"`) {
		t.Errorf("verify -o: exit %d, stdout %q, stderr %s, file:\n%s", code, out, errOut, b)
	}
}

// TestOutputBadPath: a folder, a missing folder, and a run that fails
// before its report leave everything as it was (exit 2).
func TestOutputBadPath(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "doctor.prom")
	os.WriteFile(old, []byte("old\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"folder", []string{"--from", scenarioSnap("no-driver"), "-o", dir}, "it is a folder"},
		{"missing folder", []string{"--from", scenarioSnap("no-driver"), "-o", filepath.Join(dir, "nope", "x.prom")}, "does not exist"},
		{"explain into a folder", []string{"explain", "-o", dir, "-"}, "it is a folder"},
		{"unreadable snapshot", []string{"--from", filepath.Join(dir, "missing.json"), "-o", old}, "cannot read snapshot"},
	} {
		code, _, errOut := runDoctor(t, "some log", tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.err) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, code, errOut, tc.err)
		}
	}
	if b, _ := os.ReadFile(old); string(b) != "old\n" {
		t.Errorf("a failed run changed the old report: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
	// An existing file keeps its mode when replaced.
	if code, _, _ := runDoctor(t, "", "--from", scenarioSnap("no-driver"), "-o", old); code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	if st, _ := os.Stat(old); st.Mode().Perm() != 0o600 {
		t.Errorf("mode of the replaced file: %v, want 0600 kept", st.Mode())
	}
}
