package fixes

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/internal/golden"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
)

// The plan as a person sees it: every edit, command, process and
// instruction, with the sudo lines of a normal user.
func TestWritePlanGolden(t *testing.T) {
	e := newEnv(t)
	e.m.IsRoot = func() bool { return false }
	prefix := filepath.Join(e.dir, "conda env")
	e.write(filepath.Join(e.home, ".bashrc"), "alias ll='ls -l'\nexport CUDA_VISIBLE_DEVICES=-1\n")
	e.write(filepath.Join(prefix, "conda-meta", "state"), `{"env_vars": {"CUDA_VISIBLE_DEVICES": "-1"}}`)
	e.write(filepath.Join(prefix, "bin", "python3"), "")
	e.write(filepath.Join(e.root, "etc", "environment"), "CUDA_VISIBLE_DEVICES=\"-1\"\n")
	e.m.Env["CONDA_PREFIX"] = prefix
	e.m.Env["CUDA_VISIBLE_DEVICES"] = "-1"
	e.m.Snap = &host.Snapshot{Platform: host.Platform{DistroID: "ubuntu", Kernel: "6.8.0-45-generic"}, Modules: host.Modules{Packages: []string{"nvidia-driver-550"}}}

	plans := []*Plan{
		PlanFix(e.m, cvdFix, &checks.Finding{ID: "env.cuda_visible_devices", Title: `CUDA_VISIBLE_DEVICES="-1" hides every GPU`}),
		PlanFix(e.m, checks.Fix{ID: checks.FixTFAllowGrowth, Title: "Let TensorFlow allocate GPU memory as needed", Risk: checks.RiskSafe}, nil),
		PlanFix(e.m, checks.Fix{ID: checks.FixPipInstallTensorFlow, Title: "Install TensorFlow with its CUDA wheels", Risk: checks.RiskModerate,
			Params: map[string]string{"python": "/opt/my env/bin/python", "requirement": "tensorflow[and-cuda]==2.20.0"}}, nil),
		{ID: checks.FixStopGPUProcess, Title: "Stop PID 4242 (python train.py)", Risk: checks.RiskDangerous,
			Steps: []Step{{Kind: KindSignal, Proc: &Process{PID: 4242, User: "alice", Command: "python train.py --epochs 10\x1b[2J", HasGPU: true, UsedMiB: 20480}}}},
		PlanFix(e.m, checks.Fix{ID: checks.FixBlacklistNouveau, Title: "Blacklist nouveau and rebuild the initramfs", Risk: checks.RiskModerate, NeedsRoot: true}, nil),
		PlanFix(e.m, checks.Fix{ID: checks.FixInstallDriver, Title: "Install the NVIDIA driver", Risk: checks.RiskDangerous, NeedsRoot: true}, nil),
		PlanFix(e.m, checks.Fix{ID: checks.FixWindowsDriver, Title: "Update the Windows driver", Manual: true,
			Steps: []string{"On Windows: install the current NVIDIA driver", "In PowerShell: wsl --update", "In PowerShell: wsl --shutdown"}}, nil),
	}
	e.m.Snap.Platform.WSL.Version = 2
	plans = append(plans, PlanFix(e.m, checks.Fix{ID: checks.FixInstallDriver, Title: "Install the NVIDIA driver", Risk: checks.RiskDangerous, NeedsRoot: true}, nil))

	var b strings.Builder
	WritePlan(&b, plans, PlanOptions{IsRoot: false, Self: "doctor", Grace: "10s"})
	got := strings.ReplaceAll(b.String(), e.dir, "$TMP")
	golden.Check(t, filepath.Join("testdata", "plan.golden"), []byte(got))
}

// The plan's count is of what this run would apply, not of every plan with
// steps: a dangerous fix counts only when named, a root-only fix only as
// root, a command only on the live machine.
func TestWillApply(t *testing.T) {
	safe := &Plan{ID: "a", Risk: checks.RiskSafe, Steps: []Step{{Kind: KindWrite}}}
	danger := &Plan{ID: checks.FixStopGPUProcess, Risk: checks.RiskDangerous, Steps: []Step{{Kind: KindSignal, Proc: &Process{PID: 4242, User: "alice", Command: "python"}}}}
	rooty := &Plan{ID: "b", Risk: checks.RiskModerate, NeedsRoot: true, Steps: []Step{{Kind: KindRun}}}
	done := &Plan{ID: "c", Risk: checks.RiskSafe, Done: "already", Steps: []Step{{Kind: KindWrite}}}
	manual := &Plan{ID: "d", Manual: true}
	cases := []struct {
		o    PlanOptions
		p    *Plan
		want bool
	}{
		{PlanOptions{}, safe, true},
		{PlanOptions{}, danger, false},
		{PlanOptions{Named: []string{checks.FixStopGPUProcess}}, danger, true},
		{PlanOptions{}, rooty, false},
		{PlanOptions{IsRoot: true}, rooty, true},
		{PlanOptions{IsRoot: true, NoLive: "--root"}, rooty, false},
		{PlanOptions{NoLive: "--root"}, safe, true},
		{PlanOptions{}, done, false},
		{PlanOptions{}, manual, false},
	}
	for i, c := range cases {
		if got := c.o.WillApply(c.p); got != c.want {
			t.Errorf("%d: %s with %+v: %v, want %v", i, c.p.ID, c.o, got, c.want)
		}
	}
	var b strings.Builder
	WritePlan(&b, []*Plan{danger}, PlanOptions{})
	if !strings.HasPrefix(b.String(), "Plan: 1 fix, 0 doctor can apply in this run.") {
		t.Errorf("%.80s", b.String())
	}
}
