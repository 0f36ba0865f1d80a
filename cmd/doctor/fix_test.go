package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/fixes"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/iostreams"
)

// fixEnv is a user with a temporary home whose ~/.bashrc hides the GPU, and
// an empty --root tree.
type fixEnv struct {
	dir, home, root, state, bashrc string
}

const hiding = "# from a tutorial\nexport CUDA_VISIBLE_DEVICES=-1\n"

func newFixEnv(t *testing.T) *fixEnv {
	t.Helper()
	d := t.TempDir()
	e := &fixEnv{dir: d, home: filepath.Join(d, "home"), root: filepath.Join(d, "root"), state: filepath.Join(d, "state")}
	for _, p := range []string{e.home, e.root} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.bashrc = filepath.Join(e.home, ".bashrc")
	if err := os.WriteFile(e.bashrc, []byte(hiding), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", e.home)
	t.Setenv("XDG_STATE_HOME", e.state)
	t.Setenv("CUDA_VISIBLE_DEVICES", "-1")
	t.Setenv("CONDA_PREFIX", "")
	t.Setenv("VIRTUAL_ENV", "")
	t.Setenv("SHELL", "/bin/bash")
	return e
}

func (e *fixEnv) read(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(e.bashrc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// doctor runs the CLI with answers on standard input; tty sets the
// streams' terminal flags, as a real terminal would.
func doctor(t *testing.T, tty bool, answers string, args ...string) (int, string, string) {
	t.Helper()
	return doctorWith(t, NewFactory(nil), tty, answers, args...)
}

// doctorWith is doctor with the dependencies of f.
func doctorWith(t *testing.T, f *Factory, tty bool, answers string, args ...string) (int, string, string) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	ios.SetTTY(tty, tty, tty)
	in.WriteString(answers)
	f.IOStreams = ios
	code := MainWith(context.Background(), append([]string{"doctor"}, args...), f)
	return code, out.String(), errOut.String()
}

func (e *fixEnv) args(extra ...string) []string {
	return append([]string{"--root", e.root, "--quick", "--check", "env.cuda_visible_devices"}, extra...)
}

func TestFixYesDisablesTheLineForNewShells(t *testing.T) {
	e := newFixEnv(t)
	code, out, errOut := doctor(t, false, "", append([]string{"--fix", "--yes"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got := e.read(t); got != "# from a tutorial\n: # doctor --fix disabled: export CUDA_VISIBLE_DEVICES=-1\n" {
		t.Errorf(".bashrc:\n%s", got)
	}
	// The second examination was given the new shell's environment;
	// doctor's own environment is left as it was.
	if v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES"); !ok || v != "-1" {
		t.Errorf("doctor changed its own environment: CUDA_VISIBLE_DEVICES=%q (set %v)", v, ok)
	}
	for _, want := range []string{"Before: error", "- export CUDA_VISIBLE_DEVICES=-1", "✓ fixed: CUDA_VISIBLE_DEVICES=\"-1\" hides every GPU",
		"After: ok", "unset CUDA_VISIBLE_DEVICES", "fix --undo"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := exec.LookPath("bash"); err == nil {
		cmd := exec.Command("bash", "-ic", `printf %s "${CUDA_VISIBLE_DEVICES-unset}"`)
		cmd.Env = []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}
		cmd.Dir = e.home
		got, err := cmd.Output()
		if err != nil || string(got) != "unset" {
			t.Errorf("a new shell sees %q (%v)", got, err)
		}
	}

	// Undo through the CLI restores the file byte for byte.
	code, out, _ = doctor(t, false, "", "fix", "--undo")
	if code != 0 || e.read(t) != hiding || !strings.Contains(out, "restored "+e.bashrc) {
		t.Errorf("undo: exit %d, .bashrc %q\n%s", code, e.read(t), out)
	}
	code, out, _ = doctor(t, false, "", "fix", "--undo")
	if code != 0 || !strings.Contains(out, "Nothing to undo") {
		t.Errorf("second undo: %d\n%s", code, out)
	}
}

func TestFixConsent(t *testing.T) {
	q := `Apply "unset-cuda-visible-devices" (Stop hiding the GPU, safe)? [y/N]`
	tests := []struct {
		name    string
		tty     bool
		answers string
		args    []string
		code    int
		changed bool
		asked   bool
		errMsg  string
	}{
		{"no terminal, no --yes", false, "y\n", []string{"--fix"}, 2, false, false, "no terminal to ask"},
		{"--dry-run", true, "y\n", []string{"--fix", "--dry-run"}, 1, false, false, ""},
		{"terminal, no", true, "n\n", []string{"--fix"}, 1, false, true, ""},
		{"terminal, end of input", true, "", []string{"--fix"}, 1, false, true, ""},
		{"terminal, yes", true, "y\n", []string{"--fix"}, 0, true, true, ""},
		{"terminal, --yes: no question for a safe fix", true, "", []string{"--fix", "--yes"}, 0, true, false, ""},
		{"doctor fix ID on a terminal", true, "yes\n", []string{"fix", "unset-cuda-visible-devices"}, 0, true, true, ""},
		{"doctor fix of another ID changes nothing", true, "y\n", []string{"fix", "tf-allow-growth"}, 1, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFixEnv(t)
			code, out, errOut := doctor(t, tt.tty, tt.answers, append(tt.args, e.args()...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tt.code, out, errOut)
			}
			if changed := e.read(t) != hiding; changed != tt.changed {
				t.Errorf("changed %v, want %v", changed, tt.changed)
			}
			if asked := strings.Contains(out, q); asked != tt.asked {
				t.Errorf("asked %v, want %v:\n%s", asked, tt.asked, out)
			}
			if tt.errMsg != "" && !strings.Contains(errOut, tt.errMsg) {
				t.Errorf("stderr lacks %q: %s", tt.errMsg, errOut)
			}
			// A fix left alone is said once, in the summary.
			if n := strings.Count(out, "unset-cuda-visible-devices: not applied"); n > 1 {
				t.Errorf("'not applied' said %d times:\n%s", n, out)
			}
		})
	}
}

func TestFixUsageErrors(t *testing.T) {
	e := newFixEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fix", "no-such-fix"}, `unknown fix "no-such-fix"`},
		{[]string{"--fix", "--from", "x.json"}, "--from only evaluates"},
		{[]string{"fix", "--undo", "--yes"}, "takes no fix IDs"},
	} {
		code, _, errOut := doctor(t, false, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
	// A second run waits for nobody: it stops at once.
	lock, err := fixes.AcquireLock(filepath.Join(e.state, "doctor"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	code, _, errOut := doctor(t, false, "", append([]string{"--fix", "--yes"}, e.args()...)...)
	if code != 2 || !strings.Contains(errOut, "another doctor fix run is in progress") || e.read(t) != hiding {
		t.Errorf("locked: exit %d, %s", code, errOut)
	}
}

// fakeGPU is NVML reporting the given processes for as long as they run.
type fakeGPU struct {
	mu    sync.Mutex
	procs []host.GPUProcess
}

func (f *fakeGPU) Read(ctx context.Context) (host.NVML, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var live []host.GPUProcess
	var used uint64
	for _, p := range f.procs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			continue
		}
		live = append(live, p)
		used += p.UsedMiB
	}
	return host.NVML{Available: true, DriverVersion: "580.159.04", CUDADriverVersion: 13000,
		GPUs: []host.GPU{{Index: 0, Name: "NVIDIA H200", MemoryTotalMiB: 143771, MemoryUsedMiB: used, ComputeMode: "Default",
			ProcessesSupported: true, Processes: live}}}, nil
}

func startSleep(t *testing.T, secs string) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", secs)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t.Cleanup(func() { _ = c.Process.Kill(); <-done })
	for i := 0; i < 200; i++ {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(c.Process.Pid) + "/cmdline"); strings.HasPrefix(string(b), "sleep") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// doctor fix stop-gpu-process on a terminal asks per process; only the
// confirmed PID is stopped.
func TestFixStopGPUProcessAsksPerPID(t *testing.T) {
	newFixEnv(t)
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	os.Unsetenv("CUDA_VISIBLE_DEVICES")
	a, b := startSleep(t, "60"), startSleep(t, "61")
	gpu := &fakeGPU{procs: []host.GPUProcess{{PID: a.Process.Pid, UsedMiB: 20480}, {PID: b.Process.Pid, UsedMiB: 10240}}}
	f := NewFactory(nil)
	f.GPU = func() host.GPUSource { return gpu }

	code, out, errOut := doctorWith(t, f, true, "y\nn\n", "fix", "stop-gpu-process", "--check", "env.gpu_memory", "--quick", "--grace", "2s")
	qa := "Stop PID " + strconv.Itoa(a.Process.Pid) + " (user "
	qb := "Stop PID " + strconv.Itoa(b.Process.Pid) + " (user "
	if !strings.Contains(out, qa) || !strings.Contains(out, qb) || !strings.Contains(out, "20.0 GiB on GPU 0") {
		t.Errorf("per-process questions missing:\n%s\n%s", out, errOut)
	}
	if alive(a.Process.Pid) {
		t.Errorf("confirmed PID %d still runs", a.Process.Pid)
	}
	if !alive(b.Process.Pid) {
		t.Errorf("declined PID %d was stopped", b.Process.Pid)
	}
	if code != 0 { // the remaining 10 GiB is a warning, not an error
		t.Errorf("exit %d\n%s", code, out)
	}
	if strings.Contains(out, "✓ tf-allow-growth") {
		t.Errorf("a fix that was not named ran:\n%s", out)
	}
	t.Logf("doctor fix stop-gpu-process:\n%s", out)

	// --yes alone never stops a process.
	c := startSleep(t, "62")
	gpu.mu.Lock()
	gpu.procs = append(gpu.procs, host.GPUProcess{PID: c.Process.Pid, UsedMiB: 140000})
	gpu.mu.Unlock()
	code, out, _ = doctorWith(t, f, false, "", "--fix", "--yes", "--check", "env.gpu_memory", "--quick")
	if !alive(c.Process.Pid) || !alive(b.Process.Pid) {
		t.Errorf("--fix --yes stopped a process:\n%s", out)
	}
	if !strings.Contains(out, "dangerous") || code != 1 {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestUndoAfterAnEdit: undo leaves alone a file edited since the fix, says
// so (not "Undid"), and the run stays undoable until that file is settled.
func TestUndoAfterAnEdit(t *testing.T) {
	e := newFixEnv(t)
	if code, out, errOut := doctor(t, false, "", append([]string{"--fix", "--yes"}, e.args()...)...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	edited := "# mine now\n"
	os.WriteFile(e.bashrc, []byte(edited), 0o644)
	for i := 0; i < 2; i++ {
		code, out, _ := doctor(t, false, "", "fix", "--undo")
		if code != 1 || e.read(t) != edited {
			t.Fatalf("undo %d: exit %d, .bashrc %q\n%s", i, code, e.read(t), out)
		}
		for _, want := range []string{"✗ not restored: " + e.bashrc + " changed after the fix; your version stays (doctor's backup: ", "stays undoable"} {
			if !strings.Contains(out, want) {
				t.Errorf("undo %d lacks %q:\n%s", i, want, out)
			}
		}
		if strings.Contains(out, "Undid ") || strings.Contains(out, "Nothing to undo") {
			t.Errorf("undo %d claims it undid the run:\n%s", i, out)
		}
	}
	os.WriteFile(e.bashrc, []byte(hiding), 0o644)
	code, out, _ := doctor(t, false, "", "fix", "--undo")
	if code != 0 || !strings.Contains(out, "Undid ") || !strings.Contains(out, e.bashrc+" already held its old content") {
		t.Errorf("undo after putting the file back: exit %d\n%s", code, out)
	}
	if code, out, _ := doctor(t, false, "", "fix", "--undo"); code != 0 || !strings.Contains(out, "Nothing to undo") {
		t.Errorf("last undo: exit %d\n%s", code, out)
	}
}

// TestFixRefusesAPlantedStateFolder: `doctor fix --undo` as root over a
// state folder that another user wrote (a lock that links to a victim, a
// journal with the attacker's backup) changes nothing and exits 2 with why.
func TestFixRefusesAPlantedStateFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the planted files belong to another user (chown)")
	}
	const nobody = 65534
	for _, plant := range []string{"lock link", "journal"} {
		t.Run(plant, func(t *testing.T) {
			e := newFixEnv(t)
			victim := filepath.Join(e.dir, "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(e.state, "doctor")
			run := filepath.Join(state, "runs", "29990101T000000.000000000Z-1")
			if err := os.MkdirAll(filepath.Join(run, "backups"), 0o700); err != nil {
				t.Fatal(err)
			}
			switch plant {
			case "lock link":
				if err := os.Symlink(victim, filepath.Join(state, "fix.lock")); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(state, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			case "journal":
				os.WriteFile(filepath.Join(run, "backups", "000-victim"), []byte("owned\n"), 0o600)
				j := `{"schema":"doctor.fix-journal/v1","started":"2999-01-01T00:00:00Z","entries":[{"fix":"x","kind":"write","state":"done",` +
					`"path":"` + victim + `","existed":true,"mode":493,"backup":"backups/000-victim",` +
					`"before_sha256":"e3f2a6e5ad0ab0aba0cbbf6a7a6f20b2a4ac7c1ef00c4b2e8a2b7e4d3d5f7b6f"}]}`
				os.WriteFile(filepath.Join(run, "journal.json"), []byte(j), 0o600)
				if err := os.Chown(filepath.Join(run, "journal.json"), nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := doctor(t, false, "", "fix", "--undo")
			if code != 2 || !strings.Contains(errOut, "refusing "+state) || !strings.Contains(errOut, "uid 65534") {
				t.Errorf("exit %d; stdout %s; stderr %s", code, out, errOut)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the victim now holds %q", b)
			}
			if st, _ := os.Lstat(victim); st.Mode().Perm() != 0o600 {
				t.Errorf("the victim's mode is %v", st.Mode())
			}
		})
	}
}

func TestAfterFixEnv(t *testing.T) {
	var b strings.Builder
	got := afterFixEnv([]string{"HOME=/h", "CUDA_VISIBLE_DEVICES=-1", "LD_LIBRARY_PATH=/x", "A=b=c"},
		map[string]*string{"CUDA_VISIBLE_DEVICES": nil, "LD_LIBRARY_PATH": strp("/y"), "TF_FORCE_GPU_ALLOW_GROWTH": strp("true")}, &b)
	want := []string{"HOME=/h", "A=b=c", "LD_LIBRARY_PATH=/y", "TF_FORCE_GPU_ALLOW_GROWTH=true"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(b.String(), "CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, TF_FORCE_GPU_ALLOW_GROWTH changed") {
		t.Errorf("note %q", b.String())
	}
}

func strp(s string) *string { return &s }

// nvidiaOnPCIBus reports whether this machine's PCI bus lists an NVIDIA
// display controller (vendor 0x10de, class 0x03xxxx), as host's PCI
// collector reads it.
func nvidiaOnPCIBus(t *testing.T) bool {
	t.Helper()
	dirs, _ := filepath.Glob("/sys/bus/pci/devices/*")
	for _, d := range dirs {
		v, _ := os.ReadFile(filepath.Join(d, "vendor"))
		c, _ := os.ReadFile(filepath.Join(d, "class"))
		if strings.TrimSpace(string(v)) == "0x10de" && strings.HasPrefix(strings.TrimSpace(string(c)), "0x03") {
			return true
		}
	}
	return false
}

// TestFixCausesOnThisMachine is issue 10's acceptance on a machine with no
// NVIDIA driver, as a user: CUDA_VISIBLE_DEVICES=-1 in a real ~/.bashrc is
// an independent cause, so `doctor --fix --yes --skip python` disables the
// line in the same run, while the driver install (dangerous, root) is only
// printed. Everything is live but the home folder: the ladder runs, NVML
// is looked for.
func TestFixCausesOnThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/driver/nvidia/version"); err == nil {
		t.Skip("this machine has an NVIDIA driver; the acceptance is for one without")
	}
	e := newFixEnv(t)
	f := NewFactory(nil)
	f.IsRoot = func() bool { return false }
	f.RungChild = func() []string { return []string{os.Args[0], "-test.run=^TestVerifyRungChild$"} }
	t.Setenv("DOCTOR_VERIFY_CHILD", "1")

	code, out, errOut := doctorWith(t, f, false, "", "--fix", "--yes", "--skip", "python")
	if got := e.read(t); got != "# from a tutorial\n: # doctor --fix disabled: export CUDA_VISIBLE_DEVICES=-1\n" {
		t.Errorf("the line was not disabled; .bashrc:\n%s\n%s\n%s", got, out, errOut)
	}
	wants := []string{
		"Install the NVIDIA driver",     // planned and shown
		"install-driver: not applied (", // printed, never run (dangerous; here also refused when the apt sources lack non-free)
		"✓ unset-cuda-visible-devices",
		"✓ fixed: CUDA_VISIBLE_DEVICES=\"-1\" hides every GPU",
		"Root cause: No NVIDIA driver is installed [driver_missing]",
	}
	gpuOnBus := nvidiaOnPCIBus(t)
	if !gpuOnBus {
		// A bus with no NVIDIA GPU at all: no driver install is planned
		// (it would have nothing to drive); the independent cause is
		// fixed all the same.
		wants = []string{
			"✓ unset-cuda-visible-devices",
			"✓ fixed: CUDA_VISIBLE_DEVICES=\"-1\" hides every GPU",
			"Root cause: This machine has no NVIDIA GPU [no_nvidia_gpu]",
		}
		if strings.Contains(out, "Install the NVIDIA driver") {
			t.Errorf("a driver install is planned on a machine with no NVIDIA GPU:\n%s", out)
		}
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "Install the NVIDIA driver"), strings.Index(out, "Stop hiding the GPU"); gpuOnBus && (i < 0 || j < 0 || i > j) {
		t.Errorf("the driver install is not planned first:\n%s", out)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1: the driver is still missing", code)
	}
	t.Logf("doctor --fix --yes --skip python:\n%s", out)
}
