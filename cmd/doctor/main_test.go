package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/iostreams"
)

func scenarioSnap(name string) string {
	return filepath.Join("..", "..", "testdata", "scenarios", name, "snapshot.json")
}

// runDoctor runs the CLI in-process with test streams.
func runDoctor(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runDoctorWith(t, NewFactory(nil), stdin, args...)
}

// runDoctorWith runs the CLI in-process with test streams and the
// dependencies of f (fakes for what cannot exist here).
func runDoctorWith(t *testing.T, f *Factory, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	f.IOStreams = ios
	code := MainWith(context.Background(), append([]string{"doctor"}, args...), f)
	return code, out.String(), errOut.String()
}

func TestCLI(t *testing.T) {
	truncated := filepath.Join(t.TempDir(), "truncated.json")
	b, _ := os.ReadFile(scenarioSnap("no-driver"))
	os.WriteFile(truncated, b[:len(b)/2], 0o644)

	cases := []struct {
		name     string
		args     []string
		stdin    string
		code     int
		out, err string // substrings expected
	}{
		{"no driver: root cause on the first line", []string{"--from", scenarioSnap("no-driver")}, "", 1, "Root cause: No NVIDIA driver is installed [driver_missing]", ""},
		{"healthy", []string{"--from", scenarioSnap("healthy-linux")}, "", 0, "No problem found", ""},
		{"warning only exits 0", []string{"--from", scenarioSnap("gpu-memory-other-process")}, "", 0, "gpu_out_of_memory_other_process", ""},
		{"json", []string{"--from", scenarioSnap("cuda-visible-devices-minus-1"), "--format", "json"}, "", 1, `"cause": "cuda_visible_devices_hides_gpu"`, ""},
		{"markdown", []string{"--from", scenarioSnap("no-driver"), "-f", "md"}, "", 1, "### doctor: error", ""},
		{"prometheus", []string{"--from", scenarioSnap("no-driver"), "--format=prometheus"}, "", 1, "doctor_status 2", ""},
		{"from stdin", []string{"--from", "-"}, string(b), 1, "driver_missing", ""},
		{"only one check", []string{"--from", scenarioSnap("no-driver"), "--check", "driver.nvml", "--format", "json"}, "", 1, `"id": "driver.nvml"`, ""},
		{"a whole link", []string{"--from", scenarioSnap("no-driver"), "--check", "environment"}, "", 0, "Environment", ""},
		{"skip the root cause", []string{"--from", scenarioSnap("cuda-visible-devices-minus-1"), "--skip", "env.cuda_visible_devices"}, "", 0, "No problem found", ""},
		{"unknown check", []string{"--from", scenarioSnap("no-driver"), "--check", "nope"}, "", 2, "", `unknown check "nope"`},
		{"unknown flag", []string{"--bogus"}, "", 2, "", "flag provided but not defined"},
		{"unknown format", []string{"--format", "xml", "--from", scenarioSnap("no-driver")}, "", 2, "", `unknown --format "xml"`},
		{"bad timeout", []string{"--timeout", "soon"}, "", 2, "", "invalid value"},
		{"missing snapshot", []string{"--from", "/nonexistent/snap.json"}, "", 2, "", "cannot read snapshot"},
		{"truncated snapshot", []string{"--from", truncated}, "", 2, "", "bad snapshot: truncated JSON"},
		{"garbage snapshot", []string{"--from", "-"}, "\x00\x01\x02 not json", 2, "", "bad snapshot"},
		{"folder as snapshot", []string{"--from", t.TempDir()}, "", 2, "", "it is a folder"},
		{"unknown command", []string{"frobnicate"}, "", 2, "", `unknown command "frobnicate"`},
		{"root is not a folder", []string{"--root", "/nonexistent-tree"}, "", 2, "", "not a folder"},
		{"from and root", []string{"--from", "x", "--root", "/"}, "", 2, "", "exclude each other"},
		{"missing interpreter", []string{"--python", "/nonexistent/bin/python", "--quick"}, "", 2, "", "no such interpreter"},
		{"missing interpreter for verify", []string{"verify", "--python", "/nonexistent/bin/python"}, "", 2, "", "no such interpreter"},
		{"version", []string{"--version"}, "", 0, "doctor ", ""},
		{"help documents exit codes", []string{"--help"}, "", 0, "EXIT CODES", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runDoctor(t, c.stdin, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			if c.out != "" && !strings.Contains(out, c.out) {
				t.Errorf("stdout lacks %q:\n%s", c.out, out)
			}
			if c.err != "" && !strings.Contains(errOut, c.err) {
				t.Errorf("stderr lacks %q:\n%s", c.err, errOut)
			}
			if strings.Contains(out+errOut, "panic") || strings.Contains(out+errOut, "goroutine ") {
				t.Errorf("output shows a crash:\n%s%s", out, errOut)
			}
		})
	}
}

func TestFirstLineIsRootCause(t *testing.T) {
	_, out, _ := runDoctor(t, "", "--from", scenarioSnap("nvml-mismatch"))
	first := strings.SplitN(out, "\n", 2)[0]
	if !strings.Contains(first, "Root cause") || !strings.Contains(first, "driver_library_mismatch") {
		t.Errorf("first line %q", first)
	}
}

func TestRulesCommand(t *testing.T) {
	code, out, _ := runDoctor(t, "", "rules", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Rules []struct {
			ID, Kind string
			Causes   []string
		}
		Causes []struct{ Label, Doc string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range doc.Rules {
		ids[r.ID] = true
	}
	for _, want := range []string{"kernel.nvidia", "driver.nvml", "env.cuda_visible_devices", "hardware.xid"} {
		if !ids[want] {
			t.Errorf("doctor rules lacks %s", want)
		}
	}
	labels := map[string]bool{}
	for _, c := range doc.Causes {
		labels[c.Label] = c.Doc != ""
	}
	for _, l := range []string{"driver_missing", "healthy", "driver_unresponsive", "check_incomplete"} {
		if !labels[l] {
			t.Errorf("cause %s missing or undocumented", l)
		}
	}
	code, out, _ = runDoctor(t, "", "rules")
	if code != 0 || !strings.Contains(out, "CAUSE LABELS") {
		t.Errorf("text rules: exit %d\n%s", code, out)
	}
}

// TestSnapshotRoundTrip writes a snapshot of a --root tree to a file and
// evaluates it with --from: the same findings as evaluating the tree.
func TestSnapshotRoundTrip(t *testing.T) {
	tree := filepath.Join("..", "..", "testdata", "scenarios", "nouveau-loaded", "tree")
	out := filepath.Join(t.TempDir(), "snap.json")
	code, _, errOut := runDoctor(t, "", "snapshot", "--root", tree, "-o", out)
	if code != 0 {
		t.Fatalf("snapshot exit %d: %s", code, errOut)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.ReadSnapshot(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !s.Modules.Loaded["nouveau"] {
		t.Errorf("snapshot of the tree lost nouveau: %+v", s.Modules)
	}
	code, stdout, _ := runDoctor(t, "", "--from", out)
	if code != 1 || !strings.Contains(stdout, "nouveau_conflict") {
		t.Errorf("--from the written snapshot: exit %d\n%s", code, stdout)
	}
	code, _, errOut = runDoctor(t, "", "snapshot", "-o", "/nonexistent-dir/x.json", "--root", tree)
	if code != 2 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("snapshot into a missing folder: exit %d %s", code, errOut)
	}
}

// TestHungNvidiaSMI puts an nvidia-smi that never returns (and starts a
// child of its own) first on PATH: doctor must end within its timeout with
// a driver_unresponsive finding and leave no process behind.
func TestHungNvidiaSMI(t *testing.T) {
	dir := t.TempDir()
	// Unique to this test process: other runs of this test on the same
	// machine (other checkouts) must not count as left behind.
	marker := fmt.Sprintf("3599.%d", 10000+os.Getpid()%80000)
	script := "#!/bin/sh\nsleep " + marker + " &\nsleep " + marker + "\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	old := host.SMITimeout
	host.SMITimeout = time.Second
	defer func() { host.SMITimeout = old }()

	start := time.Now()
	code, out, _ := runDoctor(t, "", "--quick", "--format", "json", "--timeout", "4s", "--check", "driver.nvidia_smi")
	elapsed := time.Since(start)
	if elapsed > 4*time.Second {
		t.Errorf("doctor took %s with --timeout 4s", elapsed)
	}
	if code != 1 || !strings.Contains(out, `"cause": "driver_unresponsive"`) {
		t.Errorf("exit %d, want a driver_unresponsive error:\n%s", code, out)
	}
	time.Sleep(200 * time.Millisecond)
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// processesWith lists PIDs whose command line contains s.
func processesWith(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func TestFixFlagsNeedFix(t *testing.T) {
	for _, f := range []string{"--yes", "--dry-run"} {
		code, _, errOut := runDoctor(t, "", "--from", scenarioSnap("healthy-linux"), f)
		if code != 2 || !strings.Contains(errOut, "goes with --fix") {
			t.Errorf("%s without --fix: exit %d, %q", f, code, errOut)
		}
	}
}

// TestSnapshotFormatsAndOutput: the snapshot is JSON only, and -o refuses a
// folder or a missing folder before any work, with exit 2, leaving nothing
// behind (the temporary file of an atomic write never lands in the parent).
func TestSnapshotFormatsAndOutput(t *testing.T) {
	tree := filepath.Join("..", "..", "testdata", "scenarios", "nouveau-loaded", "tree")
	dir := t.TempDir()
	folder := filepath.Join(dir, "out")
	os.Mkdir(folder, 0o755)
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"snapshot", "--root", tree, "--format", "markdown"}, 2, "snapshot writes JSON only"},
		{[]string{"snapshot", "--root", tree, "-f", "prometheus"}, 2, "--format prometheus does not apply"},
		{[]string{"--format", "text", "snapshot", "--root", tree}, 2, "--format text does not apply"},
		{[]string{"snapshot", "--root", tree, "-o", folder}, 2, "it is a folder"},
		{[]string{"snapshot", "--root", tree, "-o", folder + "/"}, 2, "it is a folder"},
		{[]string{"snapshot", "--root", tree, "-o", filepath.Join(dir, "missing") + "/"}, 2, "cannot end in /"},
		{[]string{"snapshot", "--root", tree, "-o", filepath.Join(dir, "nope", "s.json")}, 2, "does not exist"},
		{[]string{"snapshot", "--root", tree, "-o", "/proc/doctor-nope.json"}, 2, "does not take new files"},
		{[]string{"explain", "-o", "/proc/doctor-nope.json", "-"}, 2, "does not take new files"},
		{[]string{"snapshot", "--root", tree, "--format", "json", "--quick"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runDoctor(t, "", c.args...)
			if code != c.code || !strings.Contains(errOut, c.err) {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if c.code == 0 && !strings.Contains(out, `"schema": "doctor.snapshot/v1"`) {
				t.Errorf("no snapshot on stdout:\n%.300s", out)
			}
			if c.code != 0 && out != "" {
				t.Errorf("stdout %.300q", out)
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind in %s: %v", dir, ents)
	}
	if ents, _ := os.ReadDir(folder); len(ents) != 0 {
		t.Errorf("left behind in %s: %v", folder, ents)
	}
}

// TestTimeoutIsNotAbsence: with almost no time, collectors are cut short;
// what they did not read is unknown, never "not installed". The tree has a
// loaded driver, so driver_missing and the install-driver fix would be
// conclusions drawn from missing evidence.
func TestTimeoutIsNotAbsence(t *testing.T) {
	tree := filepath.Join("..", "..", "testdata", "scenarios", "healthy-linux", "tree")
	for i := 0; i < 20; i++ {
		_, out, errOut := runDoctor(t, "", "--root", tree, "--quick", "--timeout", "1ms", "--format", "json")
		var r struct {
			Findings []struct {
				ID, Cause string
				Skipped   bool
				Fixes     []struct{ ID string }
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("run %d: %v\n%s\n%s", i, err, out, errOut)
		}
		for _, f := range r.Findings {
			if f.Cause == "driver_missing" {
				t.Errorf("run %d: %s says driver_missing on a tree whose driver is loaded", i, f.ID)
			}
			for _, fx := range f.Fixes {
				if fx.ID == "install-driver" {
					t.Errorf("run %d: %s offers install-driver", i, f.ID)
				}
			}
		}
	}
}
