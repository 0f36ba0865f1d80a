package main

import (
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Without a terminal, a wait is named once it has lasted firstAfter, with
// how long it lasted and how long doctor will wait at most; short waits
// print nothing.
func TestWaitNoticeLines(t *testing.T) {
	var buf lockedBuf
	n := newWaitNotice(&buf, false)
	n.mu.Lock()
	n.firstAfter, n.every = 300*time.Millisecond, time.Hour
	n.mu.Unlock()
	n.set("the quick one", time.Now().Add(time.Minute))
	time.Sleep(50 * time.Millisecond)
	n.set("the python collector", time.Now().Add(10*time.Second))
	time.Sleep(700 * time.Millisecond)
	n.close()
	got := buf.String()
	if strings.Contains(got, "the quick one") {
		t.Errorf("a short wait was reported:\n%s", got)
	}
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "doctor: waiting for the python collector: ") || !strings.Contains(got, "s so far, at most ") {
		t.Errorf("want one line naming the wait:\n%q", got)
	}
	if strings.Contains(got, "\r") || strings.Contains(got, "\033") {
		t.Errorf("terminal codes without a terminal: %q", got)
	}
}

// On a terminal the status line is redrawn in place, kept to one line, and
// cleared when the wait ends.
func TestWaitNoticeTerminal(t *testing.T) {
	var buf lockedBuf
	n := newWaitNotice(&buf, true)
	n.set(strings.Repeat("a long thing ", 20), time.Now().Add(time.Second))
	n.close()
	got := buf.String()
	if !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("the status line is not cleared: %q", got)
	}
	for _, l := range strings.Split(got, "\r\033[K") {
		if len([]rune(l)) > 79 {
			t.Errorf("status line of %d characters: %q", len([]rune(l)), l)
		}
	}
}
