package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFleetCLI: reports written by doctor itself (--format json -o) for
// healthy and broken recorded machines, summarised by doctor fleet in
// each format, with the exit codes of the contract.
func TestFleetCLI(t *testing.T) {
	dir := t.TempDir()
	for _, sc := range []string{"healthy-linux", "no-driver", "cuda-visible-devices-minus-1", "healthy-wsl2", "gpu-memory-other-process"} {
		code, _, errOut := runDoctor(t, "", "--from", scenarioSnap(sc), "--format", "json", "-o", filepath.Join(dir, sc+".json"))
		if code != exitOK && code != exitFindings {
			t.Fatalf("%s: exit %d: %s", sc, code, errOut)
		}
	}
	os.WriteFile(filepath.Join(dir, "cut.json"), []byte(`{"schema": "doctor.report/v1", "status": "err`), 0o644)

	// The recorded machines share one host name: the newest report of it
	// counts, so the summary here says one machine. Reports written with
	// --redact each count.
	code, out, errOut := runDoctor(t, "", "fleet", dir, "--format", "json")
	var s struct {
		Schema     string
		Machines   struct{ Total, Broken int }
		Reports    int
		Unreadable []struct {
			File  string
			Error string
		}
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if s.Schema != "doctor.fleet/v1" || s.Reports != 5 || len(s.Unreadable) != 1 || !strings.HasSuffix(s.Unreadable[0].File, "cut.json") {
		t.Errorf("summary %+v", s)
	}

	red := t.TempDir()
	for i, sc := range []string{"healthy-linux", "no-driver", "cuda-visible-devices-minus-1", "healthy-wsl2"} {
		runDoctor(t, "", "--from", scenarioSnap(sc), "--format", "json", "--redact", "-o", filepath.Join(red, string(rune('a'+i))+".json"))
	}
	code, out, _ = runDoctor(t, "", "fleet", red)
	if code != exitFindings || !strings.HasPrefix(out, "doctor fleet: 2 of 4 machines broken") || !strings.Contains(out, "4 reports are redacted") ||
		!strings.Contains(out, "driver_missing") || !strings.Contains(out, "cuda_visible_devices_hides_gpu") {
		t.Errorf("redacted fleet: exit %d\n%s", code, out)
	}
	code, out, _ = runDoctor(t, "", "fleet", "-f", "md", filepath.Join(red, "a.json"), filepath.Join(red, "d.json"))
	if code != exitOK || !strings.HasPrefix(out, "### no broken machine among 2 machines") {
		t.Errorf("healthy fleet in Markdown: exit %d\n%s", code, out)
	}

	o := filepath.Join(t.TempDir(), "fleet.json")
	if code, out, _ = runDoctor(t, "", "fleet", "-o", o, red); code != exitFindings || out != "" {
		t.Errorf("-o: exit %d, stdout %q", code, out)
	}
	if b, err := os.ReadFile(o); err != nil || !strings.HasPrefix(string(b), "doctor fleet: 2 of 4") {
		t.Errorf("-o file: %v\n%s", err, b)
	}
}

func TestFleetUsage(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		err  string
	}{
		{"no path", []string{"fleet"}, "needs at least one PATH"},
		{"bad format", []string{"fleet", "--format", "prometheus", empty}, `unknown --format "prometheus"`},
		{"nothing readable", []string{"fleet", empty, "/nonexistent/reports"}, "no readable doctor report"},
		{"a flag fleet does not take", []string{"--quick", "fleet", empty}, "quick"},
		{"output into a folder", []string{"fleet", "-o", empty, empty}, "it is a folder"},
	} {
		code, out, errOut := runDoctor(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.err) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", c.name, code, errOut, c.err)
		}
		if c.name == "nothing readable" && !strings.Contains(out, "/nonexistent/reports: no such file or directory") {
			t.Errorf("the unreadable path is not named:\n%s", out)
		}
	}
}
