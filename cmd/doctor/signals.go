package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Every wait ends on a signal. SIGINT (Ctrl-C) and SIGTERM cancel the
// context every command runs under: children are killed with their process
// group (internal/run, the fix commands), and reads of the user's input (a
// log, a snapshot: a terminal, a pipe, a FIFO) return at once. doctor then
// exits with the code a shell expects: 128 + the signal (130, 143). A
// second signal, or a run that has not ended a few seconds after the
// first, ends the process there.

// signalGrace is how long doctor may take to end after the first signal.
const signalGrace = 3 * time.Second

// notifySignals returns a context cancelled by the first SIGINT or SIGTERM
// and a function giving the exit code for the signal caught (0 when none);
// stop ends the watch.
func notifySignals(parent context.Context, errOut io.Writer, grace time.Duration) (ctx context.Context, caught func() int, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	code := 0
	quit := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			c := exitCodeOf(s)
			mu.Lock()
			code = c
			mu.Unlock()
			fmt.Fprintf(errOut, "\ndoctor: %s: stopping\n", signalName(s))
			cancel()
			select {
			case <-ch:
			case <-time.After(grace):
			case <-quit:
				return
			}
			os.Exit(c)
		case <-quit:
		}
	}()
	var once sync.Once
	return ctx, func() int {
			mu.Lock()
			defer mu.Unlock()
			return code
		}, func() {
			once.Do(func() {
				signal.Stop(ch)
				close(quit)
				cancel()
			})
		}
}

func exitCodeOf(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	}
	return s.String()
}

// errInterrupted ends a command that a signal stopped; main turns it into
// 130 or 143.
var errInterrupted = &exitError{code: 130, msg: "interrupted"}

// openInput opens a file the user named, giving up when ctx ends: opening
// a FIFO waits for a writer.
func openInput(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() { // the open may still succeed: close what it opens
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// ctxReader reads r until ctx ends: a read blocked on a terminal, a pipe
// or a FIFO is abandoned, and Read returns ctx's error. One goroutine
// reads ahead by at most one chunk.
type ctxReader struct {
	ctx    context.Context
	chunks chan chunk
	cur    []byte
	err    error
}

type chunk struct {
	b   []byte
	err error
}

func newCtxReader(ctx context.Context, r io.Reader) io.Reader {
	c := &ctxReader{ctx: ctx, chunks: make(chan chunk, 1)}
	go func() {
		for {
			buf := make([]byte, 64<<10)
			n, err := r.Read(buf)
			select {
			case c.chunks <- chunk{buf[:n], err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *ctxReader) Read(p []byte) (int, error) {
	for len(c.cur) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		select {
		case ch := <-c.chunks:
			c.cur, c.err = ch.b, ch.err
		case <-c.ctx.Done():
			return 0, c.ctx.Err()
		}
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

// interrupted reports whether err, or ctx, says a signal stopped the
// command.
func interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, ctx.Err()))
}
