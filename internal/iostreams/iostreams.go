// Package iostreams carries doctor's input and output streams and makes the
// terminal decisions (colour, TTY) once, so commands and tests share them.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"
)

// IOStreams is where a command reads and writes. Progress and diagnostics go
// to ErrOut; the report alone goes to Out.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	color                          bool
	width                          int // of the terminal on Out; 0: not a terminal
}

// System returns the process's streams with colour decided from the
// terminal and the environment: NO_COLOR (not empty) and CLICOLOR=0 turn it
// off, CLICOLOR_FORCE (not 0) turns it on, otherwise it is on for a
// terminal.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdinTTY:  isatty.IsTerminal(os.Stdin.Fd()),
		stdoutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		stderrTTY: isatty.IsTerminal(os.Stderr.Fd()),
	}
	s.color = ColorFromEnv(os.Getenv, s.stdoutTTY)
	if s.stdoutTTY {
		s.width = terminalWidth(int(os.Stdout.Fd()), os.Getenv)
	}
	return s
}

// terminalWidth is the width of the terminal on fd: the kernel's answer,
// else $COLUMNS, else 80.
func terminalWidth(fd int, getenv func(string) string) int {
	if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// TerminalWidth is the width of the terminal the report goes to, 0 when
// it does not go to a terminal: text for a file, a pipe or a ticket is
// never cut to a width.
func (s *IOStreams) TerminalWidth() int {
	if !s.stdoutTTY {
		return 0
	}
	if s.width <= 0 {
		return 80
	}
	return s.width
}

// SetTerminalWidth sets the terminal's width (tests).
func (s *IOStreams) SetTerminalWidth(n int) { s.width = n }

// ColorFromEnv applies the NO_COLOR / CLICOLOR / CLICOLOR_FORCE conventions.
func ColorFromEnv(getenv func(string) string, tty bool) bool {
	// no-color.org: NO_COLOR present and not empty disables colour.
	if getenv("NO_COLOR") != "" {
		return false
	}
	if v := getenv("CLICOLOR_FORCE"); v != "" && v != "0" {
		return true
	}
	if getenv("CLICOLOR") == "0" {
		return false
	}
	if getenv("TERM") == "dumb" {
		return false
	}
	return tty
}

// Test returns streams backed by buffers: no TTY, no colour.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// ColorEnabled reports whether the report may carry colour.
func (s *IOStreams) ColorEnabled() bool { return s.color }

// SetColorEnabled overrides the colour decision (--no-color, tests).
func (s *IOStreams) SetColorEnabled(on bool) { s.color = on }

// IsStdinTTY reports whether input comes from a terminal (prompts).
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether output goes to a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether progress may be drawn in place.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetTTY sets the TTY flags (tests of interactive paths).
func (s *IOStreams) SetTTY(stdin, stdout, stderr bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = stdin, stdout, stderr
}
