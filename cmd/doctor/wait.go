package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// DefaultRunTimeout bounds a whole run (gathering and the ladder) unless
// --timeout says otherwise.
const DefaultRunTimeout = 3 * time.Minute

// waitNotice says on standard error what doctor is waiting for and for how
// long, so that a slow run is never a silent one. On a terminal it keeps
// one status line up to date; otherwise it writes a line once a wait has
// lasted firstAfter, then every `every`.
type waitNotice struct {
	w   io.Writer
	tty bool
	// firstAfter and every pace the lines written without a terminal.
	firstAfter, every time.Duration

	mu        sync.Mutex
	what      string
	since     time.Time
	until     time.Time
	lastPrint time.Time
	shown     bool // a terminal status line is on screen
	stop      chan struct{}
	done      chan struct{}
	closed    sync.Once
}

func newWaitNotice(w io.Writer, tty bool) *waitNotice {
	n := &waitNotice{w: w, tty: tty, firstAfter: 2 * time.Second, every: 10 * time.Second,
		stop: make(chan struct{}), done: make(chan struct{})}
	go n.loop()
	return n
}

// set says what is waited for now, and the moment doctor gives up on it
// (zero: unknown).
func (n *waitNotice) set(what string, until time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if what != n.what {
		n.since, n.lastPrint = time.Now(), time.Time{}
	}
	n.what, n.until = what, until
	if n.tty {
		n.draw()
	}
}

// idle says nothing is waited for.
func (n *waitNotice) idle() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.what = ""
	n.clear()
}

// close stops the notices and clears a terminal status line.
func (n *waitNotice) close() {
	n.closed.Do(func() {
		close(n.stop)
		<-n.done
		n.idle()
	})
}

func (n *waitNotice) loop() {
	defer close(n.done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			n.tick()
		}
	}
}

func (n *waitNotice) tick() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.what == "" {
		return
	}
	if n.tty {
		n.draw()
		return
	}
	now := time.Now()
	if now.Sub(n.since) < n.firstAfter || !n.lastPrint.IsZero() && now.Sub(n.lastPrint) < n.every {
		return
	}
	n.lastPrint = now
	fmt.Fprintf(n.w, "doctor: %s\n", n.text(now))
}

// text is "waiting for X: 3 s so far, at most 7 s more".
func (n *waitNotice) text(now time.Time) string {
	s := fmt.Sprintf("waiting for %s: %s so far", n.what, secs(now.Sub(n.since)))
	if !n.until.IsZero() {
		left := n.until.Sub(now)
		if left < 0 {
			left = 0
		}
		s += ", at most " + secs(left) + " more"
	}
	return s
}

func (n *waitNotice) draw() {
	if n.what == "" {
		return
	}
	// One terminal line: a wrapped line could not be redrawn in place.
	line := "doctor: " + n.text(time.Now())
	if r := []rune(line); len(r) > 79 {
		line = string(r[:78]) + "…"
	}
	fmt.Fprintf(n.w, "\r\033[K%s", line)
	n.shown = true
}

func (n *waitNotice) clear() {
	if n.shown {
		fmt.Fprint(n.w, "\r\033[K")
		n.shown = false
	}
}

// line writes a whole line (a -v message) without tearing a status line.
func (n *waitNotice) line(format string, a ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.clear()
	fmt.Fprintf(n.w, format, a...)
	if n.tty {
		n.draw()
	}
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%.0f s", d.Round(time.Second).Seconds())
}
