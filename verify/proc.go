package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is one rung's child process. It is internal/run's idea (own process
// group, SIGKILL to the whole group at the deadline, capped output) with one
// thing internal/run does not do: the child's standard input stays open, so
// the ladder can hold a child at its gate (set up, but not yet timing) and
// release it with a line when the rung below has finished. That lets every
// rung load its libraries and the framework import while the GPU is timed by
// another rung, without two rungs ever timing work at once.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *capped
	stderr *capped
	done   chan struct{}
	start  time.Time
	// lineSeen is closed when the child has written its first complete
	// line to stdout: a rung child's result.
	lineSeen chan struct{}
	released sync.Once

	mu      sync.Mutex
	end     time.Time
	waitErr error
}

// startProc starts argv with env and writes first (the request line) to
// its standard input.
func startProc(argv []string, env []string, dir string, first []byte) (*proc, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd, stdout: &capped{max: 1 << 20}, stderr: &capped{max: 1 << 20}, done: make(chan struct{}), lineSeen: make(chan struct{})}
	p.stdout.onLine = func() { close(p.lineSeen) }
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	// A grandchild that left the group could hold the pipes open; stop
	// waiting for them a second after the child itself ends.
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = in
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.end, p.waitErr = time.Now(), err
		p.mu.Unlock()
		close(p.done)
	}()
	// The child may already have died; a write error then says nothing
	// that Wait will not.
	_, _ = in.Write(first)
	return p, nil
}

// release lets a child past its gate (once).
func (p *proc) release() { p.released.Do(func() { _, _ = p.stdin.Write([]byte("go\n")) }) }

// finished is closed when the child has printed its first line or ended,
// whichever comes first.
func (p *proc) finished() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		select {
		case <-p.lineSeen:
		case <-p.done:
		}
		close(ch)
	}()
	return ch
}

// outcome is how a child ended.
type outcome struct {
	stdout, stderr []byte
	exitCode       int // -1 when it did not exit normally
	signal         string
	timedOut       bool
	stuck          bool // did not die after SIGKILL (stuck in the kernel)
	duration       time.Duration
	err            error
}

// wait waits for the child until deadline; then the child's process group
// gets SIGKILL.
func (p *proc) wait(ctx context.Context, deadline time.Time) outcome {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var o outcome
	select {
	case <-p.done:
	case <-timer.C:
		o.timedOut = true
		p.kill()
	case <-ctx.Done():
		o.err = ctx.Err()
		p.kill()
	}
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		// In uninterruptible sleep inside the driver, a process cannot
		// die until the driver lets go; do not wait for it.
		o.stuck = true
	}
	p.mu.Lock()
	end, werr := p.end, p.waitErr
	p.mu.Unlock()
	if end.IsZero() {
		end = time.Now()
	}
	o.duration = end.Sub(p.start)
	o.stdout, o.stderr = p.stdout.Bytes(), p.stderr.Bytes()
	o.exitCode = -1
	if st := p.cmd.ProcessState; st != nil && !o.stuck {
		o.exitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.signal = ws.Signal().String()
		}
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && o.err == nil && !o.timedOut {
		o.err = werr
	}
	return o
}

// pid is the child's process ID.
func (p *proc) pid() int {
	if p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *proc) kill() {
	if pid := p.pid(); pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = p.cmd.Process.Signal(os.Kill)
	}
}

// describe says in words how a child that printed no result ended.
func (o outcome) describe() string {
	switch {
	case o.timedOut && o.stuck:
		return "did not finish in time and could not be killed (stuck inside the driver)"
	case o.timedOut:
		return fmt.Sprintf("did not finish within its deadline (%.1f s) and was killed", o.duration.Seconds())
	case o.err != nil:
		return o.err.Error()
	case o.signal != "":
		return "crashed: " + o.signal
	case o.exitCode != 0:
		return fmt.Sprintf("exited with status %d", o.exitCode)
	}
	return "ended without a result"
}

// capped keeps the first max bytes written and drops the rest; it is safe
// to read while the child still writes.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
	// onLine, when set, is called once, after the first newline.
	onLine func()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onLine != nil && bytes.IndexByte(p, '\n') >= 0 {
		defer c.onLine()
		c.onLine = nil
	}
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf.Bytes()...)
}
