package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// doctorBinary builds doctor once per test run: signals are only real on
// a real process.
func doctorBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "doctor-bin-")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "doctor"), ".")
		cmd.Env = append(os.Environ(), "CGO_CFLAGS=-Wno-deprecated-declarations")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = errors.New(err.Error() + ": " + string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("building doctor: %v", binErr)
	}
	return filepath.Join(binDir, "doctor")
}

// blockedOnInput waits until one of pid's threads sleeps on a FIFO or a
// pipe (open waiting for a writer, or a read waiting for data).
func blockedOnInput(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
		for _, w := range tasks {
			b, _ := os.ReadFile(w)
			if s := string(b); s == "wait_for_partner" || strings.Contains(s, "pipe") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("doctor (PID %d) never waited on its input", pid)
}

// TestSignalEndsEveryWait: SIGTERM and SIGINT end doctor while it waits on
// its input (a FIFO with no writer, a FIFO whose writer is silent, a pipe
// on standard input), within a second, with the exit code a shell expects
// (128 + the signal: 143, 130).
func TestSignalEndsEveryWait(t *testing.T) {
	bin := doctorBinary(t)
	cases := []struct {
		name   string
		args   []string
		stdin  bool // a silent pipe on standard input
		writer bool // open the FIFO for writing, write nothing
		sig    syscall.Signal
		code   int
	}{
		{"--from FIFO, SIGTERM", []string{"--from", "FIFO"}, false, false, syscall.SIGTERM, 143},
		{"--from FIFO with a silent writer, SIGTERM", []string{"--from", "FIFO"}, false, true, syscall.SIGTERM, 143},
		{"explain FIFO, SIGINT", []string{"explain", "FIFO"}, false, false, syscall.SIGINT, 130},
		{"explain FIFO with a silent writer, SIGTERM", []string{"explain", "FIFO"}, false, true, syscall.SIGTERM, 143},
		{"explain on a silent pipe, SIGINT", []string{"explain"}, true, false, syscall.SIGINT, 130},
		{"--from - on a silent pipe, SIGTERM", []string{"--from", "-"}, true, false, syscall.SIGTERM, 143},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "FIFO", fifo)
			}
			cmd := exec.Command(bin, args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if c.stdin {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				defer r.Close()
				cmd.Stdin = r
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if c.writer {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until doctor opens it
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
			}
			if !c.writer {
				blockedOnInput(t, cmd.Process.Pid)
			} // else doctor has opened the FIFO: its reads go through Go's poller
			time.Sleep(100 * time.Millisecond)
			sent := time.Now()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				took := time.Since(sent)
				t.Logf("ended %s after the signal", took.Round(time.Millisecond))
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != c.code {
					t.Errorf("ended with %v, want exit code %d; stderr: %s", err, c.code, stderr.String())
				}
				if took > time.Second {
					t.Errorf("took %s to end after the signal", took)
				}
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("still running 10 s after %v; stderr: %s", c.sig, stderr.String())
			}
		})
	}
}

// TestSignalKillsChildrenWithTheirGroup: SIGTERM while the verification
// ladder waits on its framework child (which started a grandchild) ends
// doctor with 143, and the child and the grandchild are gone: the child's
// process group was killed, not left running.
func TestSignalKillsChildrenWithTheirGroup(t *testing.T) {
	bin := doctorBinary(t)
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	python := filepath.Join(dir, "python3")
	script := "#!/bin/sh\nsleep 300 &\necho $$ $! > " + pids + ".tmp\nmv " + pids + ".tmp " + pids + "\nwait\n"
	if err := os.WriteFile(python, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "verify", "--rung", "framework", "--framework", "tensorflow", "--python", python)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var b []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ = os.ReadFile(pids); len(b) > 0 {
			break
		}
	}
	var child, grandchild int
	if _, err := fmt.Sscan(string(b), &child, &grandchild); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the framework child never started (%v); stderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { syscall.Kill(grandchild, syscall.SIGKILL); syscall.Kill(child, syscall.SIGKILL) })
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 143 {
			t.Errorf("ended with %v, want exit code 143; stderr: %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("doctor did not end after SIGTERM; stderr: %s", stderr.String())
	}
	for _, pid := range []int{child, grandchild} {
		gone := false
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && !gone; time.Sleep(20 * time.Millisecond) {
			st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
			gone = err != nil || strings.Contains(string(st), ") Z ")
		}
		if !gone {
			t.Errorf("PID %d outlived doctor", pid)
		}
	}
}

// openPTY opens a pseudo-terminal pair: doctor reads the paste from the
// terminal side.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestCtrlCEndsAPasteOnATerminal: doctor explain waiting for a paste on a
// terminal ends on Ctrl-C (SIGINT) with 130.
func TestCtrlCEndsAPasteOnATerminal(t *testing.T) {
	bin := doctorBinary(t)
	_, tty := openPTY(t)
	cmd := exec.Command(bin, "explain")
	cmd.Stdin = tty
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	blockedOnTerminal(t, cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("ended with %v, want 130; stderr: %s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "paste the log") {
			t.Errorf("no prompt on a terminal: %s", stderr.String())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("doctor explain did not end after Ctrl-C; stderr: %s", stderr.String())
	}
}

// blockedOnTerminal waits until one of pid's threads reads a terminal
// (the kernel's n_tty_read sleeps in wait_woken).
func blockedOnTerminal(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
		for _, w := range tasks {
			if b, _ := os.ReadFile(w); string(b) == "wait_woken" || strings.Contains(string(b), "tty") {
				return
			}
		}
	}
	t.Fatalf("doctor (PID %d) never waited on the terminal", pid)
}
