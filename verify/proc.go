package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tfdoctor/doctor/internal/run"
)

// proc is one rung's child process, started by internal/run (its own
// process group, SIGKILL to the whole group at the deadline) with its
// standard input kept open, so the ladder can hold a child at its gate (set
// up, but not yet timing) and release it with a line when the rung below
// has finished. That lets every rung load its libraries and the framework
// import while the GPU is timed by another rung, without two rungs ever
// timing work at once.
type proc struct {
	p *run.Proc
	// lineSeen is closed when the child has written its first complete
	// line to stdout: a rung child's result.
	lineSeen chan struct{}
	released sync.Once
}

// startProc starts argv with env and writes first (the request line) to
// its standard input.
func startProc(argv []string, env []string, dir string, first []byte) (*proc, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	p := &proc{lineSeen: make(chan struct{})}
	rp, err := run.Start(run.Cmd{Path: argv[0], Args: argv[1:], Env: env, Dir: dir,
		OpenStdin: true, Stdin: first, OnFirstLine: func() { close(p.lineSeen) }})
	if err != nil {
		return nil, err
	}
	p.p = rp
	return p, nil
}

// release lets a child past its gate (once).
func (p *proc) release() { p.released.Do(func() { _ = p.p.WriteStdin([]byte("go\n")) }) }

// finished is closed when the child has printed its first line or ended,
// whichever comes first.
func (p *proc) finished() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		select {
		case <-p.lineSeen:
		case <-p.p.Done():
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
	r := p.p.Wait(ctx, deadline)
	return outcome{stdout: r.Stdout, stderr: r.Stderr, exitCode: r.ExitCode, signal: r.Signal,
		timedOut: r.TimedOut, stuck: r.Stuck, duration: r.Duration, err: r.Err}
}

// pid is the child's process ID.
func (p *proc) pid() int { return p.p.PID() }

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
