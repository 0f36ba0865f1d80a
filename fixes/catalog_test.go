package fixes

import (
	"testing"

	"github.com/tfdoctor/doctor/checks"
)

// The planner map and the catalog agree: every fix the catalog says doctor
// can apply has a planner, and every planner's ID is such a fix.
func TestPlannersMatchTheCatalog(t *testing.T) {
	for _, s := range checks.FixCatalog() {
		if _, ok := planners[s.ID]; ok == s.Manual {
			t.Errorf("%s: manual=%v in the catalog, planner present=%v", s.ID, s.Manual, ok)
		}
		if !Known(s.ID) {
			t.Errorf("%s: in the catalog, not Known", s.ID)
		}
	}
	for id := range planners {
		if s, ok := checks.LookupFix(id); !ok || s.Manual {
			t.Errorf("planner %s: not an applicable catalog fix", id)
		}
	}
	if Known("advice-use-wsl2") {
		t.Error("an ID outside the catalog is Known")
	}
}

// A plan carries at least the catalog's risk and needs-root, whatever the
// finding said.
func TestPlanRiskIsAtLeastTheCatalogs(t *testing.T) {
	e := newEnv(t)
	py := e.write(e.dir+"/env/bin/python", "")
	p := PlanFix(e.m, checks.Fix{ID: checks.FixPipInstallTensorFlow, Title: "t", Risk: checks.RiskSafe,
		Params: map[string]string{"python": py, "env_prefix": e.dir + "/env", "env_kind": "venv", "requirement": "tensorflow==2.20.0"}}, nil)
	if p.Risk != checks.RiskModerate {
		t.Errorf("pip-install-tensorflow planned as %s, the catalog says moderate", p.Risk)
	}
	p = PlanFix(e.m, checks.Fix{ID: checks.FixLoadNvidiaUVM, Title: "t", Risk: checks.RiskSafe}, nil)
	if !p.NeedsRoot {
		t.Error("load-nvidia-uvm planned without needs-root")
	}
	p = PlanFix(e.m, checks.Fix{ID: checks.FixInstallPython, Title: "t", Steps: []string{"apt install python3"}}, nil)
	if !p.Manual || p.Applicable() {
		t.Errorf("install-python: manual=%v applicable=%v, want printed only", p.Manual, p.Applicable())
	}
}
