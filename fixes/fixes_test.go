package fixes

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/testenv"
	"github.com/tfdoctor/doctor/rules"
)

// oddName is a folder name with everything that must never reach a shell.
const oddName = "pre fix 'q' \"dq\" $(touch pwned) `touch pwned2` \nnl"

var cvdFix = checks.Fix{ID: checks.FixUnsetCUDAVisibleDevices, Title: "Stop hiding the GPU", Risk: checks.RiskSafe}

// freshShell runs a new interactive bash with only HOME (and PATH) set, as
// a user opening a terminal would, and returns what it sees.
func freshShell(t *testing.T, home string) string {
	t.Helper()
	out, _ := bash(t, home, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}, "-ic", `printf '%s' "${CUDA_VISIBLE_DEVICES-unset}"`)
	return out
}

// conda activates a prefix the way conda does: sourcing activate.d/*.sh
// (the prefix reaches bash as a variable, never as script text).
func activateConda(t *testing.T, dir, prefix string, pre []string, script string) string {
	t.Helper()
	env := append([]string{"P=" + prefix, "PATH=" + os.Getenv("PATH")}, pre...)
	out, _ := bash(t, dir, env, "-c", `for f in "$P"/etc/conda/activate.d/*.sh; do . "$f"; done; `+script)
	return out
}

func TestUnsetCUDAVisibleDevices(t *testing.T) {
	needBash(t)
	e := newEnv(t)
	prefix := filepath.Join(e.dir, oddName)
	bashrc := e.write(filepath.Join(e.home, ".bashrc"), "alias ll='ls -l'\nexport CUDA_VISIBLE_DEVICES=-1\nif true; then\n  export CUDA_VISIBLE_DEVICES=\"\"  # cpu only\nfi\n")
	e.write(filepath.Join(e.home, ".profile"), "# ~/.profile\nexport CUDA_VISIBLE_DEVICES=0\n") // selects a GPU: kept
	e.write(filepath.Join(prefix, "etc", "conda", "activate.d", "env_vars.sh"), "#!/bin/sh\nexport CUDA_VISIBLE_DEVICES='-1'\n")
	e.write(filepath.Join(prefix, "etc", "conda", "deactivate.d", "env_vars.sh"), "unset CUDA_VISIBLE_DEVICES\n")
	state := e.write(filepath.Join(prefix, "conda-meta", "state"), `{"env_vars": {"CUDA_VISIBLE_DEVICES": "-1", "OTHER": "x"}}`)
	etcEnv := e.write(filepath.Join(e.root, "etc", "environment"), "PATH=\"/usr/local/sbin:/usr/bin\"\nCUDA_VISIBLE_DEVICES=-1\n")
	e.m.Env["CUDA_VISIBLE_DEVICES"] = "-1"
	e.m.Env["CONDA_PREFIX"] = prefix
	e.m.Snap = &host.Snapshot{NVML: host.NVML{Available: true, GPUs: []host.GPU{{Index: 0}}}}
	orig := e.tree(e.home, prefix, e.root)

	if got := freshShell(t, e.home); got != "-1" && got != "" {
		t.Fatalf("before the fix a new shell sees %q", got)
	}
	res, out := e.apply(report(cvdFix))
	if o := res.Outcomes[0]; o.State != "applied" || len(o.Changed) != 5 {
		t.Fatalf("outcome %s (%s), changed %v\n%s", o.State, o.Reason, o.Changed, out)
	}
	if v, ok := res.Env[cvd]; !ok || v == nil || *v != "0" {
		t.Errorf("a new shell should see the value ~/.profile keeps (0), got %v", v)
	}
	// The exact lines, and only them, are disabled.
	if got := e.read(bashrc); got != "alias ll='ls -l'\n: # doctor --fix disabled: export CUDA_VISIBLE_DEVICES=-1\nif true; then\n  : # doctor --fix disabled: export CUDA_VISIBLE_DEVICES=\"\"  # cpu only\nfi\n" {
		t.Errorf(".bashrc:\n%s", got)
	}
	if got := e.read(etcEnv); got != "PATH=\"/usr/local/sbin:/usr/bin\"\n# doctor --fix disabled: CUDA_VISIBLE_DEVICES=-1\n" {
		t.Errorf("/etc/environment:\n%s", got)
	}
	if got := e.read(state); got != `{"env_vars": {"OTHER": "x"}}` {
		t.Errorf("conda state: %s", got)
	}
	// A new shell does not see it (with HOME the temp home and no .profile
	// read by a non-login shell), nor does a conda activation.
	if got := freshShell(t, e.home); got != "unset" {
		t.Errorf("a fresh bash -i sees CUDA_VISIBLE_DEVICES=%q", got)
	}
	if got := activateConda(t, e.dir, prefix, nil, `printf '%s' "${CUDA_VISIBLE_DEVICES-unset}"`); got != "unset" {
		t.Errorf("conda activation sets CUDA_VISIBLE_DEVICES=%q", got)
	}
	if !strings.Contains(out, "disabled line 2") {
		t.Errorf("output:\n%s", out)
	}

	// A second run changes nothing, byte for byte.
	fixed := e.tree(e.home, prefix, e.root)
	res2, out2 := e.apply(report(cvdFix))
	if res2.Applied() || res2.Outcomes[0].State != "done" {
		t.Errorf("second run: %s (%s)\n%s", res2.Outcomes[0].State, res2.Outcomes[0].Reason, out2)
	}
	sameTree(t, "second run", fixed, e.tree(e.home, prefix, e.root))

	// Undo restores every file byte for byte.
	u, err := Undo(e.m.StateDir(), os.Stderr, time.Now())
	if err != nil || len(u.Restored) != 4 || len(u.Conflicts) > 0 {
		t.Fatalf("undo: %+v %v", u, err)
	}
	sameTree(t, "undo", orig, e.tree(e.home, prefix, e.root))
	for _, p := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(e.dir, p)); err == nil {
			t.Errorf("a path reached a shell: %s exists", p)
		}
	}
	if u2, _ := Undo(e.m.StateDir(), os.Stderr, time.Now()); u2.Run != "" {
		t.Errorf("a second undo found %s", u2.Run)
	}
}

// Without root, the step in /etc/environment changes nothing and the plan
// says how to run it with sudo; the user's own files are still fixed.
func TestRootOnlyStepWithoutRoot(t *testing.T) {
	e := newEnv(t)
	e.m.IsRoot = func() bool { return false }
	etcEnv := e.write(filepath.Join(e.root, "etc", "environment"), "CUDA_VISIBLE_DEVICES=-1\n")
	e.m.Env["CUDA_VISIBLE_DEVICES"] = "-1"
	before := e.tree(e.root, e.home)
	plans := e.plan(report(cvdFix))
	var plan strings.Builder
	WritePlan(&plan, plans, PlanOptions{IsRoot: false, Self: "doctor"})
	if !strings.Contains(plan.String(), "sudo doctor fix unset-cuda-visible-devices") || !strings.Contains(plan.String(), "(root)") {
		t.Errorf("plan shows no sudo line:\n%s", plan.String())
	}
	s, out := e.session("", false, true)
	res := s.Run(context.Background(), plans)
	if res.Applied() || res.Outcomes[0].State != "needs-root" {
		t.Errorf("outcome %s\n%s", res.Outcomes[0].State, out)
	}
	sameTree(t, "non-root run", before, e.tree(e.root, e.home))
	if e.read(etcEnv) != "CUDA_VISIBLE_DEVICES=-1\n" {
		t.Error("/etc/environment changed")
	}

	// A fix that needs root as a whole is not even asked for.
	e.write(filepath.Join(e.root, "boot", "initrd.img-6.1.0"), "x")
	e.m.Snap = &host.Snapshot{Platform: host.Platform{DistroID: "debian", Kernel: "6.1.0"}, Modules: host.Modules{Packages: []string{"nvidia-driver"}}}
	nv := checks.Fix{ID: checks.FixBlacklistNouveau, Title: "Blacklist nouveau", Risk: checks.RiskModerate, NeedsRoot: true}
	s, out = e.session("y\n", true, false)
	res = s.Run(context.Background(), e.plan(report(nv)))
	if res.Outcomes[0].State != "needs-root" || strings.Contains(out.String(), "[y/N]") {
		t.Errorf("blacklist-nouveau without root: %s\n%s", res.Outcomes[0].State, out)
	}
	if _, err := os.Stat(filepath.Join(e.root, "etc", "modprobe.d")); err == nil {
		t.Error("modprobe.d was written without root")
	}
}

func TestTFAllowGrowthConda(t *testing.T) {
	needBash(t)
	e := newEnv(t)
	prefix := filepath.Join(e.dir, oddName)
	if err := os.MkdirAll(filepath.Join(prefix, "conda-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(prefix, "bin", "python3"), "") // what makes it the examined env
	e.m.Env["CONDA_PREFIX"] = prefix
	orig := e.tree(prefix, e.home)
	fx := checks.Fix{ID: checks.FixTFAllowGrowth, Title: "Allow growth", Risk: checks.RiskSafe}
	res, out := e.apply(report(fx))
	if res.Outcomes[0].State != "applied" || len(res.Outcomes[0].Changed) != 2 {
		t.Fatalf("%s\n%s", res.Outcomes[0].State, out)
	}
	// Activation sets it; deactivation restores the value before, or its absence.
	for _, pre := range []struct {
		env  []string
		want string
	}{{nil, "true|unset"}, {[]string{"TF_FORCE_GPU_ALLOW_GROWTH=false"}, "true|false"}} {
		got := activateConda(t, e.dir, prefix, pre.env, `printf '%s|' "$TF_FORCE_GPU_ALLOW_GROWTH"; for f in "$P"/etc/conda/deactivate.d/*.sh; do . "$f"; done; printf '%s' "${TF_FORCE_GPU_ALLOW_GROWTH-unset}"`)
		if got != pre.want {
			t.Errorf("with %v: activate|deactivate gives %q, want %q", pre.env, got, pre.want)
		}
	}
	fixed := e.tree(prefix, e.home)
	if res2, _ := e.apply(report(fx)); res2.Applied() {
		t.Error("second run changed something")
	}
	sameTree(t, "second run", fixed, e.tree(prefix, e.home))
	if _, err := Undo(e.m.StateDir(), os.Stderr, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The created files and folders (etc/conda/...) are gone again.
	sameTree(t, "undo", orig, e.tree(prefix, e.home))
}

func TestTFAllowGrowthVenv(t *testing.T) {
	needBash(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 not installed")
	}
	e := newEnv(t)
	venv := filepath.Join(e.dir, "my venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		testenv.Missing(t, "python3 -m venv: %v\n%s", err, out)
	}
	e.m.Env["VIRTUAL_ENV"] = venv
	act := filepath.Join(venv, "bin", "activate")
	orig := e.tree(venv, e.home)
	fx := checks.Fix{ID: checks.FixTFAllowGrowth, Title: "Allow growth", Risk: checks.RiskSafe}
	res, out := e.apply(report(fx))
	if res.Outcomes[0].State != "applied" || len(res.Outcomes[0].Changed) != 1 || res.Outcomes[0].Changed[0] != act {
		t.Fatalf("%s %v\n%s", res.Outcomes[0].State, res.Outcomes[0].Changed, out)
	}
	got, _ := bash(t, e.dir, []string{"A=" + act, "PATH=" + os.Getenv("PATH")}, "-c", `. "$A" && printf '%s' "$TF_FORCE_GPU_ALLOW_GROWTH"`)
	if got != "true" {
		t.Errorf("activating the venv gives %q", got)
	}
	fixed := e.tree(venv, e.home)
	if res2, _ := e.apply(report(fx)); res2.Applied() {
		t.Error("second run changed something")
	}
	sameTree(t, "second run", fixed, e.tree(venv, e.home))
	if _, err := Undo(e.m.StateDir(), os.Stderr, time.Now()); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "undo", orig, e.tree(venv, e.home))
}

// With no conda env or venv, the variable goes to the shell rc file.
func TestTFAllowGrowthRC(t *testing.T) {
	needBash(t)
	e := newEnv(t)
	fx := checks.Fix{ID: checks.FixTFAllowGrowth, Title: "Allow growth", Risk: checks.RiskSafe}
	if res, out := e.apply(report(fx)); res.Outcomes[0].State != "applied" {
		t.Fatalf("%s\n%s", res.Outcomes[0].State, out)
	}
	out, _ := bash(t, e.home, []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}, "-ic", `printf '%s' "$TF_FORCE_GPU_ALLOW_GROWTH"`)
	if out != "true" {
		t.Errorf("new shell: %q", out)
	}
}

func TestLDLibraryPathNeverExpands(t *testing.T) {
	needBash(t)
	e := newEnv(t)
	prefix := filepath.Join(e.dir, "env")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	value := "/opt/a b/lib:/x/'q'/\"dq\"/$(touch pwned):/`touch pwned2`:/n\nl"
	fx := checks.Fix{ID: checks.FixLDLibraryPath, Title: "Clean LD_LIBRARY_PATH", Risk: checks.RiskModerate,
		Params: map[string]string{"value": value, "env_kind": "conda", "env_prefix": prefix, "python": "/usr/bin/python3"}}
	if res, out := e.apply(report(fx)); res.Outcomes[0].State != "applied" {
		t.Fatalf("%s\n%s", res.Outcomes[0].State, out)
	}
	got := activateConda(t, e.dir, prefix, []string{"LD_LIBRARY_PATH=/polluted"}, `printf '%s|' "$LD_LIBRARY_PATH"; for f in "$P"/etc/conda/deactivate.d/*.sh; do . "$f"; done; printf '%s' "$LD_LIBRARY_PATH"`)
	if got != value+"|/polluted" {
		t.Errorf("activate|deactivate: %q", got)
	}
	for _, p := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(e.dir, p)); err == nil {
			t.Errorf("the value reached a shell: %s exists", p)
		}
	}
	// "" unsets it while the env is active.
	fx.Params["value"] = ""
	e2 := newEnv(t)
	e2.write(filepath.Join(prefix+"2", "x"), "")
	fx.Params["env_prefix"] = prefix + "2"
	if res, out := e2.apply(report(fx)); res.Outcomes[0].State != "applied" {
		t.Fatalf("%s\n%s", res.Outcomes[0].State, out)
	}
	if got := activateConda(t, e.dir, prefix+"2", []string{"LD_LIBRARY_PATH=/polluted"}, `printf '%s' "${LD_LIBRARY_PATH-unset}"`); got != "unset" {
		t.Errorf("unset: %q", got)
	}
}

func TestXLACudaDataDir(t *testing.T) {
	e := newEnv(t)
	prefix := filepath.Join(e.dir, "env")
	cuda := filepath.Join(e.dir, "cuda")
	e.write(filepath.Join(cuda, "nvvm", "libdevice", "libdevice.10.bc"), "")
	e.m.Env["CONDA_PREFIX"] = prefix
	e.write(filepath.Join(prefix, "bin", "python3"), "") // the examined env has a Python
	e.m.Env["XLA_FLAGS"] = "--xla_gpu_autotune_level=0 --xla_gpu_cuda_data_dir=/old"
	p := PlanFix(e.m, checks.Fix{ID: checks.FixXLACudaDataDir, Params: map[string]string{"dir": cuda}}, nil)
	if !p.Applicable() || len(p.Steps) != 2 {
		t.Fatalf("%+v", p)
	}
	if v := p.Env["XLA_FLAGS"]; v == nil || *v != "--xla_gpu_autotune_level=0 --xla_gpu_cuda_data_dir="+cuda {
		t.Errorf("XLA_FLAGS = %v", v)
	}
	if !strings.Contains(string(p.Steps[0].Content), "export XLA_FLAGS='--xla_gpu_autotune_level=0 --xla_gpu_cuda_data_dir="+cuda+"'") {
		t.Errorf("activate.d:\n%s", p.Steps[0].Content)
	}
	for _, bad := range []string{filepath.Join(e.dir, "a b"), "relative/cuda", filepath.Join(e.dir, "missing")} {
		if p := PlanFix(e.m, checks.Fix{ID: checks.FixXLACudaDataDir, Params: map[string]string{"dir": bad}}, nil); p.Refused == "" {
			t.Errorf("%q not refused", bad)
		}
	}
	// No folder but a wheel: a pinned pip install.
	p = PlanFix(e.m, checks.Fix{ID: checks.FixXLACudaDataDir, Params: map[string]string{"python": "/env/bin/python", "requirement": "nvidia-cuda-nvcc-cu12==12.5.82"}}, nil)
	if len(p.Steps) != 1 || strings.Join(p.Steps[0].Argv, " ") != "/env/bin/python -m pip install nvidia-cuda-nvcc-cu12==12.5.82" {
		t.Errorf("%+v", p.Steps)
	}
}

// fakePython writes a script that records its argv (NUL-separated) in
// $ARGV_OUT, and for `-m ipykernel install` writes a kernel.json as
// ipykernel would. It lives in a folder whose name holds everything a
// shell would interpret.
func fakePython(t *testing.T, e *env, exit int) string {
	dir := filepath.Join(e.dir, oddName, "bin")
	script := `#!/bin/sh
printf '%s\0' "$@" > "$ARGV_OUT"
if [ "$2" = ipykernel ]; then
  k="$JUPYTER_DATA_DIR/kernels/$(printf %s "$6" | tr A-Z a-z)"
  mkdir -p "$k" && printf '{"argv": ["new"]}' > "$k/kernel.json"
fi
exit ` + map[bool]string{true: "0", false: "3"}[exit == 0] + "\n"
	return e.write(filepath.Join(dir, "python"), script)
}

func recorded(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// Commands run as argv: an interpreter path and values with blanks,
// quotes, $() and newlines arrive intact and run nothing.
func TestRunStepsPassArgvIntact(t *testing.T) {
	e := newEnv(t)
	e.m.Root = "/"
	py := fakePython(t, e, 0)
	if err := os.Chmod(py, 0o755); err != nil {
		t.Fatal(err)
	}
	argvOut := filepath.Join(e.dir, "argv")
	jdir := filepath.Join(e.dir, "jupyter")
	e.m.Env["ARGV_OUT"] = argvOut
	e.m.Env["JUPYTER_DATA_DIR"] = jdir
	odd := "My \"TF\" 'env' $(touch pwned) `touch pwned2`\nnext line"
	cases := []struct {
		fix  checks.Fix
		want []string
	}{
		{checks.Fix{ID: checks.FixPipInstallTensorFlow, Risk: checks.RiskModerate, Params: map[string]string{"python": py, "requirement": "tensorflow[and-cuda]==2.20.0"}},
			[]string{"-m", "pip", "install", "tensorflow[and-cuda]==2.20.0"}},
		{checks.Fix{ID: checks.FixPipUninstall, Risk: checks.RiskModerate, Params: map[string]string{"python": py, "packages": "tensorflow  tensorflow-cpu\ttf-nightly"}},
			[]string{"-m", "pip", "uninstall", "-y", "tensorflow", "tensorflow-cpu", "tf-nightly"}},
		{checks.Fix{ID: checks.FixIpykernelInstall, Risk: checks.RiskSafe, Params: map[string]string{"python": py, "name": "TF-gpu", "display_name": odd}},
			[]string{"-m", "ipykernel", "install", "--user", "--name", "TF-gpu", "--display-name", odd}},
	}
	spec := e.write(filepath.Join(jdir, "kernels", "tf-gpu", "kernel.json"), `{"argv": ["old"]}`)
	for _, c := range cases {
		res, out := e.apply(report(c.fix))
		if res.Outcomes[0].State != "applied" {
			t.Fatalf("%s: %s (%s)\n%s", c.fix.ID, res.Outcomes[0].State, res.Outcomes[0].Reason, out)
		}
		if got := recorded(t, argvOut); strings.Join(got, "\x00") != strings.Join(c.want, "\x00") {
			t.Errorf("%s: argv %q, want %q", c.fix.ID, got, c.want)
		}
	}
	for _, p := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(e.dir, p)); err == nil {
			t.Errorf("an argument reached a shell: %s exists", p)
		}
	}
	// The kernel spec the command rewrote comes back with undo.
	if e.read(spec) != `{"argv": ["new"]}` {
		t.Fatalf("kernel.json: %s", e.read(spec))
	}
	u, err := Undo(e.m.StateDir(), os.Stderr, time.Now())
	if err != nil || len(u.NotUndone) != 1 {
		t.Fatalf("undo: %+v %v", u, err)
	}
	if e.read(spec) != `{"argv": ["old"]}` {
		t.Errorf("kernel.json after undo: %s", e.read(spec))
	}

	// A failing command is a failed fix, with its status.
	bad := fakePython(t, e, 3)
	_ = os.Chmod(bad, 0o755)
	res, out := e.apply(report(checks.Fix{ID: checks.FixPipUninstall, Params: map[string]string{"python": bad, "packages": "x"}}))
	if res.Outcomes[0].State != "failed" || !strings.Contains(res.Outcomes[0].Reason, "status 3") {
		t.Errorf("failing command: %s %q\n%s", res.Outcomes[0].State, res.Outcomes[0].Reason, out)
	}
}

func TestRequirementValidation(t *testing.T) {
	for req, ok := range map[string]bool{
		"tensorflow[and-cuda]==2.20.0": true, "tensorflow==2.15.0.post1": true, "tensorflow": true,
		"nvidia-cudnn-cu12>=9.3,<10": true, "tf-keras~=2.16": true,
		"--index-url=http://evil": false, "-e .": false, "tensorflow; rm -rf /": false,
		"tensorflow @ https://x/y.whl": false, "": false, "tensorflow==2.0\n--pre": false, "../x": false,
	} {
		p := PlanFix(&Machine{Env: map[string]string{}}, checks.Fix{ID: checks.FixPipInstallTensorFlow, Params: map[string]string{"python": "/usr/bin/python3", "requirement": req}}, nil)
		if p.Applicable() != ok {
			t.Errorf("%q: applicable %v (%s)", req, p.Applicable(), p.Refused)
		}
	}
}

func TestDriverAndModulePlans(t *testing.T) {
	e := newEnv(t)
	plat := func(distro string, wsl int) {
		e.m.Snap = &host.Snapshot{Platform: host.Platform{DistroID: distro, Kernel: "6.8.0-45-generic", WSL: host.WSL{Version: wsl}},
			Modules: host.Modules{Packages: []string{"nvidia-driver-550"}}}
	}
	argv := func(p *Plan) []string {
		var out []string
		for _, s := range p.Steps {
			if s.Kind == KindRun {
				out = append(out, strings.Join(s.Argv, " "))
			} else {
				out = append(out, string(s.Kind)+" "+strings.TrimPrefix(s.Path, e.root))
			}
		}
		return out
	}
	fx := func(id string, params map[string]string) checks.Fix {
		return checks.Fix{ID: id, Params: params}
	}
	tests := []struct {
		name, distro string
		wsl          int
		fix          checks.Fix
		want         []string
		refused      string
		risk         checks.Risk
	}{
		{"driver ubuntu", "ubuntu", 0, fx(checks.FixInstallDriver, nil), []string{"apt-get update", "ubuntu-drivers install"}, "", checks.RiskDangerous},
		{"driver debian", "debian", 0, fx(checks.FixInstallDriver, nil), []string{"apt-get update", "apt-get install -y linux-headers-6.8.0-45-generic nvidia-driver firmware-misc-nonfree"}, "", checks.RiskDangerous},
		{"driver in WSL", "ubuntu", 2, fx(checks.FixInstallDriver, nil), nil, "never install a Linux NVIDIA driver inside WSL", checks.RiskDangerous},
		{"nouveau debian", "debian", 0, fx(checks.FixBlacklistNouveau, nil), []string{"write /etc/modprobe.d/blacklist-nouveau.conf", "update-initramfs -u"}, "", checks.RiskModerate},
		{"nouveau fedora", "fedora", 0, fx(checks.FixBlacklistNouveau, nil), []string{"write /etc/modprobe.d/blacklist-nouveau.conf", "dracut --force"}, "", checks.RiskModerate},
		{"uvm", "ubuntu", 0, fx(checks.FixLoadNvidiaUVM, nil), nil, "", checks.RiskSafe},
		{"group", "ubuntu", 0, fx(checks.FixDeviceGroup, map[string]string{"group": "video", "user": "alice"}), []string{"usermod -aG video alice"}, "", checks.RiskModerate},
		{"group injection", "ubuntu", 0, fx(checks.FixDeviceGroup, map[string]string{"group": "video", "user": "-o alice"}), nil, "not a valid account name", checks.RiskModerate},
		{"dkms", "ubuntu", 0, fx(checks.FixDKMSRebuild, nil), []string{"apt-get install -y linux-headers-6.8.0-45-generic", "dkms autoinstall -k 6.8.0-45-generic", "modprobe nvidia"}, "", checks.RiskModerate},
		{"wsl remove", "ubuntu", 2, fx(checks.FixWSLRemoveLinuxDriver, map[string]string{"packages": "nvidia-driver-535 libnvidia-compute-535"}),
			[]string{"apt-get remove --purge -y nvidia-driver-535 libnvidia-compute-535", "write /etc/ld.so.conf.d/ld.wsl.conf", "ldconfig"}, "", checks.RiskModerate},
		{"wsl remove takes others", "ubuntu", 2, fx(checks.FixWSLRemoveLinuxDriver, map[string]string{"packages": "libcuda1"}),
			[]string{"apt-get remove --purge -y libcuda1", "write /etc/ld.so.conf.d/ld.wsl.conf", "ldconfig"}, "", checks.RiskDangerous},
		{"dkms rhel", "rhel", 0, fx(checks.FixDKMSRebuild, nil), []string{"dnf install -y kernel-devel-6.8.0-45-generic", "dkms autoinstall -k 6.8.0-45-generic", "modprobe nvidia"}, "", checks.RiskModerate},
		{"wsl remove refuses others", "ubuntu", 2, fx(checks.FixWSLRemoveLinuxDriver, map[string]string{"packages": "nvidia-driver-535 libc6"}), nil, `"libc6" does not look like an NVIDIA driver package`, checks.RiskModerate},
		{"wsl ldconf", "ubuntu", 2, fx(checks.FixWSLLdConf, nil), []string{"write /etc/ld.so.conf.d/ld.wsl.conf", "ldconfig"}, "", checks.RiskSafe},
		{"wsl ldconf outside WSL", "ubuntu", 0, fx(checks.FixWSLLdConf, nil), nil, "not WSL", checks.RiskSafe},
	}
	// apt-get -s: purging libcuda1 takes nvidia-cuda-toolkit with it.
	e.m.AptGet = filepath.Join(e.dir, "apt-get")
	e.write(e.m.AptGet, "#!/bin/sh\nfor p in \"$@\"; do case $p in -*|remove) ;; *) echo \"Purg $p:amd64 [1.0]\";; esac; done\ncase \"$*\" in *libcuda1*) echo 'Purg nvidia-cuda-toolkit [12.0.140~12.0.1-4build4]';; esac\n")
	if err := os.Chmod(e.m.AptGet, 0o755); err != nil {
		t.Fatal(err)
	}
	// Debian's driver needs contrib, non-free and non-free-firmware.
	e.write(filepath.Join(e.root, "etc/apt/sources.list.d/debian.sources"), "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main contrib non-free non-free-firmware\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plat(tt.distro, tt.wsl)
			p := PlanFix(e.m, tt.fix, nil)
			if tt.refused != "" {
				if !strings.Contains(p.Refused, tt.refused) {
					t.Errorf("refused %q, want %q", p.Refused, tt.refused)
				}
				return
			}
			if p.Refused != "" {
				t.Fatalf("refused: %s", p.Refused)
			}
			if p.Risk != tt.risk || !p.NeedsRoot {
				t.Errorf("risk %s, needs root %v", p.Risk, p.NeedsRoot)
			}
			if tt.want != nil && strings.Join(argv(p), "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(argv(p), "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	// What else apt would remove is shown; a simulation that cannot run
	// makes the removal dangerous too (unknown is not absent).
	plat("ubuntu", 2)
	p := PlanFix(e.m, fx(checks.FixWSLRemoveLinuxDriver, map[string]string{"packages": "libcuda1"}), nil)
	if !strings.Contains(strings.Join(p.Notes, "\n"), "also removes: nvidia-cuda-toolkit") {
		t.Errorf("notes: %q", p.Notes)
	}
	e.m.AptGet = filepath.Join(e.dir, "no-such-apt-get")
	p = PlanFix(e.m, fx(checks.FixWSLRemoveLinuxDriver, map[string]string{"packages": "nvidia-driver-535"}), nil)
	if p.Risk != checks.RiskDangerous || !strings.Contains(strings.Join(p.Notes, "\n"), "could not simulate") {
		t.Errorf("no simulation: %s %q", p.Risk, p.Notes)
	}
	// Without non-free-firmware (only "non-free" enabled), the Debian
	// driver install is refused and says what to enable.
	e.write(filepath.Join(e.root, "etc/apt/sources.list.d/debian.sources"), "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main non-free\n")
	plat("debian", 0)
	e.m.Snap.Platform.DistroVersion = "12"
	if p := PlanFix(e.m, fx(checks.FixInstallDriver, nil), nil); !strings.Contains(p.Refused, "lack contrib, non-free-firmware") {
		t.Errorf("debian without contrib/non-free-firmware: %q", p.Refused)
	}
	// nvidia_uvm inside a container is the host's to load.
	e.m.Snap = &host.Snapshot{Platform: host.Platform{DistroID: "ubuntu", Container: "docker"}}
	if p := PlanFix(e.m, fx(checks.FixLoadNvidiaUVM, nil), nil); p.Applicable() || !strings.Contains(p.Refused, "host") {
		t.Errorf("uvm in a container: %+v", p)
	}
	// A finding that calls install-driver safe is still dangerous.
	plat("ubuntu", 0)
	if p := PlanFix(e.m, checks.Fix{ID: checks.FixInstallDriver, Risk: checks.RiskSafe}, nil); p.Risk != checks.RiskDangerous {
		t.Errorf("install-driver risk %s", p.Risk)
	}
}

// blacklist-nouveau as root on a --root tree: the file is written, the
// commands (which would act on this machine) are not run; a second run
// after the initramfs was rebuilt has nothing to do.
func TestBlacklistNouveauOnRootTree(t *testing.T) {
	e := newEnv(t)
	e.m.Snap = &host.Snapshot{Platform: host.Platform{DistroID: "ubuntu", Kernel: "6.8.0"}, Modules: host.Modules{Packages: []string{"nvidia-driver-550"}}}
	fx := checks.Fix{ID: checks.FixBlacklistNouveau, Title: "Blacklist nouveau", Risk: checks.RiskModerate, NeedsRoot: true}
	plans := e.plan(report(fx))
	s, out := e.session("", false, true)
	s.NoLive = "--root tree"
	res := s.Run(context.Background(), plans)
	if o := res.Outcomes[0]; o.State != "partial" || len(o.Changed) != 1 {
		t.Fatalf("%s %v\n%s", o.State, o.Changed, out)
	}
	conf := filepath.Join(e.root, "etc", "modprobe.d", "blacklist-nouveau.conf")
	if !strings.Contains(e.read(conf), "blacklist nouveau\noptions nouveau modeset=0\n") {
		t.Error(e.read(conf))
	}
	if !strings.Contains(out.String(), "not run: --root tree") || !strings.Contains(strings.Join(plans[0].Notes, "\n"), "Reboot") {
		t.Errorf("output:\n%s\nnotes %v", out, plans[0].Notes)
	}
	initrd := e.write(filepath.Join(e.root, "boot", "initrd.img-6.8.0"), "rebuilt")
	later := time.Now().Add(time.Minute)
	_ = os.Chtimes(initrd, later, later)
	if p := PlanFix(e.m, fx, nil); p.Done == "" {
		t.Errorf("second plan: %+v", p.Steps)
	}
}

func TestConsent(t *testing.T) {
	safe := checks.Fix{ID: checks.FixTFAllowGrowth, Title: "Allow growth", Risk: checks.RiskSafe}
	moderate := checks.Fix{ID: checks.FixLDLibraryPath, Title: "Clean", Risk: checks.RiskModerate, Params: map[string]string{"value": "/a"}}
	tests := []struct {
		name    string
		tty     bool
		yes     bool
		answers string
		want    []string
		asked   int
	}{
		{"no terminal, no --yes", false, false, "", []string{"skipped", "skipped"}, 0},
		{"no terminal, --yes", false, true, "", []string{"applied", "applied"}, 0},
		{"terminal: yes then no", true, false, "y\nn\n", []string{"applied", "declined"}, 2},
		{"terminal: YES then nothing", true, false, "YES\n", []string{"applied", "declined"}, 2},
		{"terminal, --yes", true, true, "", []string{"applied", "applied"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, out := e.session(tt.answers, tt.tty, tt.yes)
			res := s.Run(context.Background(), e.plan(report(safe, moderate)))
			for i, w := range tt.want {
				if res.Outcomes[i].State != w {
					t.Errorf("fix %d: %s (%s), want %s", i, res.Outcomes[i].State, res.Outcomes[i].Reason, w)
				}
			}
			if n := strings.Count(out.String(), "[y/N]"); n != tt.asked {
				t.Errorf("asked %d questions, want %d:\n%s", n, tt.asked, out)
			}
		})
	}
}

// A failure between steps leaves every file old or new; undo restores all.
func TestFailureBetweenSteps(t *testing.T) {
	for k := 0; k <= 3; k++ {
		e := newEnv(t)
		files := seedCVD(t, e, 4)
		orig := e.tree(e.home, e.dir+"/prefix")
		plans := e.plan(report(cvdFix))
		s, _ := e.session("", false, true)
		s.stepHook = func(p *Plan, i int) error {
			if i == k {
				return os.ErrDeadlineExceeded
			}
			return nil
		}
		res := s.Run(context.Background(), plans)
		if res.Outcomes[0].State != "failed" {
			t.Fatalf("k=%d: %s", k, res.Outcomes[0].State)
		}
		for i, f := range files {
			got := e.read(f.path)
			want := f.old
			if i < k {
				want = f.new
			}
			if got != want {
				t.Errorf("k=%d: %s = %q, want %q", k, f.path, got, want)
			}
		}
		if _, err := Undo(e.m.StateDir(), os.Stderr, time.Now()); err != nil {
			t.Fatal(err)
		}
		sameTree(t, "undo", orig, e.tree(e.home, e.dir+"/prefix"))
	}
}

type seeded struct{ path, old, new string }

// seedCVD writes n conda activate.d scripts (and ~/.bashrc) that each hide
// the GPU, and returns them with their expected content after the fix, in
// the order the plan edits them.
func seedCVD(t *testing.T, e *env, n int) []seeded {
	prefix := filepath.Join(e.dir, "prefix")
	e.m.Env["CONDA_PREFIX"] = prefix
	e.m.Env["CUDA_VISIBLE_DEVICES"] = "-1"
	var out []seeded
	line := "export CUDA_VISIBLE_DEVICES=-1"
	old := "# set by a tutorial\n" + line + "\n"
	new := "# set by a tutorial\n: # doctor --fix disabled: " + line + "\n"
	out = append(out, seeded{e.write(filepath.Join(e.home, ".bashrc"), old), old, new})
	for i := 0; i < n; i++ {
		p := filepath.Join(prefix, "etc", "conda", "activate.d", "v"+string(rune('a'+i/26))+string(rune('a'+i%26))+".sh")
		out = append(out, seeded{e.write(p, old), old, new})
	}
	return out
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(dir); err == nil || !strings.Contains(err.Error(), "another doctor fix run") {
		t.Errorf("second lock: %v", err)
	}
	l.Release()
	l2, err := AcquireLock(dir)
	if err != nil {
		t.Errorf("after release: %v", err)
	}
	l2.Release()
}

// A file edited after the fix is left alone by undo.
func TestUndoLeavesLaterEdits(t *testing.T) {
	e := newEnv(t)
	files := seedCVD(t, e, 1)
	if res, out := e.apply(report(cvdFix)); !res.Applied() {
		t.Fatal(out)
	}
	e.write(files[0].path, "edited by hand\n")
	var w strings.Builder
	u, err := Undo(e.m.StateDir(), &w, time.Now())
	if err != nil || len(u.Conflicts) != 1 || u.Conflicts[0] != files[0].path {
		t.Fatalf("%+v %v", u, err)
	}
	if e.read(files[0].path) != "edited by hand\n" || e.read(files[1].path) != files[1].old {
		t.Error("undo touched the edited file, or skipped the other")
	}
	if !u.Partial || len(u.Restored) != 1 || u.Restored[0] != files[1].path || u.Backups[files[0].path] == "" {
		t.Errorf("result %+v", u)
	}
	if b, err := os.ReadFile(u.Backups[files[0].path]); err != nil || string(b) != files[0].old {
		t.Errorf("backup named for the conflict holds %q (%v)", b, err)
	}

	// The run stays undoable for what is left: a second undo finds it,
	// skips the file restored already and leaves the edit alone again.
	u2, err := Undo(e.m.StateDir(), &w, time.Now())
	if err != nil || u2.Run != u.Run || !u2.Partial || len(u2.Restored)+len(u2.Unchanged) != 0 || len(u2.Conflicts) != 1 {
		t.Fatalf("second undo: %+v %v", u2, err)
	}
	if e.read(files[0].path) != "edited by hand\n" {
		t.Error("the second undo overwrote the edit")
	}

	// Once the user puts the old content back, the run is undone.
	e.write(files[0].path, files[0].old)
	u3, err := Undo(e.m.StateDir(), &w, time.Now())
	if err != nil || u3.Run != u.Run || u3.Partial || len(u3.Unchanged) != 1 {
		t.Fatalf("third undo: %+v %v", u3, err)
	}
	if u4, _ := Undo(e.m.StateDir(), &w, time.Now()); u4.Run != "" {
		t.Errorf("a fourth undo found %s", u4.Run)
	}
}

func TestJournalRecordsEverything(t *testing.T) {
	e := newEnv(t)
	seedCVD(t, e, 1)
	res, _ := e.apply(report(cvdFix))
	b, err := os.ReadFile(filepath.Join(res.Journal, "journal.json"))
	if err != nil {
		t.Fatal(err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil || j.Schema != JournalSchema || j.Finished == nil || len(j.Entries) != 2 {
		t.Fatalf("%s", b)
	}
	for _, en := range j.Entries {
		if en.State != "done" || en.Backup == "" || en.Before == "" || en.After == "" {
			t.Errorf("entry %+v", en)
		}
		if st, err := os.Stat(filepath.Join(res.Journal, en.Backup)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("backup %s: %v", en.Backup, err)
		}
	}
}

// Without names, the fixes of every cause are planned, the root cause's
// first, and findings that a cause explains (they rest on it) wait for a
// later run; named, those are planned too.
func TestBuildPlansCausesDefersConsequences(t *testing.T) {
	e := newEnv(t)
	root := checks.Finding{ID: "kernel.nvidia", Check: "kernel.nvidia", Cause: "driver_missing", Severity: checks.SevError, Link: checks.LinkKernel, Title: "no driver",
		Fixes: []checks.Fix{{ID: checks.FixInstallDriver, Risk: checks.RiskDangerous, NeedsRoot: true, Steps: []string{"sudo apt-get install nvidia-driver"}}}}
	consequence := checks.Finding{ID: "driver.device_nodes", Check: "driver.device_nodes", Cause: "device_node_permission", Severity: checks.SevError, Link: checks.LinkDriver, Title: "no nodes",
		Fixes: []checks.Fix{{ID: checks.FixCreateDeviceNodes, Risk: checks.RiskSafe, NeedsRoot: true}}}
	independent := checks.Finding{ID: "env.cuda_visible_devices", Check: "env.cuda_visible_devices", Cause: "cuda_visible_devices_hides_gpu", Severity: checks.SevError, Link: checks.LinkEnvironment, Title: "hidden", Fixes: []checks.Fix{cvdFix}}
	r := rules.Assemble([]checks.Finding{independent, consequence, root})
	plans, _, _ := Build(e.m, r, nil)
	var ids []string
	for _, p := range plans {
		ids = append(ids, p.ID)
	}
	if strings.Join(ids, " ") != checks.FixInstallDriver+" "+checks.FixUnsetCUDAVisibleDevices || Deferred(r) != 1 {
		t.Errorf("unnamed: plans %v, deferred %d; want the driver install, then the variable, and the device nodes deferred", ids, Deferred(r))
	}
	plans, unused, _ := Build(e.m, r, []string{checks.FixCreateDeviceNodes, checks.FixReboot})
	if len(plans) != 1 || plans[0].ID != checks.FixCreateDeviceNodes || len(unused) != 1 || unused[0] != checks.FixReboot {
		t.Errorf("named: %d plans, unused %v", len(plans), unused)
	}
	if _, _, err := Build(e.m, r, []string{"no-such-fix"}); err == nil {
		t.Error("unknown fix accepted")
	}
}

// An interrupt while doctor waits for an answer ends the wait: nothing is
// applied, nothing hangs.
func TestQuestionInterrupted(t *testing.T) {
	e := newEnv(t)
	seedCVD(t, e, 1)
	pr, pw := io.Pipe() // a terminal where nobody types
	defer pw.Close()
	s, out := e.session("", true, false)
	s.In = pr
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan *Result)
	go func() {
		done <- s.Run(ctx, e.plan(report(cvdFix, checks.Fix{ID: checks.FixTFAllowGrowth, Risk: checks.RiskSafe})))
	}()
	select {
	case res := <-done:
		if res.Applied() || res.Outcomes[0].Reason != "interrupted" || res.Outcomes[1].Reason != "interrupted" {
			t.Errorf("%+v %+v\n%s", res.Outcomes[0], res.Outcomes[1], out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the question did not end with the interrupt")
	}
}

// With a conda env and a venv both active, the fix acts for the
// interpreter doctor examined: the one whose bin comes first on PATH
// (host.ResolvePython), here the venv.
func TestEnvScopeFollowsTheOneResolver(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 not installed")
	}
	e := newEnv(t)
	venv, conda := filepath.Join(e.dir, "venv"), filepath.Join(e.dir, "conda")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		testenv.Missing(t, "python3 -m venv: %v\n%s", err, out)
	}
	e.write(filepath.Join(conda, "conda-meta", "history"), "")
	if err := os.MkdirAll(filepath.Join(conda, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(conda, "bin", "python3")); err != nil {
		t.Fatal(err)
	}
	e.m.Env["CONDA_PREFIX"], e.m.Env["VIRTUAL_ENV"] = conda, venv
	fx := checks.Fix{ID: checks.FixTFAllowGrowth, Title: "Allow growth", Risk: checks.RiskSafe}
	for _, c := range []struct {
		first string
		want  scopeKind
	}{{venv, scopeVenv}, {conda, scopeConda}} {
		other := map[string]string{venv: conda, conda: venv}[c.first]
		e.m.Env["PATH"] = filepath.Join(c.first, "bin") + ":" + filepath.Join(other, "bin") + ":" + os.Getenv("PATH")
		if got := e.m.envScope(PlanFix(e.m, fx, nil)); got.kind != c.want || got.prefix != c.first {
			t.Errorf("%s first on PATH: scope %s %s, want %s %s", c.first, got.kind, got.prefix, c.want, c.first)
		}
	}
	// The snapshot's interpreter, when there is one, decides.
	e.m.Snap = &host.Snapshot{Python: &host.Python{Found: true, Kind: "conda", Prefix: conda, Executable: filepath.Join(conda, "bin", "python3")}}
	e.m.Env["PATH"] = filepath.Join(venv, "bin") + ":" + os.Getenv("PATH")
	if got := e.m.envScope(PlanFix(e.m, fx, nil)); got.kind != scopeConda {
		t.Errorf("with the snapshot's conda Python: scope %s", got.kind)
	}
}

// The plan's order follows what rests on what, not the order findings come
// in: the driver install before the fix of a finding that assumes a driver.
func TestDependencyOrder(t *testing.T) {
	nodes := &checks.Finding{ID: "driver.device_nodes", Check: "driver.device_nodes"}
	cvd := &checks.Finding{ID: "env.cuda_visible_devices", Check: "env.cuda_visible_devices"}
	driver := &checks.Finding{ID: "kernel.nvidia", Check: "kernel.nvidia"}
	rung := &checks.Finding{ID: "runtime.driver_compute", Check: "runtime.driver_compute", Cause: "cuda_visible_devices_hides_gpu"}
	var got []string
	for _, f := range dependencyOrder([]*checks.Finding{rung, nodes, cvd, driver}) {
		got = append(got, f.ID)
	}
	want := "env.cuda_visible_devices kernel.nvidia driver.device_nodes runtime.driver_compute"
	if strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

// As root, doctor applies system steps but not steps in another user's
// environment: a .bashrc in a home that another user owns is printed, not
// edited. As that user, the same plan runs. (Needs root to give the home
// to another user.)
func TestRootLeavesAnotherUsersEnvironment(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make files another user owns")
	}
	e := newEnv(t)
	seeded := seedCVD(t, e, 0)
	rc := seeded[0].path
	const other = 424243
	for _, p := range []string{e.home, rc} {
		if err := os.Chown(p, other, other); err != nil {
			t.Fatal(err)
		}
	}
	plans, _, _ := Build(e.m, report(cvdFix), nil)
	s, out := e.session("", false, true)
	res := s.Run(context.Background(), plans)
	if res.Applied() || e.read(rc) != seeded[0].old {
		t.Fatalf("root changed another user's .bashrc:\n%s", out)
	}
	if o := res.Outcomes[0]; o.State != "other-user" || !strings.Contains(o.Reason, rc+" belongs to user 424243") || !strings.Contains(o.Reason, "doctor fix unset-cuda-visible-devices") {
		t.Errorf("outcome %s: %s", o.State, o.Reason)
	}
	// The same plan as that user (doctor acting for uid 424243, not root).
	e.m.IsRoot = func() bool { return false }
	e.m.UID = other
	s, out = e.session("", false, true)
	if res := s.Run(context.Background(), plans); !res.Applied() || e.read(rc) != seeded[0].new {
		t.Errorf("as the owner, the line was not disabled:\n%s", out)
	}
}
