package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/testenv"
)

// condaAndVenv makes a real venv and a conda-like env (conda-meta, a
// bin/python3 link to the real interpreter), activates both with the venv
// first on PATH (a venv made from conda's Python), and returns the venv.
func condaAndVenv(t *testing.T) (venv, conda string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 not installed")
	}
	dir := t.TempDir()
	venv, conda = filepath.Join(dir, "venv"), filepath.Join(dir, "conda")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		testenv.Missing(t, "python3 -m venv: %v\n%s", err, out)
	}
	for _, d := range []string{filepath.Join(conda, "conda-meta"), filepath.Join(conda, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(conda, "conda-meta", "history"), []byte("==> 2026-01-01 00:00:00 <==\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(conda, "bin", "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONDA_PREFIX", conda)
	t.Setenv("VIRTUAL_ENV", venv)
	t.Setenv("PATH", filepath.Join(venv, "bin")+string(os.PathListSeparator)+filepath.Join(conda, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	return venv, conda
}

// With CONDA_PREFIX and VIRTUAL_ENV both set and the venv first on PATH,
// the snapshot and `doctor verify --rung framework` examine one
// interpreter: the venv's, picked by the one resolver (host.ResolvePython).
func TestOneInterpreterForSnapshotAndLadder(t *testing.T) {
	venv, _ := condaAndVenv(t)
	want := filepath.Join(venv, "bin", "python3")

	out := filepath.Join(t.TempDir(), "snap.json")
	if code, o, e := runDoctor(t, "", "snapshot", "--quick", "-o", out); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s\n%s", code, o, e)
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
	if s.Python == nil || s.Python.Executable != want || s.Python.Source != "VIRTUAL_ENV" {
		t.Fatalf("snapshot examined %+v, want %s from VIRTUAL_ENV", s.Python, want)
	}

	// The framework rung runs the probe in that interpreter (no framework
	// is installed there: the rung does not pass, but says which Python
	// it ran).
	_, o, e := runDoctor(t, "", "verify", "--rung", "framework", "--framework", "tensorflow", "--rung-timeout", "60s", "--format", "json")
	var r jsonReport
	if err := json.Unmarshal([]byte(o), &r); err != nil {
		t.Fatalf("%v\n%s\n%s", err, o, e)
	}
	if r.Verification == nil || len(r.Verification.Rungs) != 1 {
		t.Fatalf("verification %+v\n%s", r.Verification, e)
	}
	g := r.Verification.Rungs[0]
	if g.Python != want || g.Facts["python_from"] != "VIRTUAL_ENV" {
		t.Errorf("framework rung ran %q (from %v), the snapshot examined %q", g.Python, g.Facts["python_from"], want)
	}
}
