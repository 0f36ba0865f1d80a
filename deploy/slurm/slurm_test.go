// Package slurm_test runs deploy/slurm/doctor-healthcheck, the Slurm
// HealthCheckProgram: against a fake scontrol and doctor (always), and
// against a real single-machine Slurm from Debian (munged, slurmctld and
// slurmd started by the test) when DOCTOR_INTEGRATION is set.
package slurm_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfdoctor/doctor/internal/engines"
	"github.com/tfdoctor/doctor/internal/testenv"
)

const script = "doctor-healthcheck"

// fakeRun runs the health check with a fake doctor (prints report, exits
// code) and a fake scontrol (prints showLine for "show node", records every
// other call). It returns the recorded scontrol calls, one a line.
func fakeRun(t *testing.T, report string, code int, showLine string) string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		testenv.Missing(t, "sh is not installed")
	}
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("report.json", report, 0o644)
	write("show.txt", showLine+"\n", 0o644)
	doctor := write("doctor", fmt.Sprintf("#!/bin/sh\ncat %q\nexit %d\n", filepath.Join(dir, "report.json"), code), 0o755)
	calls := filepath.Join(dir, "calls")
	scontrol := write("scontrol", fmt.Sprintf(`#!/bin/sh
if [ "$1" = show ]; then cat %q; exit 0; fi
for a in "$@"; do printf '[%%s]' "$a"; done >> %q
echo >> %q
`, filepath.Join(dir, "show.txt"), calls, calls), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./"+script)
	cmd.Env = append(os.Environ(), "DOCTOR="+doctor, "SCONTROL="+scontrol, "SLURMD_NODENAME=gpu01",
		"DOCTOR_SLURM_SYSLOG=0", "DOCTOR_ARGS=", "TMPDIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
	b, _ := os.ReadFile(calls)
	return string(b)
}

func reportWith(cause string) string {
	return `{
  "schema": "doctor.report/v1",
  "status": "error",
  "root_cause": {
    "id": "kernel.nvidia",
    "cause": ` + cause + `,
    "title": "x\"\n    \"cause\": \"forged\",",
    "fix": "install-driver"
  },
  "findings": [
    {
      "cause": "healthy"
    }
  ]
}
`
}

const (
	idle       = "NodeName=gpu01 Arch=x86_64 CoresPerSocket=1 OS=Linux 6.1.0 #1 SMP State=IDLE ThreadsPerCore=1 Partitions=gpu"
	adminDrain = "NodeName=gpu01 Arch=x86_64 OS=Linux 6.1.0 State=IDLE+DRAIN ThreadsPerCore=1 Reason=admin: doctor: maintenance [root@2026-12-03T10:00:00] Comment=(null)"
	ourDrain   = "NodeName=gpu01 Arch=x86_64 OS=Linux 6.1.0 State=IDLE+DRAIN ThreadsPerCore=1 Reason=doctor: driver_missing (doctor --quick found it; run doctor on this node for the report) [root@2026-12-03T10:00:00]"
)

func TestFakeScontrol(t *testing.T) {
	drain := "[update][nodename=gpu01][state=drain][reason=doctor: driver_missing (doctor --quick found it; run doctor on this node for the report)]\n"
	for _, c := range []struct {
		name, report string
		code         int
		show, want   string
	}{
		{"broken idle node is drained with the cause", reportWith(`"driver_missing"`), 1, idle, drain},
		{"already drained by doctor for that cause", reportWith(`"driver_missing"`), 1, ourDrain, ""},
		{"cause changed: doctor's reason is updated", reportWith(`"driver_unresponsive"`), 1, ourDrain,
			"[update][nodename=gpu01][state=drain][reason=doctor: driver_unresponsive (doctor --quick found it; run doctor on this node for the report)]\n"},
		{"an administrator's drain is left alone", reportWith(`"driver_missing"`), 1, adminDrain, ""},
		{"a label outside [a-z0-9_] is not used", reportWith(`"x; rm -rf /"`), 1, idle,
			"[update][nodename=gpu01][state=drain][reason=doctor: unknown (doctor --quick found it; run doctor on this node for the report)]\n"},
		{"no report at all", "", 1, idle,
			"[update][nodename=gpu01][state=drain][reason=doctor: unknown (doctor --quick found it; run doctor on this node for the report)]\n"},
		{"healthy resumes doctor's drain", `{"status": "ok", "root_cause": null}`, 0, ourDrain, "[update][nodename=gpu01][state=resume]\n"},
		{"healthy leaves an administrator's drain", `{"status": "ok", "root_cause": null}`, 0, adminDrain, ""},
		{"healthy idle node: nothing", `{"status": "ok", "root_cause": null}`, 0, idle, ""},
		{"could not check (2) changes nothing", "", 2, ourDrain, ""},
		{"doctor failed (3) changes nothing", reportWith(`"driver_missing"`), 3, idle, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fakeRun(t, c.report, c.code, c.show); got != c.want {
				t.Errorf("scontrol calls:\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// slurm is a single-machine Slurm in a network namespace of its own (only
// its loopback interface, 127.0.0.1: nothing listens anywhere else).
type slurm struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	netns   string
	conf    string
	node    string
	daemons []*exec.Cmd
}

// cmd returns a command that runs in the namespace, in its own process group.
func (s *slurm) cmd(name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(s.ctx, "nsenter", append([]string{"--net=" + s.netns, "--", name}, args...)...)
	c.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	return c
}

// start starts a daemon in the foreground, its output into dir/name.out.
func (s *slurm) start(name string, args ...string) {
	s.t.Helper()
	out, err := os.Create(filepath.Join(s.dir, filepath.Base(name)+".out"))
	if err != nil {
		s.t.Fatal(err)
	}
	c := s.cmd(name, args...)
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	s.daemons = append(s.daemons, c)
}

func (s *slurm) stop() {
	for i := len(s.daemons) - 1; i >= 0; i-- {
		c := s.daemons[i]
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

func (s *slurm) logs() string {
	var b strings.Builder
	for _, n := range []string{"munged.out", "slurmctld.out", "slurmd.out", "healthcheck.out"} {
		out, _ := os.ReadFile(filepath.Join(s.dir, n))
		fmt.Fprintf(&b, "--- %s\n%s", n, out)
	}
	return b.String()
}

// show returns this node's State and Reason fields.
func (s *slurm) show() (state, reason string) {
	s.t.Helper()
	out, err := s.cmd("scontrol", "show", "node", "-o", s.node).CombinedOutput()
	if err != nil {
		s.t.Fatalf("scontrol show node: %v\n%s", err, out)
	}
	line := strings.TrimSpace(string(out))
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "State="); ok {
			state = v
			break
		}
	}
	if _, r, ok := strings.Cut(line, " Reason="); ok {
		reason = r
	}
	return state, reason
}

func (s *slurm) healthcheck(doctor string, args ...string) string {
	s.t.Helper()
	c := s.cmd("./" + script)
	c.Env = append(c.Env, "DOCTOR="+doctor, "DOCTOR_ARGS="+strings.Join(args, " "),
		"SLURMD_NODENAME="+s.node, "DOCTOR_SLURM_SYSLOG=0", "TMPDIR="+s.dir)
	out, err := c.CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s %v: %v\n%s", script, args, err, out)
	}
	return string(out)
}

func TestRealSlurm(t *testing.T) {
	begin := time.Now()
	for _, e := range [][2]string{{"slurm-wlm", "slurmctld"}, {"slurm-wlm", "slurmd"}, {"slurm-wlm", "scontrol"},
		{"munge", "munged"}, {"util-linux", "unshare"}, {"util-linux", "nsenter"}, {"iproute2", "ip"}} {
		engines.Require(t, e[0], e[1])
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "slurmd must run as root to be tested here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// munged refuses a socket folder that others cannot traverse; the
	// folder is root's and not writable by others.
	dir, err := os.MkdirTemp("", "doctor-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"", "munge", "state", "spool"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	doctor := filepath.Join(dir, "doctor")
	build := exec.CommandContext(ctx, "go", "build", "-o", doctor, "./cmd/doctor")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// The network namespace: held by a sleep whose loopback is up.
	holder := exec.CommandContext(ctx, "unshare", "--net", "--", "sh", "-c", "ip link set lo up && ip addr add 127.0.0.2/8 dev lo && echo up && exec sleep 600")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	holder.Stderr = os.Stderr
	pipe, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		testenv.Missing(t, "unshare --net: %v", err)
	}
	defer func() {
		_ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
		_ = holder.Wait()
	}()
	if line, _ := bufio.NewReader(pipe).ReadString('\n'); line != "up\n" {
		t.Fatalf("a network namespace of our own could not be made (unshare --net; ip link set lo up): %q", line)
	}

	host, _ := os.Hostname()
	node, _, _ := strings.Cut(host, ".")
	s := &slurm{t: t, ctx: ctx, dir: dir, netns: fmt.Sprintf("/proc/%d/ns/net", holder.Process.Pid),
		conf: filepath.Join(dir, "slurm.conf"), node: node}
	defer s.stop()

	key := make([]byte, 1024)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		_, err = f.Read(key)
		f.Close()
	}
	if err != nil || os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o600) != nil {
		t.Fatalf("munge key: %v", err)
	}
	sock := filepath.Join(dir, "munge", "munge.socket")
	conf := fmt.Sprintf(`ClusterName=doctortest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[1]s
CredType=cred/munge
StateSaveLocation=%[2]s/state
SlurmdSpoolDir=%[2]s/spool
SlurmctldPidFile=%[2]s/slurmctld.pid
SlurmdPidFile=%[2]s/slurmd.pid
SlurmctldLogFile=%[2]s/slurmctld.log
SlurmdLogFile=%[2]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=%[3]s NodeAddr=127.0.0.1 NodeHostname=%[3]s CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=%[3]s Default=YES State=UP
`, sock, dir, node)
	snap := func(name string) string {
		p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "scenarios", name, "snapshot.json"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The snippet's health check settings, as shipped, with the program
	// wrapped: slurmd runs it once (when it starts, before the node
	// registers) on the no-driver snapshot; later runs by slurmd do nothing,
	// so that the steps below are the test's own.
	self, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "healthcheck-once")
	wrap := fmt.Sprintf(`#!/bin/sh
[ -e %[1]s ] && exit 0
: > %[1]s
SLURM_CONF=%[2]s DOCTOR=%[3]s DOCTOR_ARGS=%[4]s DOCTOR_SLURM_SYSLOG=0 TMPDIR=%[5]s
export SLURM_CONF DOCTOR DOCTOR_ARGS DOCTOR_SLURM_SYSLOG TMPDIR
exec %[6]s >> %[7]s 2>&1
`, quote(filepath.Join(dir, "healthcheck-ran")), quote(s.conf), quote(doctor),
		quote("--from "+snap("no-driver")), quote(dir), quote(self), quote(filepath.Join(dir, "healthcheck.out")))
	if err := os.WriteFile(wrapper, []byte(wrap), 0o755); err != nil {
		t.Fatal(err)
	}
	snippet, err := os.ReadFile("slurm.conf.snippet")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(snippet), "\n") {
		if strings.HasPrefix(l, "HealthCheckProgram=") {
			l = "HealthCheckProgram=" + wrapper
		}
		conf += l + "\n"
	}
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	s.start("munged", "-F", "--key-file="+filepath.Join(dir, "munge.key"), "--socket="+sock,
		"--log-file="+filepath.Join(dir, "munged.log"), "--pid-file="+filepath.Join(dir, "munged.pid"),
		"--seed-file="+filepath.Join(dir, "munged.seed"))
	waitFor(t, ctx, 20*time.Second, "munged's socket", s.logs, func() bool {
		_, err := os.Stat(sock)
		return err == nil
	})
	s.start("slurmctld", "-D", "-f", s.conf)
	s.start("slurmd", "-D", "-f", s.conf)
	waitFor(t, ctx, 60*time.Second, "the node to register idle", s.logs, func() bool {
		out, err := s.cmd("scontrol", "show", "node", "-o", node).Output()
		return err == nil && strings.Contains(string(out), " State=IDLE")
	})
	t.Logf("Slurm up after %v", time.Since(begin).Round(time.Millisecond))
	cfg, err := s.cmd("scontrol", "show", "config").Output()
	if err != nil || !strings.Contains(string(cfg), "HealthCheckNodeState    = CYCLE,ANY") ||
		!strings.Contains(string(cfg), "HealthCheckInterval     = 300 sec") {
		t.Fatalf("slurmctld did not take the snippet's health check settings: %v\n%s", err, cfg)
	}

	expect := func(step string, drained bool, reasonPrefix string) {
		t.Helper()
		state, reason := s.show()
		if strings.Contains(state, "DRAIN") != drained || !strings.HasPrefix(reason, reasonPrefix) {
			t.Fatalf("%s: state %q reason %q; want drained=%v, reason starting %q\n%s", step, state, reason, drained, reasonPrefix, s.logs())
		}
		t.Logf("%s: state %s, reason %q", step, state, reason)
	}

	// slurmd's own run, when it started.
	if _, err := os.Stat(filepath.Join(dir, "healthcheck-ran")); err != nil {
		t.Fatalf("slurmd did not run the HealthCheckProgram when it started\n%s", s.logs())
	}
	expect("no driver, slurmd's HealthCheckProgram run", true, "doctor: driver_missing ")
	out := s.healthcheck(doctor, "--from", snap("no-driver"))
	expect("no driver, run again", true, "doctor: driver_missing ")
	s.healthcheck(doctor, "--from", filepath.Join(dir, "no-such-snapshot.json"))
	expect("doctor could not check (exit 2)", true, "doctor: driver_missing ")
	out += s.healthcheck(doctor, "--from", snap("healthy-linux"))
	expect("healthy again", false, "")

	if o, err := s.cmd("scontrol", "update", "nodename="+node, "state=drain", "reason=admin: maintenance").CombinedOutput(); err != nil {
		t.Fatalf("administrator's drain: %v\n%s", err, o)
	}
	out += s.healthcheck(doctor, "--from", snap("no-driver"))
	expect("broken under an administrator's drain", true, "admin: maintenance")
	out += s.healthcheck(doctor, "--from", snap("healthy-linux"))
	expect("healthy under an administrator's drain", true, "admin: maintenance")
	t.Logf("health check output:\n%s", out)
	t.Logf("whole test %v", time.Since(begin).Round(time.Millisecond))
}

// quote quotes s for sh.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func waitFor(t *testing.T, ctx context.Context, d time.Duration, what string, logs func() string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !ok() {
		if time.Now().After(end) || ctx.Err() != nil {
			t.Fatalf("waited %v for %s: %v\n%s", d, what, ctx.Err(), logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
