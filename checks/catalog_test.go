package checks

import (
	"strings"
	"testing"
)

func TestCatalogIsValid(t *testing.T) {
	if err := ValidateCatalog(); err != nil {
		t.Fatal(err)
	}
}

// A finding may raise a fix's risk and needs-root; Normalize never lowers
// them below the catalog.
func TestNormalizeRaisesNeverLowers(t *testing.T) {
	for _, c := range []struct {
		in       Fix
		risk     Risk
		root     bool
		isManual bool
	}{
		{Fix{ID: FixPipInstallTensorFlow, Risk: RiskSafe}, RiskModerate, false, false},
		{Fix{ID: FixPipInstallTensorFlow, Risk: RiskDangerous}, RiskDangerous, false, false},
		{Fix{ID: FixInstallDriver}, RiskDangerous, true, false},
		{Fix{ID: FixUseWSL2, Risk: RiskSafe}, RiskSafe, false, true},
		{Fix{ID: FixTFAllowGrowth, NeedsRoot: true}, RiskSafe, true, false},
	} {
		got := Normalize(c.in)
		if got.Risk != c.risk || got.NeedsRoot != c.root || got.Manual != c.isManual {
			t.Errorf("Normalize(%+v) = risk %s root %v manual %v, want %s %v %v", c.in, got.Risk, got.NeedsRoot, got.Manual, c.risk, c.root, c.isManual)
		}
		if err := CheckPrinted(got); err != nil {
			t.Errorf("normalized %s: %v", c.in.ID, err)
		}
	}
}

func TestCheckFixParams(t *testing.T) {
	py := map[string]string{"python": "/env/bin/python", "env_prefix": "/env", "env_kind": "venv"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range py {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		fx   Fix
		want string // "" for no error
	}{
		{Fix{ID: FixPipUninstall, Risk: RiskModerate, Params: with("packages", "tensorflow-cpu")}, ""},
		{Fix{ID: FixPipUninstall, Risk: RiskModerate, Params: py}, `"packages" is missing`},
		{Fix{ID: FixPipUninstall, Risk: RiskModerate, Params: with("python", "python3")}, "not an absolute path"},
		{Fix{ID: FixPipUninstall, Risk: RiskModerate, Params: with("colour", "x")}, `"colour" is not declared`},
		{Fix{ID: FixStopGPUProcess, Risk: RiskDangerous, Params: map[string]string{"pid": "12x"}}, "not a non-negative integer"},
		{Fix{ID: FixPipInstallTensorFlow, Risk: RiskModerate, Params: with("requirement", "tensorflow\n; rm -rf /")}, "newline"},
		{Fix{ID: FixLDLibraryPath, Risk: RiskModerate, Params: with("value", "/a:lib")}, "not absolute"},
		{Fix{ID: "advice-use-wsl2", Risk: RiskSafe, Manual: true}, "not in the fix catalog"},
		{Fix{ID: FixReboot, Risk: RiskDangerous}, "printed only"},
	} {
		err := CheckFix(c.fx)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.fx.ID, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %v: want an error with %q, got %v", c.fx.ID, c.fx.Params, c.want, err)
		}
	}
}
