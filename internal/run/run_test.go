package run

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestRunOutputAndExitCode(t *testing.T) {
	r := Run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "echo out; echo err >&2; exit 7"}})
	if r.Err != nil || r.ExitCode != 7 || string(r.Stdout) != "out\n" || string(r.Stderr) != "err\n" {
		t.Errorf("got %+v", r)
	}
}

func TestRunMissingProgram(t *testing.T) {
	r := Run(context.Background(), Cmd{Path: "/nonexistent/prog"})
	if r.Err == nil || r.ExitCode != -1 {
		t.Errorf("got %+v", r)
	}
}

// TestRunKillsTheWholeGroup: a child that hangs and has a child of its own
// is killed at the deadline with its grandchild.
func TestRunKillsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	r := Run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "sleep 1000 & echo $! > " + pidFile + "; sleep 1000"}, Timeout: 300 * time.Millisecond})
	if !r.TimedOut || time.Since(start) > 3*time.Second {
		t.Fatalf("got %+v after %s", r, time.Since(start))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	time.Sleep(100 * time.Millisecond)
	if err := syscall.Kill(pid, 0); err == nil {
		// A zombie still answers kill 0; look at its state.
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if !strings.Contains(string(st), ") Z ") {
			t.Errorf("grandchild %d survived: %s", pid, st)
		}
	}
}

func TestRunCapsOutput(t *testing.T) {
	r := Run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "head -c 100000 /dev/zero"}, MaxOutput: 1000})
	if len(r.Stdout) != 1000 || r.ExitCode != 0 {
		t.Errorf("kept %d bytes, exit %d", len(r.Stdout), r.ExitCode)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "data"), nil, 0o644)
	if p, err := LookPath("tool", "/nonexistent:"+dir); err != nil || p != exe {
		t.Errorf("LookPath = %q, %v", p, err)
	}
	if _, err := LookPath("data", dir); err == nil {
		t.Error("found a non-executable file")
	}
	if _, err := LookPath("tool", ""); err == nil {
		t.Error("found a program with an empty PATH")
	}
}

// The ladder's way: a child held at a gate on its open standard input,
// released with a line, output streamed to the caller's writer; at the
// deadline the group dies with its grandchild, and a cancelled ctx is an
// error, not a timeout.
func TestStartGateAndDeadline(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	p, err := Start(Cmd{Path: "/bin/sh", Args: []string{"-c", `read req; read gate; echo "$req $gate"; sleep 1000 & echo $! > ` + dir + `/pid; wait`},
		Stdout: &syncWriter{b: &out}, OpenStdin: true, Stdin: []byte("req\n")})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteStdin([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	r := p.Wait(context.Background(), time.Now().Add(500*time.Millisecond))
	if !r.TimedOut || r.Stuck || r.Signal != "killed" {
		t.Fatalf("got %+v", r)
	}
	if got := out.String(); got != "req go\n" {
		t.Errorf("stdout %q", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil {
		// A zombie still answers kill 0; look at its state.
		if st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !strings.Contains(string(st), ") Z ") {
			t.Errorf("grandchild %d survived: %s", pid, st)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	p, err = Start(Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if r := p.Wait(ctx, time.Time{}); r.TimedOut || r.Err != context.Canceled {
		t.Errorf("cancelled: %+v", r)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
