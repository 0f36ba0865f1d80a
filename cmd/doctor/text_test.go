package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

// TestFooterNamesTheCommand: the text report's last line points at -v and
// at Markdown for the command that made it, not at the diagnosis.
func TestFooterNamesTheCommand(t *testing.T) {
	log := explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log"
	snap := scenarioSnap("no-driver")
	cases := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"explain", log}, "", "Details: doctor explain -v " + log + ". For a support ticket: doctor explain --format markdown " + log + "."},
		{[]string{"explain"}, "E tensorflow failed call to cuInit: CUDA_ERROR_NO_DEVICE\n", "Details: doctor explain -v. For a support ticket: doctor explain --format markdown."},
		{[]string{"--from", snap}, "", "Details: doctor -v --from " + snap + ". For a support ticket: doctor --format markdown --from " + snap + "."},
	}
	for _, c := range cases {
		_, out, errOut := runDoctor(t, c.stdin, c.args...)
		if !strings.Contains(out, c.want) {
			t.Errorf("%q: footer lacks %q:\n%s%s", c.args, c.want, out, errOut)
		}
	}
	// Following the footer works: the -v form is accepted and verbose.
	code, out, _ := runDoctor(t, "", "explain", "-v", log)
	if code != 1 || strings.Contains(out, "Details: doctor") {
		t.Errorf("doctor explain -v FILE: exit %d\n%s", code, out)
	}
}

// TestNoHTMLEscaping: commands and placeholders reach people and scripts as
// they are ("2>&1", "GPU-<redacted>"), in -v text, Markdown and JSON.
func TestNoHTMLEscaping(t *testing.T) {
	log := explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log"
	for _, args := range [][]string{
		{"explain", "-v", log},
		{"explain", "--format", "markdown", log},
		{"explain", "--format", "json", log},
		{"--from", scenarioSnap("healthy-linux"), "--format", "markdown"},
		{"--from", scenarioSnap("healthy-linux"), "-v"},
		{"rules", "--format", "json"},
	} {
		_, out, _ := runDoctor(t, "", args...)
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(out, esc) {
				t.Errorf("%q prints %s", args, esc)
			}
		}
		if args[0] == "explain" && args[1] == "-v" && !strings.Contains(out, "2>&1") {
			t.Errorf("%q lacks the command with 2>&1:\n%s", args, out)
		}
		if args[len(args)-1] == "json" && !json.Valid([]byte(out)) {
			t.Errorf("%q: not valid JSON", args)
		}
	}
}

// TestTextWidth: text for a file or a pipe is never cut; on a terminal,
// one-line summaries are cut to the terminal's width.
func TestTextWidth(t *testing.T) {
	run := func(tty bool, width int, args ...string) string {
		ios, _, out, _ := iostreams.Test()
		ios.SetTTY(false, tty, false)
		ios.SetTerminalWidth(width)
		Main(t.Context(), append([]string{"doctor"}, args...), ios)
		return out.String()
	}
	args := []string{"--from", scenarioSnap("healthy-wsl2"), "--no-color"}
	piped := run(false, 0, args...)
	if strings.Contains(piped, "…") {
		t.Errorf("text to a pipe is cut:\n%s", piped)
	}
	term := run(true, 60, args...)
	if !strings.Contains(term, "…") {
		t.Errorf("nothing cut for a terminal 60 wide:\n%s", term)
	}
	for _, l := range strings.Split(term, "\n") {
		if strings.HasPrefix(l, "[") && len([]rune(l)) > 60 {
			t.Errorf("line of %d runes on a terminal 60 wide: %q", len([]rune(l)), l)
		}
	}
	if ios, _, _, _ := iostreams.Test(); ios.TerminalWidth() != 0 {
		t.Errorf("test streams (no terminal) have width %d", ios.TerminalWidth())
	}
}

// A log whose name looks like a flag: the footer's commands put "--" before
// it, and following them works.
func TestFooterKeepsADashName(t *testing.T) {
	body, err := os.ReadFile(explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("-odd.log", body, 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := runDoctor(t, "", "explain", "--", "-odd.log")
	want := "Details: doctor explain -v -- -odd.log."
	if !strings.Contains(out, want) {
		t.Fatalf("footer lacks %q:\n%s%s", want, out, errOut)
	}
	code, out, errOut := runDoctor(t, "", "explain", "-v", "--", "-odd.log")
	if code != 1 || strings.Contains(out, "Details: doctor") {
		t.Errorf("following the footer: exit %d\n%s%s", code, out, errOut)
	}
}
