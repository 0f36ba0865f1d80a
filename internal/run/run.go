// Package run starts child processes that may hang (nvidia-smi inside a stuck
// driver, a Python import that blocks on the GPU) and guarantees they end: each
// child leads its own process group, and when its deadline passes the whole
// group is killed, grandchildren included.
package run

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
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
	// Stdout and Stderr, when set, receive the output as it comes instead
	// of Result keeping it (MaxOutput does not apply then).
	Stdout, Stderr io.Writer
	// OpenStdin keeps the child's standard input open after Stdin is
	// written (Start only): Proc.WriteStdin sends more, and the input is
	// closed when the child is waited for.
	OpenStdin bool
	// OnFirstLine, when set, is called once, when the kept standard
	// output first holds a complete line (Start only; Stdout nil).
	OnFirstLine func()
}

// Result is how a child ended.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int // -1 when it did not exit normally
	// Signal names the signal that ended the child ("killed"), if one did.
	Signal   string
	Duration time.Duration
	TimedOut bool
	// Stuck is set when the child did not end within two seconds of
	// SIGKILL: in uninterruptible sleep inside a driver, a process cannot
	// die until the driver lets go, and doctor does not wait for it.
	Stuck bool
	// Err is set when the program could not be started or was killed.
	Err error
}

// Proc is a started child: the leader of its own process group, so that
// killing it kills its grandchildren too. Every child doctor starts (the
// collectors' tools, the ladder's rungs, a fix's commands) is one.
type Proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *capped
	stderr *capped
	done   chan struct{}
	start  time.Time

	mu      sync.Mutex
	end     time.Time
	waitErr error
}

// Start starts c (its Timeout is Wait's business: see Run).
func Start(c Cmd) (*Proc, error) {
	if c.Path == "" {
		return nil, errors.New("no command")
	}
	max := c.MaxOutput
	if max <= 0 {
		max = 1 << 20
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	p := &Proc{cmd: cmd, done: make(chan struct{})}
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	} else {
		p.stdout = &capped{max: max, onLine: c.OnFirstLine}
		cmd.Stdout = p.stdout
	}
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	} else {
		p.stderr = &capped{max: max}
		cmd.Stderr = p.stderr
	}
	if c.OpenStdin {
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		p.stdin = in
	} else if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that left the group could hold the output pipes open;
	// stop waiting for them a second after the child itself ends.
	cmd.WaitDelay = time.Second
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
	if c.OpenStdin && len(c.Stdin) > 0 {
		// The child may already have died; a write error then says
		// nothing that Wait will not.
		_ = p.WriteStdin(c.Stdin)
	}
	return p, nil
}

// PID is the child's process ID (and its process group's).
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Done is closed when the child has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// WriteStdin writes to the child's open standard input (Cmd.OpenStdin).
func (p *Proc) WriteStdin(b []byte) error {
	if p.stdin == nil {
		return errors.New("standard input is not open")
	}
	_, err := p.stdin.Write(b)
	return err
}

// Kill sends SIGKILL to the child's whole process group.
func (p *Proc) Kill() { killGroup(p.PID()) }

// Wait waits for the child until it ends, ctx ends or deadline passes
// (zero: no deadline); then the child's process group gets SIGKILL, and
// Wait gives it two seconds to go. TimedOut is set for the deadline; for
// ctx, Err is ctx.Err().
func (p *Proc) Wait(ctx context.Context, deadline time.Time) Result {
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	var res Result
	killed := false
	select {
	case <-p.done:
	case <-timer:
		res.TimedOut, killed = true, true
	case <-ctx.Done():
		res.Err, killed = ctx.Err(), true
	}
	if killed {
		p.Kill()
	}
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		res.Stuck = true
	}
	p.mu.Lock()
	end, werr := p.end, p.waitErr
	p.mu.Unlock()
	if end.IsZero() {
		end = time.Now()
	}
	res.Duration = end.Sub(p.start)
	if p.stdout != nil {
		res.Stdout = p.stdout.Bytes()
	}
	if p.stderr != nil {
		res.Stderr = p.stderr.Bytes()
	}
	res.ExitCode = -1
	if st := p.cmd.ProcessState; st != nil && !res.Stuck {
		res.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
		}
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && res.Err == nil && !res.TimedOut && !res.Stuck {
		res.Err = werr // a non-zero exit is reported by ExitCode
	}
	return res
}

// Run runs c and waits for it, at most until its timeout or ctx ends; then
// the child's process group gets SIGKILL. A ctx that ends by its own
// deadline counts as a timeout too.
func Run(ctx context.Context, c Cmd) Result {
	p, err := Start(c)
	if err != nil {
		return Result{ExitCode: -1, Err: err}
	}
	var deadline time.Time
	if c.Timeout > 0 {
		deadline = time.Now().Add(c.Timeout)
	}
	res := p.Wait(ctx, deadline)
	if errors.Is(res.Err, context.DeadlineExceeded) {
		res.TimedOut = true
	}
	switch {
	case res.TimedOut:
		res.Err = context.DeadlineExceeded
	case res.Stuck && res.Err == nil:
		res.Err = errors.New("child did not exit after SIGKILL (stuck in the kernel)")
	}
	if res.Stuck && res.TimedOut {
		res.Err = context.DeadlineExceeded
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
