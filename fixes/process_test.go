package fixes

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/testenv"
)

func TestParseProcStat(t *testing.T) {
	line := "4242 (my (weird) proc) S 1 4242 4242 0 -1 4194560 150 0 0 0 0 0 0 0 20 0 1 0 987654 12345 67 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n"
	st, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if st.Comm != "my (weird) proc" || st.State != 'S' || st.PPID != 1 || st.StartTime != 987654 {
		t.Errorf("got %+v", st)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1", "1 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "1 (x) S y 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if uid, ok := parseStatusUID("Name:\tx\nUid:\t1000\t1000\t1000\t1000\n"); !ok || uid != 1000 {
		t.Errorf("uid %d %v", uid, ok)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add("1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 5 1 1 1\n")
	f.Add("7 ()) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseProcStat(s)
		if err == nil && !strings.Contains(s, "("+st.Comm+")") {
			t.Fatalf("comm %q not in %q", st.Comm, s)
		}
		_, _ = parseStatusUID(s)
	})
}

// child starts a process that this test owns and reaps.
func child(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	// Wait until the child runs its own program (exec done).
	for i := 0; i < 200; i++ {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline"); err == nil && strings.Contains(string(b), filepath.Base(name)) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd
}

func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, err := parseProcStat(string(b))
	return err == nil && st.State != 'Z' && st.State != 'X'
}

func stopFix(pid int, mib uint64) checks.Fix {
	return checks.Fix{ID: checks.FixStopGPUProcess, Title: "Stop PID " + strconv.Itoa(pid), Risk: checks.RiskDangerous,
		Params: map[string]string{"pid": strconv.Itoa(pid), "user": "root", "command": "sleep", "gpu": "0"}}
}

// liveEnv is an env whose /proc is this machine's.
func liveEnv(t *testing.T) *env {
	e := newEnv(t)
	e.m.Root = "/"
	return e
}

// Per-PID consent on a terminal: yes to the first, no to the second; only
// the first is stopped, and with the GPU memory NVML reported in the question.
func TestStopProcessPerPIDConsent(t *testing.T) {
	e := liveEnv(t)
	a := child(t, "sleep", "60")
	b := child(t, "sleep", "61")
	e.m.Snap = &host.Snapshot{NVML: host.NVML{Available: true, GPUs: []host.GPU{{Index: 0, Processes: []host.GPUProcess{
		{PID: a.Process.Pid, UsedMiB: 20480}, {PID: b.Process.Pid, UsedMiB: 1024}}}}}}
	plans := e.plan(report(stopFix(a.Process.Pid, 0), stopFix(b.Process.Pid, 0)), checks.FixStopGPUProcess)
	if len(plans) != 2 || !plans[0].Applicable() || !plans[1].Applicable() {
		t.Fatalf("plans: %+v", plans)
	}
	s, out := e.session("y\nn\n", true, false, checks.FixStopGPUProcess)
	s.Grace = 2 * time.Second
	res := s.Run(context.Background(), plans)
	if res.Outcomes[0].State != "applied" || res.Outcomes[1].State != "declined" {
		t.Fatalf("outcomes %s/%s\n%s", res.Outcomes[0].State, res.Outcomes[1].State, out)
	}
	if running(a.Process.Pid) {
		t.Errorf("PID %d (yes) still runs", a.Process.Pid)
	}
	if !running(b.Process.Pid) {
		t.Errorf("PID %d (no) was stopped", b.Process.Pid)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	q := "Stop PID " + strconv.Itoa(a.Process.Pid) + " (user " + me.Username + ", 20.0 GiB on GPU 0, sleep 60)? [y/N]"
	if !strings.Contains(out.String(), q) {
		t.Errorf("question %q not asked:\n%s", q, out)
	}
	if !strings.Contains(out.String(), "ended after SIGTERM") {
		t.Errorf("no SIGTERM outcome:\n%s", out)
	}
}

// A process that ignores SIGTERM gets SIGKILL after the grace period.
func TestStopProcessEscalatesToKill(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		testenv.Missing(t, "python3 not installed")
	}
	e := liveEnv(t)
	ready := filepath.Join(e.dir, "ready")
	c := child(t, "python3", "-c", "import signal,time,sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); open(sys.argv[1],'w').close(); time.sleep(60)", ready)
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	plans := e.plan(report(stopFix(c.Process.Pid, 0)), checks.FixStopGPUProcess)
	s, out := e.session("yes\n", true, true, checks.FixStopGPUProcess)
	s.Grace = 300 * time.Millisecond
	res := s.Run(context.Background(), plans)
	if res.Outcomes[0].State != "applied" || running(c.Process.Pid) {
		t.Fatalf("not stopped: %s\n%s", res.Outcomes[0].State, out)
	}
	if !strings.Contains(out.String(), "ended after SIGKILL") {
		t.Errorf("no SIGKILL outcome:\n%s", out)
	}
}

// --yes never stops a process; neither does a named fix without a terminal.
func TestStopProcessNeedsNameAndTerminal(t *testing.T) {
	e := liveEnv(t)
	c := child(t, "sleep", "60")
	for _, tc := range []struct {
		name  string
		tty   bool
		named []string
	}{
		{"--yes, not named", false, nil},
		{"--yes on a terminal, not named", true, nil},
		{"named, no terminal", false, []string{checks.FixStopGPUProcess}},
	} {
		plans := e.plan(report(stopFix(c.Process.Pid, 0)))
		s, out := e.session("y\ny\n", tc.tty, true, tc.named...)
		res := s.Run(context.Background(), plans)
		if res.Outcomes[0].State != "skipped" || !running(c.Process.Pid) {
			t.Errorf("%s: %s\n%s", tc.name, res.Outcomes[0].State, out)
		}
		if strings.Contains(out.String(), "[y/N]") {
			t.Errorf("%s: asked a question:\n%s", tc.name, out)
		}
	}
}

func TestStopProcessRefusals(t *testing.T) {
	e := liveEnv(t)
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	xorg := filepath.Join(dir, "Xorg")
	if err := os.WriteFile(xorg, data, 0o755); err != nil {
		t.Fatal(err)
	}
	x := child(t, xorg, "60")
	s := child(t, "sleep", "60")

	check := func(name string, pid int, want string) {
		t.Helper()
		p := PlanFix(e.m, stopFix(pid, 0), nil)
		if !strings.Contains(p.Refused, want) {
			t.Errorf("%s: refused %q, want %q", name, p.Refused, want)
		}
	}
	check("display server", x.Process.Pid, "display server")
	check("doctor itself", os.Getpid(), "doctor itself")
	check("bad pid", 1, "no valid PID")
	// Another user's process, doctor not root: refused. This test's sleep
	// is owned by the test's user; acting as another UID makes it foreign.
	e.m.IsRoot = func() bool { return false }
	e.m.UID = os.Getuid() + 4242
	check("other user", s.Process.Pid, "only root may stop another user's process")
	// As root (and confirmed), another user's process may be stopped.
	e.m.IsRoot = func() bool { return true }
	if p := PlanFix(e.m, stopFix(s.Process.Pid, 0), nil); !p.Applicable() {
		t.Errorf("root: %q", p.Refused)
	}
	// A process that ended is nothing to do.
	gone := exec.Command("true")
	_ = gone.Run()
	if p := PlanFix(e.m, stopFix(gone.Process.Pid, 0), nil); p.Done == "" {
		t.Errorf("ended process: %+v", p)
	}
}

// A PID that now names another process (reused) is never signalled.
func TestStopProcessPIDReuse(t *testing.T) {
	e := liveEnv(t)
	c := child(t, "sleep", "60")
	p := PlanFix(e.m, stopFix(c.Process.Pid, 0), nil)
	if !p.Applicable() {
		t.Fatal(p.Refused)
	}
	p.Steps[0].Proc.StartTime++ // as if the planned process ended and the PID was reused
	what, err := e.m.stopProcess(context.Background(), p.Steps[0].Proc, time.Second)
	if err != nil || what != "had already ended" || !running(c.Process.Pid) {
		t.Errorf("reused PID: %q %v, running %v", what, err, running(c.Process.Pid))
	}
	_ = syscall.Kill(c.Process.Pid, 0)
}
