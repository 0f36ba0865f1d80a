package rules_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

func readSnapshot(t *testing.T, path string) *host.Snapshot {
	t.Helper()
	s, err := host.LoadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func findingByID(r *rules.Report, id string) *checks.Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

// checkCausalInvariants: causes are exactly the failing findings nothing
// explains, the root cause first; every explained finding points at one of
// them.
func checkCausalInvariants(t *testing.T, name string, r *rules.Report) {
	t.Helper()
	causes := map[string]bool{}
	for _, c := range r.Causes {
		causes[c.ID] = true
	}
	if r.RootCause == nil {
		if len(r.Causes) != 0 {
			t.Errorf("%s: causes %v without a root cause", name, r.Causes)
		}
		return
	}
	if len(r.Causes) == 0 || r.Causes[0].ID != r.RootCause.ID {
		t.Errorf("%s: causes %v do not start with the root cause %s", name, r.Causes, r.RootCause.ID)
	}
	for _, f := range r.Findings {
		switch {
		case f.BlockedBy != nil && !f.Failing():
			t.Errorf("%s: %s is not failing but blocked by %s", name, f.ID, *f.BlockedBy)
		case f.BlockedBy != nil && !causes[*f.BlockedBy]:
			t.Errorf("%s: %s is blocked by %s, which is not a cause", name, f.ID, *f.BlockedBy)
		case f.BlockedBy != nil && causes[f.ID]:
			t.Errorf("%s: %s is both a cause and blocked", name, f.ID)
		case f.BlockedBy == nil && f.Failing() && !causes[f.ID]:
			t.Errorf("%s: %s is failing, explained by nothing, and not among the causes", name, f.ID)
		}
	}
}

func TestCausalInvariantsOnRecordedMachines(t *testing.T) {
	var dirs []string
	for _, g := range []string{"../testdata/scenarios/*", "../testdata/upper/*", "../testdata/snapshots/*"} {
		d, _ := filepath.Glob(g)
		dirs = append(dirs, d...)
	}
	for _, dir := range dirs {
		r, err := rules.Evaluate(readSnapshot(t, filepath.Join(dir, "snapshot.json")), rules.Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkCausalInvariants(t, filepath.Base(dir), r)
	}
}

// TestIndependentCausesBesideMissingDriver is the machine of issue 10: no
// driver, CUDA_VISIBLE_DEVICES=-1 and no TensorFlow. Neither of the last
// two is caused by the missing driver, and both would remain once it is
// installed: blocked_by null, listed in causes after the root cause.
func TestIndependentCausesBesideMissingDriver(t *testing.T) {
	s := readSnapshot(t, "../testdata/scenarios/no-driver/snapshot.json")
	s.Env["CUDA_VISIBLE_DEVICES"] = "-1"
	s.Python = &host.Python{Found: true, Executable: "/home/alice/venv/bin/python3", Prefix: "/home/alice/venv", Kind: "venv", Version: "3.12.3", Source: "VIRTUAL_ENV",
		SitePaths: []host.SitePath{{Path: "/home/alice/venv/lib/python3.12/site-packages", From: "env"}}}
	s.Libraries = &host.Libraries{}
	s.Collectors["python"] = host.CollectorStatus{State: host.FactObserved}
	r, err := rules.Evaluate(s, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkCausalInvariants(t, "no-driver+cvd+no-tf", r)
	if r.RootCause == nil || r.RootCause.ID != "kernel.nvidia" || r.RootCause.Cause != "driver_missing" {
		t.Fatalf("root cause %+v, want kernel.nvidia driver_missing", r.RootCause)
	}
	for _, id := range []string{"env.cuda_visible_devices", "python.tensorflow"} {
		f := findingByID(r, id)
		if f == nil || f.Severity != checks.SevError {
			t.Fatalf("%s: %+v, want an error", id, f)
		}
		if f.BlockedBy != nil {
			t.Errorf("%s is blocked by %s; it does not depend on the driver", id, *f.BlockedBy)
		}
	}
	if f := findingByID(r, "driver.nvml"); f == nil || f.BlockedBy == nil || *f.BlockedBy != "kernel.nvidia" {
		t.Errorf("driver.nvml should be explained by kernel.nvidia: %+v", f)
	}
	var got []string
	for _, c := range r.Causes {
		got = append(got, c.ID+" "+c.Cause)
	}
	want := "kernel.nvidia driver_missing|env.cuda_visible_devices cuda_visible_devices_hides_gpu|python.tensorflow tf_not_installed"
	if strings.Join(got, "|") != want {
		t.Errorf("causes %q, want %q", got, want)
	}
}

// TestRequiresDriveBlockedBy: the engine reads the declarations, not the
// chain position. The same two findings fold or not depending only on
// whether one check requires the other.
func TestRequiresDriveBlockedBy(t *testing.T) {
	low := &checks.Check{ID: "t.low", Link: checks.LinkKernel, Title: "low", Causes: []string{"driver_missing"}, Doc: "d", Run: func(*checks.Pass) {}}
	for _, requires := range []bool{false, true} {
		high := &checks.Check{ID: "t.high", Link: checks.LinkRuntime, Title: "high", Causes: []string{"gpu_compute_failed"}, Doc: "d", Run: func(*checks.Pass) {}}
		if requires {
			high.Requires = []string{"t.low"}
		}
		fs := []checks.Finding{
			{ID: "t.high", Check: "t.high", Cause: "gpu_compute_failed", Severity: checks.SevError, Link: checks.LinkRuntime},
			{ID: "t.low", Check: "t.low", Cause: "driver_missing", Severity: checks.SevError, Link: checks.LinkKernel},
		}
		r := rules.AssembleWith(fs, []*checks.Check{low, high})
		checkCausalInvariants(t, "requires", r)
		f := findingByID(r, "t.high")
		if requires != (f.BlockedBy != nil) {
			t.Errorf("requires=%v: blocked_by %v", requires, f.BlockedBy)
		}
		if r.RootCause.ID != "t.low" {
			t.Errorf("root %s, want the lowest cause t.low", r.RootCause.ID)
		}
		if want := map[bool]int{false: 2, true: 1}[requires]; len(r.Causes) != want {
			t.Errorf("requires=%v: %d causes, want %d", requires, len(r.Causes), want)
		}
	}
}

// TestBlockedByNamesTheBottomCause: a chain of three folds onto the lowest,
// and a warning explains nothing.
func TestBlockedByNamesTheBottomCause(t *testing.T) {
	mk := func(id string, l checks.Link, req ...string) *checks.Check {
		return &checks.Check{ID: id, Link: l, Title: id, Causes: []string{"gpu_compute_failed"}, Doc: "d", Requires: req, Run: func(*checks.Pass) {}}
	}
	reg := []*checks.Check{mk("t.a", checks.LinkKernel), mk("t.b", checks.LinkDriver, "t.a"), mk("t.c", checks.LinkRuntime, "t.b"), mk("t.w", checks.LinkHardware)}
	reg[1].Requires = append(reg[1].Requires, "t.w")
	fs := []checks.Finding{
		{ID: "t.c", Check: "t.c", Severity: checks.SevError, Link: checks.LinkRuntime},
		{ID: "t.b", Check: "t.b", Severity: checks.SevError, Link: checks.LinkDriver},
		{ID: "t.a", Check: "t.a", Severity: checks.SevError, Link: checks.LinkKernel},
		{ID: "t.w", Check: "t.w", Severity: checks.SevWarning, Link: checks.LinkHardware},
	}
	r := rules.AssembleWith(fs, reg)
	checkCausalInvariants(t, "chain", r)
	for _, id := range []string{"t.b", "t.c"} {
		if f := findingByID(r, id); f.BlockedBy == nil || *f.BlockedBy != "t.a" {
			t.Errorf("%s blocked by %v, want t.a", id, f.BlockedBy)
		}
	}
	if len(r.Causes) != 2 || r.Causes[0].ID != "t.a" || r.Causes[1].ID != "t.w" {
		t.Errorf("causes %+v", r.Causes)
	}
}

func TestValidateRequires(t *testing.T) {
	mk := func(id string, req ...string) *checks.Check {
		return &checks.Check{ID: id, Link: checks.LinkDriver, Title: id, Causes: []string{"driver_missing"}, Doc: "d", Requires: req, Run: func(*checks.Pass) {}}
	}
	for name, tc := range map[string]struct {
		reg  []*checks.Check
		want string
	}{
		"cycle":   {[]*checks.Check{mk("t.a", "t.b"), mk("t.b", "t.c"), mk("t.c", "t.a")}, "requirement cycle: t.a -> t.b -> t.c -> t.a"},
		"unknown": {[]*checks.Check{mk("t.a", "t.nope")}, `requires "t.nope", which is neither a check nor a fact`},
		"self":    {[]*checks.Check{mk("t.a", "t.a")}, "requires itself"},
		"twice":   {[]*checks.Check{mk("t.a", "nvml", "nvml")}, "requires nvml twice"},
	} {
		err := checks.Validate(tc.reg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if err := checks.Validate([]*checks.Check{mk("t.a", "nvml"), mk("t.b", "t.a", "modules")}); err != nil {
		t.Errorf("a valid registry: %v", err)
	}
}

// TestEveryCheckDeclaresRequires: the registry's declarations are complete:
// a check that reads the snapshot names at least one fact (the collectors'
// own check excepted: it reads how collectors ended).
func TestEveryCheckDeclaresRequires(t *testing.T) {
	for _, c := range checks.All {
		if c.ID == checks.Collectors.ID {
			continue
		}
		if len(c.RequiredFacts()) == 0 {
			t.Errorf("%s requires no fact of the snapshot", c.ID)
		}
	}
}

// TestExplainCauses: a paste with two independent problems names both.
func TestExplainCauses(t *testing.T) {
	r := rules.ExplainText("ModuleNotFoundError: No module named 'tensorflow'\n" +
		"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n")
	checkCausalInvariants(t, "explain", r)
	var got []string
	for _, c := range r.Causes {
		got = append(got, c.Cause)
	}
	if strings.Join(got, " ") != "kernel_module_not_built tf_not_installed" {
		t.Errorf("causes %v, want the kernel module that is not loaded (most often not built for the running kernel), then TensorFlow not installed", got)
	}
}

// TestCutShortGatherConcludesNothing: a gather whose every collector the
// run's --timeout cut short holds no evidence. No check may conclude that
// something is missing; each says "not checked", and only the collectors'
// own check reports the gap. The snapshot is written the old way (no
// state fields), so the derivation for older snapshots is tested too.
func TestCutShortGatherConcludesNothing(t *testing.T) {
	s := &host.Snapshot{Schema: host.SnapshotSchema, Env: map[string]string{}, Collectors: map[string]host.CollectorStatus{}}
	for _, n := range host.CollectorNames() {
		s.Collectors[n] = host.CollectorStatus{DurationMS: 1, TimedOut: true, Cut: true, Error: "no answer within 1ms"}
	}
	r, err := rules.Evaluate(s, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkCausalInvariants(t, "cut", r)
	for _, f := range r.Findings {
		if f.Check == checks.Collectors.ID {
			if f.Severity != checks.SevWarning || f.Cause != "check_incomplete" {
				t.Errorf("%s: %s %s", f.ID, f.Severity, f.Cause)
			}
			continue
		}
		if !f.NotChecked() {
			t.Errorf("%s concluded %s %s (%q) from no evidence", f.ID, f.Severity, f.Cause, f.Title)
		}
		for _, fx := range f.Fixes {
			t.Errorf("%s offers %s", f.ID, fx.ID)
		}
	}
}

// TestOldSnapshotsDeriveFactStates: a snapshot recorded before the state
// fields existed gets the same fact states as the gather records now.
func TestOldSnapshotsDeriveFactStates(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/scenarios/*")
	for _, dir := range dirs {
		s := readSnapshot(t, filepath.Join(dir, "snapshot.json"))
		recorded := s.Facts
		if len(recorded) == 0 {
			t.Fatalf("%s: no facts recorded", dir)
		}
		for n, st := range s.Collectors {
			st.State, st.StateWhy = "", ""
			s.Collectors[n] = st
		}
		s.Facts = nil
		for name, want := range recorded {
			if got := s.Fact(name); got != want {
				t.Errorf("%s: fact %s derived %+v, recorded %+v", filepath.Base(dir), name, got, want)
			}
		}
	}
}

// A check may narrow what one of its labels rests on (CauseRequires): a log
// finding with that label is then explained only by those checks, not by
// everything the check requires; a label it does not narrow still is.
func TestCauseRequiresNarrowsALabel(t *testing.T) {
	noop := func(*checks.Pass) {}
	reg := []*checks.Check{
		{ID: "d.driver", Link: checks.LinkDriver, Causes: []string{"driver_missing"}, Run: noop},
		{ID: "p.env", Link: checks.LinkPython, Causes: []string{"tf_not_installed"}, Run: noop},
		{ID: "r.matmul", Link: checks.LinkRuntime, Causes: []string{"framework_import_failed", "gpu_compute_failed"},
			Requires: []string{"d.driver", "p.env"}, CauseRequires: map[string][]string{"framework_import_failed": {"p.env"}}, Run: noop},
	}
	mk := func(id, cause string, link checks.Link) checks.Finding {
		return checks.Finding{ID: id, Check: "log." + id, Cause: cause, Severity: checks.SevError, Link: link, Evidence: map[string]any{}}
	}
	r := rules.AssembleWith([]checks.Finding{
		mk("drv", "driver_missing", checks.LinkDriver),
		mk("imp", "framework_import_failed", checks.LinkRuntime),
		mk("mm", "gpu_compute_failed", checks.LinkRuntime),
	}, reg)
	checkCausalInvariants(t, "narrowed", r)
	if f := findingByID(r, "imp"); f.BlockedBy != nil {
		t.Errorf("the import failure is explained by %s; it rests only on p.env", *f.BlockedBy)
	}
	if f := findingByID(r, "mm"); f.BlockedBy == nil || *f.BlockedBy != "drv" {
		t.Errorf("the matmul failure is not explained by the driver: %v", f.BlockedBy)
	}
	r = rules.AssembleWith([]checks.Finding{
		mk("env", "tf_not_installed", checks.LinkPython),
		mk("imp", "framework_import_failed", checks.LinkRuntime),
	}, reg)
	if f := findingByID(r, "imp"); f.BlockedBy == nil || *f.BlockedBy != "env" {
		t.Errorf("the import failure is not explained by what it rests on: %v", f.BlockedBy)
	}
	if len(r.Causes) != 1 {
		t.Errorf("causes %v, want the environment alone", r.Causes)
	}
}
