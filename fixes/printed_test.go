package fixes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

// Issue 12, item 10: what a check prints is exactly what the plan runs.
// The tools are recording scripts: each run appends its argv to a log.

func recorder(t *testing.T, e *env, path string) string {
	t.Helper()
	log := filepath.Join(e.dir, "argv.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$0 $*\" >> '" + log + "'\n" +
		"if [ \"$1\" = -m ] && [ \"$2\" = venv ]; then mkdir -p \"$3/bin\" && cp \"$0\" \"$3/bin/python\" && : > \"$3/pyvenv.cfg\"; fi\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return log
}

// unquote undoes the single quotes of a printed command line.
func unquote(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'' && !in:
			in = true
		case s[i] == '\'' && in:
			if strings.HasPrefix(s[i:], `'\''`) {
				b.WriteByte('\'')
				i += 3
				continue
			}
			in = false
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// printedCommands are a fix's steps that doctor runs (not "By hand:").
func printedCommands(fx checks.Fix) []string {
	var out []string
	for _, s := range fx.Steps {
		if !strings.HasPrefix(s, checks.ByHand) {
			out = append(out, unquote(s))
		}
	}
	return out
}

func ranCommands(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func firstFix(t *testing.T, c *checks.Check, s *host.Snapshot, id string) checks.Fix {
	t.Helper()
	for _, f := range checks.Run(c, s) {
		for _, fx := range f.Fixes {
			if fx.ID == id {
				return fx
			}
		}
	}
	t.Fatalf("%s gives no %s fix", c.ID, id)
	return checks.Fix{}
}

func pySnap(e *env, py *host.Python) *host.Snapshot {
	return &host.Snapshot{Platform: host.Platform{Home: e.home, DistroID: "ubuntu"}, Python: py,
		Collectors: map[string]host.CollectorStatus{"python": {}}}
}

func TestPipPlanRunsWhatIsPrinted(t *testing.T) {
	needBash(t)
	t.Run("system Python: a venv first", func(t *testing.T) {
		e := newEnv(t)
		base := filepath.Join(e.dir, "usr", "bin", "python3")
		log := recorder(t, e, base)
		s := pySnap(e, &host.Python{Found: true, Kind: "system", Executable: base, Prefix: filepath.Dir(filepath.Dir(base)), Version: "3.12.3"})
		fx := firstFix(t, checks.TensorFlowInstall, s, checks.FixPipInstallTensorFlow)
		res, out := e.apply(report(fx))
		want := printedCommands(fx)
		got := ranCommands(t, log)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("printed:\n%s\nran:\n%s\n%s %+v", strings.Join(want, "\n"), strings.Join(got, "\n"), out, res)
		}
		if len(got) != 2 || !strings.Contains(got[0], " -m venv "+filepath.Join(e.home, "tf-venv")) || !strings.HasPrefix(got[1], filepath.Join(e.home, "tf-venv", "bin", "python")+" -m pip install") {
			t.Errorf("a system Python gets its venv made first, then pip runs in it: %q", got)
		}
	})
	t.Run("force reinstall", func(t *testing.T) {
		e := newEnv(t)
		prefix := filepath.Join(e.home, "tf")
		py := filepath.Join(prefix, "bin", "python3")
		log := recorder(t, e, py)
		s := pySnap(e, &host.Python{Found: true, Kind: "venv", Executable: py, Prefix: prefix, Version: "3.11.7",
			TensorFlow: &host.TensorFlow{Version: "2.16.1", Dist: "tensorflow-cpu", Importable: true}})
		fx := firstFix(t, checks.TensorFlowInstall, s, checks.FixPipInstallTensorFlow)
		e.apply(report(fx))
		got := ranCommands(t, log)
		if strings.Join(got, "\n") != strings.Join(printedCommands(fx), "\n") || len(got) != 1 || !strings.Contains(got[0], "--force-reinstall") {
			t.Errorf("printed %q, ran %q", printedCommands(fx), got)
		}
	})
	t.Run("as root into another user's venv: printed only", func(t *testing.T) {
		e := newEnv(t)
		prefix := filepath.Join(e.home, "tf")
		py := filepath.Join(prefix, "bin", "python3")
		log := recorder(t, e, py)
		e.m.UID = os.Getuid() + 1 // root acting for nobody who owns this venv
		s := pySnap(e, &host.Python{Found: true, Kind: "venv", Executable: py, Prefix: prefix, Version: "3.11.7"})
		fx := firstFix(t, checks.TensorFlowInstall, s, checks.FixPipInstallTensorFlow)
		plans := e.plan(report(fx))
		if len(plans) != 1 || plans[0].Applicable() || !plans[0].Manual || !strings.Contains(strings.Join(plans[0].Notes, " "), "belongs to uid") {
			t.Fatalf("plan: %+v", plans[0])
		}
		e.apply(report(fx))
		if got := ranCommands(t, log); len(got) != 0 {
			t.Errorf("ran %q as root in another user's venv", got)
		}
	})
}

func TestCondaPlanKeepsChannel(t *testing.T) {
	needBash(t)
	e := newEnv(t)
	conda := filepath.Join(e.dir, "miniconda3", "bin", "conda")
	log := recorder(t, e, conda)
	e.m.Env["CONDA_EXE"] = conda
	f, err := os.Open("../testdata/upper/conda-cudnn-gone/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.ReadSnapshot(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	s.Python.Prefix = filepath.Join(e.dir, "miniconda3", "envs", "tf")
	if err := os.MkdirAll(s.Python.Prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	fx := firstFix(t, checks.CondaFiles, s, checks.FixCondaReinstall)
	e.apply(report(fx))
	got := ranCommands(t, log)
	want := printedCommands(fx)
	if len(got) != 1 || len(want) != 1 || strings.TrimPrefix(got[0], conda) != strings.TrimPrefix(want[0], "conda") || !strings.Contains(got[0], "-c conda-forge") {
		t.Errorf("printed %q, ran %q", want, got)
	}
}

// Item 12: the XLA fix's wheel branch runs: the folder comes with the
// wheel, so a folder that does not exist yet is installed, then named.
func TestXLAWheelBranch(t *testing.T) {
	e := newEnv(t)
	f, err := os.Open("../testdata/upper/libdevice-missing/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.ReadSnapshot(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	fx := firstFix(t, checks.XLAData, s, checks.FixXLACudaDataDir)
	if fx.Params["requirement"] == "" || isDir(fx.Params["dir"]) {
		t.Fatalf("the scenario should need the wheel: %+v", fx.Params)
	}
	p := PlanFix(e.m, fx, nil)
	if p.Refused != "" || len(p.Steps) < 2 {
		t.Fatalf("plan: refused %q, steps %+v", p.Refused, p.Steps)
	}
	if st := p.Steps[0]; st.Kind != KindRun || strings.Join(st.Argv[1:], " ") != "-m pip install "+fx.Params["requirement"] {
		t.Errorf("first step %+v", st)
	}
	var sets bool
	for _, st := range p.Steps[1:] {
		sets = sets || st.Kind == KindBlock || st.Kind == KindWrite
	}
	if !sets {
		t.Errorf("XLA_FLAGS is not set after the install: %+v", p.Steps)
	}
}

// Item 4: nouveau loaded and no NVIDIA driver at all: the plan installs
// the driver and never blacklists nouveau alone; named, blacklist-nouveau
// is refused. With the driver installed (nouveau-loaded), it is planned.
func TestNouveauWithoutDriverPlansTheDriver(t *testing.T) {
	load := func(name string) *host.Snapshot {
		s, err := host.LoadSnapshot("../testdata/scenarios/" + name + "/snapshot.json")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	e := newEnv(t)
	e.m.Snap = load("nouveau-no-driver")
	r, err := rules.Evaluate(e.m.Snap, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.RootCause == nil || r.RootCause.Cause != "driver_missing" {
		t.Fatalf("root cause %+v", r.RootCause)
	}
	var ids []string
	for _, p := range e.plan(r) {
		ids = append(ids, p.ID)
		if p.ID == checks.FixBlacklistNouveau {
			t.Errorf("blacklist-nouveau planned on a machine without an NVIDIA driver: %+v", p)
		}
	}
	if !contains(ids, checks.FixInstallDriver) {
		t.Errorf("plans %v, want install-driver", ids)
	}
	named := PlanFix(e.m, checks.Fix{ID: checks.FixBlacklistNouveau}, nil)
	if named.Applicable() || !strings.Contains(named.Refused, "install the driver first") {
		t.Errorf("named blacklist-nouveau: %+v", named)
	}

	e.m.Snap = load("nouveau-loaded")
	r, err = rules.Evaluate(e.m.Snap, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids = nil
	for _, p := range e.plan(r) {
		ids = append(ids, p.ID)
	}
	if !contains(ids, checks.FixBlacklistNouveau) {
		t.Errorf("driver installed, nouveau holds the GPU: plans %v", ids)
	}
}
