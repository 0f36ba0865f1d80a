// Package run starts child processes that may hang (nvidia-smi inside a stuck
// driver, a Python import that blocks on the GPU) and guarantees they end: each
// child leads its own process group, and when its deadline passes the whole
// group is killed, grandchildren included.
package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Cmd is one program to run. Args are passed as argv, never through a shell.
type Cmd struct {
	Path    string
	Args    []string
	Env     []string // nil: inherit
	Dir     string
	Stdin   []byte
	Timeout time.Duration // 0: only ctx bounds it
	// MaxOutput caps what is kept of stdout and of stderr (default 1 MiB
	// each); the rest is read and dropped so the child never blocks.
	MaxOutput int
}

// Result is how a child ended.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int // -1 when it did not exit normally
	Duration       time.Duration
	TimedOut       bool
	// Err is set when the program could not be started or was killed.
	Err error
}

// Run runs c and waits for it, at most until its timeout or ctx ends; then
// the child's process group gets SIGKILL.
func Run(ctx context.Context, c Cmd) Result {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	max := c.MaxOutput
	if max <= 0 {
		max = 1 << 20
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	stdout := &capped{max: max}
	stderr := &capped{max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that left the group could hold the output pipes open;
	// stop waiting for them a second after the child itself ends.
	cmd.WaitDelay = time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1, Err: err, Duration: time.Since(start)}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var res Result
	select {
	case err := <-done:
		res.Err = err
	case <-ctx.Done():
		res.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		killGroup(cmd.Process.Pid)
		select {
		case err := <-done:
			res.Err = err
		case <-time.After(2 * time.Second):
			// A process in uninterruptible sleep inside the driver cannot
			// die until the driver lets go; do not wait for it.
			res.Err = errors.New("child did not exit after SIGKILL (stuck in the kernel)")
		}
		if res.TimedOut {
			res.Err = context.DeadlineExceeded
		} else if res.Err == nil {
			res.Err = ctx.Err()
		}
	}
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.ExitCode = -1
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(res.Err, &ee) {
		res.Err = nil // a non-zero exit is reported by ExitCode
	}
	return res
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// capped keeps the first max bytes written and drops the rest.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte { return c.buf.Bytes() }

// LookPath finds an executable named file in the PATH value given (not the
// process's own PATH), as a shell would.
func LookPath(file, path string) (string, error) {
	if file == "" {
		return "", errors.New("empty program name")
	}
	if filepathHasSlash(file) {
		if isExecutable(file) {
			return file, nil
		}
		return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
	}
	for _, dir := range splitList(path) {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + file
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

func filepathHasSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

func splitList(path string) []string {
	if path == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == ':' {
			out = append(out, path[start:i])
			start = i + 1
		}
	}
	return out
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
