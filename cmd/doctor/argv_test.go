package main

import (
	"context"

	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

func TestNormalizeArgs(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"", ""},
		{"--format json", "--format json"},
		{"--format json verify", "verify --format json"},
		{"--format json fix --dry-run", "fix --format json --dry-run"},
		{"--quick snapshot", "snapshot --quick"},
		{"--timeout 1ns snapshot", "snapshot --timeout 1ns"},
		{"explain tf.log --format json", "explain --format json tf.log"},
		{"explain tf.log -f=json -v", "explain -f=json -v tf.log"},
		{"explain - --format json", "explain --format json -"},
		{"-v explain -", "explain -v -"},
		{"--fix --grace 5s", "--fix --grace 5s"},
		{"fix stop-gpu-process --grace 5s", "fix --grace 5s stop-gpu-process"},
		{"fix a --yes b", "fix --yes a b"},
		{"--python /x snapshot", "snapshot --python /x"},
		{"snapshot --python /x -o out.json", "snapshot --python /x -o out.json"},
		{"watch --pid -5", "watch --pid -5"},
		{"--size 64 verify --runs 2", "verify --size 64 --runs 2"},
		{"explain -- --format", "explain -- --format"},
		{"explain --format json -- -v", "explain --format json -- -v"},
		{"fix a -- --yes", "fix -- a --yes"},
		{"--from - --format json", "--from - --format json"},
		{"frobnicate --format json", "--format json frobnicate"},
		{"verify --version", "--version"},
		{"explain x --version", "--version"},
		{"--version fix", "--version"},
		{"explain x --help", "explain --help"},
		{"explain -h x --format json", "explain --help"},
		{"--help verify", "verify --help"},
		{"fix stop-gpu-process -h", "fix --help"},
		{"explain -- -h", "explain -- -h"},
		{"verify __rung", "verify __rung"},
		{"--format=json rules", "rules --format=json"},
		{"--no-color rules", "rules --no-color"},
		{"-v rules", "rules -v"},
		{"--no-color -v explain tf.log", "explain --no-color -v tf.log"},
		{"--no-color verify", "verify --no-color"},
		{"--nope rules", "rules --nope"}, // no command takes it: urfave says so
	}
	app := newApp(NewFactory(&iostreams.IOStreams{}))
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := normalizeArgs(app, append([]string{"doctor"}, strings.Fields(c.in)...))
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]string{"doctor"}, strings.Fields(c.want)...); !reflect.DeepEqual(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// parsed is what a command line means: the command and its options.
type parsed struct {
	Cmd     string
	Diag    diagnoseOptions
	Fix     fixOptions
	IsFix   bool
	Explain explainOptions
	Watch   watchOptions
	Extra   map[string]any
}

// parseArgs runs doctor's command line up to the options, without running
// the command: every Action is replaced by one that records what it parsed.
func parseArgs(args ...string) (parsed, error) {
	var p parsed
	app := newApp(NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}}))
	app.Action = func(c *cli.Context) error {
		p.Cmd = "doctor"
		o, err := diagnoseOptionsFrom(c)
		p.Diag = o
		if err == nil && c.Bool("fix") {
			p.IsFix = true
			p.Fix, err = fixFlagsOptionsFrom(c, o)
		} else if err == nil {
			err = fixFlagsNeedFix(c)
		}
		p.Extra = map[string]any{"args": c.Args().Slice()}
		return err
	}
	for _, cmd := range app.Commands {
		cmd := cmd
		cmd.Action = func(c *cli.Context) error {
			p.Cmd = cmd.Name
			var err error
			switch cmd.Name {
			case "snapshot":
				p.Diag, err = diagnoseOptionsFrom(c)
				p.Extra = map[string]any{"output": c.String("output")}
			case "verify":
				p.Diag, err = diagnoseOptionsFrom(c)
				if err == nil {
					vo, verr := verifyOptionsFrom(c, p.Diag)
					p.Extra = map[string]any{"size": vo.Size, "runs": vo.Runs, "libcuda": vo.LibCUDA, "rungs": vo.Rungs}
					err = verr
				}
			case "fix":
				p.IsFix = true
				p.Fix, err = fixOptionsFrom(c)
			case "explain":
				p.Explain, err = explainOptionsFrom(c)
			case "watch":
				p.Watch, err = watchOptionsFrom(c)
			case "rules":
				p.Extra = map[string]any{"format": c.String("format"), "args": c.Args().Slice(), "verbose": c.Bool("verbose"), "no-color": c.Bool("no-color")}
			}
			return err
		}
	}
	err := runApp(context.Background(), app, append([]string{"doctor"}, args...))
	return p, err
}

// TestFlagPositions is the table of the rule in argv.go: each command line
// parses to the same options as its canonical form, and to what the flags
// say.
func TestFlagPositions(t *testing.T) {
	py := filepath.Join(t.TempDir(), "python3")
	os.WriteFile(py, []byte("#!/bin/sh\n"), 0o755)
	cases := []struct {
		args      string
		canonical string
		check     func(p parsed) bool
	}{
		{"--format json verify", "verify --format json", func(p parsed) bool { return p.Cmd == "verify" && p.Diag.Format == "json" }},
		{"verify --size 64 --format json", "verify --format json --size 64", func(p parsed) bool { return p.Diag.Format == "json" && p.Extra["size"] == 64 }},
		{"--size 64 verify", "verify --size 64", func(p parsed) bool { return p.Extra["size"] == 64 }},
		{"--format json fix --dry-run", "fix --format json --dry-run", func(p parsed) bool { return p.Cmd == "fix" && p.Fix.diag.Format == "json" && p.Fix.DryRun }},
		{"--quick snapshot", "snapshot --quick", func(p parsed) bool { return p.Cmd == "snapshot" && p.Diag.Quick }},
		{"--timeout 1ns snapshot", "snapshot --timeout 1ns", func(p parsed) bool { return p.Diag.Timeout == time.Nanosecond }},
		{"-o out.json snapshot --quick", "snapshot --quick -o out.json", func(p parsed) bool { return p.Extra["output"] == "out.json" && p.Diag.Quick }},
		{"--python " + py + " snapshot", "snapshot --python " + py, func(p parsed) bool { return p.Diag.Python == py }},
		{"snapshot --python " + py + " --quick", "snapshot --quick --python " + py, func(p parsed) bool { return p.Diag.Python == py && p.Diag.Quick }},
		{"explain tf.log --format json", "explain --format json tf.log", func(p parsed) bool { return p.Explain.Path == "tf.log" && p.Explain.Format == "json" }},
		{"--format json explain tf.log", "explain --format json tf.log", func(p parsed) bool { return p.Explain.Format == "json" }},
		{"explain - -v", "explain -v -", func(p parsed) bool { return p.Explain.Path == "-" && p.Explain.Verbose }},
		{"explain -- -v", "explain -- -v", func(p parsed) bool { return p.Explain.Path == "-v" && !p.Explain.Verbose }},
		{"--fix --grace 5s", "--grace 5s --fix", func(p parsed) bool { return p.IsFix && p.Fix.Grace == 5*time.Second }},
		{"--fix -y --dry-run --format json", "--format json --fix -y --dry-run", func(p parsed) bool { return p.Fix.Yes && p.Fix.DryRun && p.Diag.Format == "json" }},
		{"fix stop-gpu-process --grace 5s", "fix --grace 5s stop-gpu-process", func(p parsed) bool {
			return reflect.DeepEqual(p.Fix.Names, []string{"stop-gpu-process"}) && p.Fix.Grace == 5*time.Second
		}},
		{"fix a --yes b", "fix --yes a b", func(p parsed) bool { return p.Fix.Yes && reflect.DeepEqual(p.Fix.Names, []string{"a", "b"}) }},
		{"--undo fix", "fix --undo", func(p parsed) bool { return p.Fix.Undo }},
		{"-v watch --duration 2s", "watch -v --duration 2s", func(p parsed) bool { return p.Watch.Verbose && p.Watch.Duration == 2*time.Second }},
		{"--format json watch -p 42", "watch --format json --pid 42", func(p parsed) bool { return p.Watch.Format == "json" && p.Watch.PID == 42 }},
		{"-f json rules", "rules --format json", func(p parsed) bool { return p.Extra["format"] == "json" }},
		// The display flags, before any command (alias doctor='doctor --no-color').
		{"--no-color rules", "rules --no-color", func(p parsed) bool { return p.Cmd == "rules" && p.Extra["no-color"] == true }},
		{"-v rules", "rules -v", func(p parsed) bool { return p.Cmd == "rules" && p.Extra["verbose"] == true }},
		{"--no-color explain tf.log", "explain --no-color tf.log", func(p parsed) bool { return p.Explain.NoColor && p.Explain.Path == "tf.log" }},
		{"--no-color -v watch", "watch --no-color -v", func(p parsed) bool { return p.Watch.NoColor && p.Watch.Verbose }},
		{"--no-color -v verify", "verify --no-color -v", func(p parsed) bool { return p.Cmd == "verify" && p.Diag.NoColor && p.Diag.Verbose }},
		{"--no-color -v snapshot", "snapshot --no-color -v", func(p parsed) bool { return p.Cmd == "snapshot" && p.Diag.NoColor && p.Diag.Verbose }},
		{"--no-color -v fix --dry-run", "fix --no-color -v --dry-run", func(p parsed) bool { return p.Fix.diag.NoColor && p.Fix.diag.Verbose }},
		{"--from - -v", "-v --from -", func(p parsed) bool { return p.Diag.From == "-" && p.Diag.Verbose }},
		{"--check driver --skip driver.nvml --check env", "--check driver,env --skip driver.nvml", func(p parsed) bool {
			return reflect.DeepEqual(p.Diag.Only, []string{"driver", "env"})
		}},
		{"--check driver verify --check runtime", "verify --check driver --check runtime", func(p parsed) bool {
			return reflect.DeepEqual(p.Diag.Only, []string{"driver", "runtime"})
		}},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			got, err := parseArgs(strings.Fields(c.args)...)
			if err != nil {
				t.Fatalf("%s: %v", c.args, err)
			}
			want, err := parseArgs(strings.Fields(c.canonical)...)
			if err != nil {
				t.Fatalf("%s: %v", c.canonical, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q parses to\n%+v\nbut %q to\n%+v", c.args, got, c.canonical, want)
			}
			if !c.check(got) {
				t.Errorf("%q parses to %+v", c.args, got)
			}
		})
	}
}

// TestFlagPositionErrors: what the rule refuses, with exit 2 and a message
// that names the flag.
func TestFlagPositionErrors(t *testing.T) {
	cases := []struct{ args, msg string }{
		{"--quick explain x", "--quick does not apply to doctor explain; it is taken by doctor, doctor snapshot, doctor fix"},
		{"explain x --quick", "--quick does not apply to doctor explain; it is taken by doctor, doctor snapshot, doctor fix"},
		{"--from x snapshot", "--from does not apply to doctor snapshot; it is taken by doctor"},
		{"--fix verify", "--fix does not apply to doctor verify; it is taken by doctor"},
		{"--python /x rules", "--python does not apply to doctor rules; it is taken by doctor, doctor snapshot, doctor verify, doctor fix"},
		{"rules --redact", "--redact does not apply to doctor rules; it is taken by doctor, doctor snapshot, doctor explain, doctor verify, doctor watch, doctor fix"},
		{"--format=json --quick rules", "--quick does not apply to doctor rules"},
		{"explain --python --version", "--python does not apply to doctor explain"},
		{"verify --quick", "--quick does not apply to doctor verify (--quick skips the ladder"},
		{"--root /tmp verify", "--root does not apply to doctor verify (verify runs real GPU work on this machine"},
		{"--size 64", "--size does not apply to doctor; it is taken by doctor verify"},
		{"--pid=5 explain x", "--pid does not apply to doctor explain; it is taken by doctor watch"},
		{"--nope rules", "flag provided but not defined: -nope"},
		{"explain a b", "explain takes one FILE"},
		{"--grace 5s", "--grace goes with --fix"},
		{"--fix --grace 0s", "--grace must be positive"},
		{"fix --grace -1s", "--grace must be positive"},
		{"explain --nope x", "flag provided but not defined: -nope"},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			_, err := parseArgs(strings.Fields(c.args)...)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want %q", err, c.msg)
			}
			code, _, errOut := runDoctor(t, "", strings.Fields(c.args)...)
			if code != exitUsage || !strings.Contains(errOut, c.msg) {
				t.Errorf("exit %d, want 2; stderr %q", code, errOut)
			}
		})
	}
}

// TestDisplayFlagsEverywhere: every command a user can type takes the
// display flags, so alias doctor='doctor --no-color' (or -v) works with all
// of them.
func TestDisplayFlagsEverywhere(t *testing.T) {
	app := newApp(NewFactory(&iostreams.IOStreams{}))
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			idx := flagIndex(c.Flags)
			for _, n := range []string{"no-color", "verbose", "v"} {
				if _, ok := idx[n]; !ok {
					t.Errorf("%s%s does not take --%s", prefix, c.Name, n)
				}
			}
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("doctor ", app.Commands)
}

// TestDisplayFlagsExitCodes: the display flags before a command run it as
// written after it; on rules, which prints every doc in full and no colour,
// they change nothing at all.
func TestDisplayFlagsExitCodes(t *testing.T) {
	log := explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log"
	_, plain, _ := runDoctor(t, "", "rules")
	report := filepath.Join(t.TempDir(), "no-driver.json")
	if code, _, errOut := runDoctor(t, "", "--from", scenarioSnap("no-driver"), "--format", "json", "-o", report); code != exitFindings {
		t.Fatalf("writing a report: exit %d: %s", code, errOut)
	}
	cases := []struct {
		args []string
		code int
		same string // "" or the output it must equal
	}{
		{[]string{"--no-color", "rules"}, 0, plain},
		{[]string{"-v", "rules"}, 0, plain},
		{[]string{"rules", "--verbose", "--no-color"}, 0, plain},
		{[]string{"--no-color", "explain", log}, 1, ""},
		{[]string{"-v", "--no-color", "explain", log}, 1, ""},
		{[]string{"--no-color", "-v", "fleet", report}, 1, ""},
		{[]string{"--quick", "explain", log}, 2, ""},
		{[]string{"--quick", "fleet", report}, 2, ""},
		{[]string{"--python", "/usr/bin/python3", "rules"}, 2, ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runDoctor(t, "", c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if c.same != "" && out != c.same {
				t.Errorf("output differs from plain doctor rules:\n%s", out)
			}
			if code == exitUsage && !strings.Contains(errOut, "it is taken by doctor") {
				t.Errorf("stderr %q does not name the commands that take the flag", errOut)
			}
		})
	}
}

// TestFlagPositionsSameOutput: every position the rule allows prints what
// the canonical form prints, with the same exit code.
func TestFlagPositionsSameOutput(t *testing.T) {
	snap := scenarioSnap("no-driver")
	log := explainLogs + "/libcudnn_missing/tf216_vlog_cudnn.log"
	cases := []struct{ args, canonical []string }{
		{[]string{"explain", log, "--format", "json"}, []string{"explain", "--format", "json", log}},
		{[]string{"--format", "json", "explain", log}, []string{"explain", "--format", "json", log}},
		{[]string{"explain", log, "-v"}, []string{"explain", "-v", log}},
		{[]string{"-f", "markdown", "explain", "-"}, []string{"explain", "-f", "markdown", "-"}},
		{[]string{"--from", snap, "--format", "json"}, []string{"--format", "json", "--from", snap}},
		{[]string{"--from", snap, "-v", "--check", "driver"}, []string{"-v", "--check", "driver", "--from", snap}},
		{[]string{"explain", log, "--version"}, []string{"--version"}},
		{[]string{"fix", "--version"}, []string{"--version"}},
		{[]string{"watch", "--version"}, []string{"--version"}},
		{[]string{"explain", log, "-h"}, []string{"explain", "--help"}},
		{[]string{"-h", "fix", "x"}, []string{"fix", "--help"}},
	}
	stdin, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runDoctor(t, string(stdin), c.args...)
			wcode, wout, werr := runDoctor(t, string(stdin), c.canonical...)
			if normalize(out) != normalize(wout) || code != wcode || errOut != werr {
				t.Errorf("%q: exit %d\n%s\n%s\ncanonical %q: exit %d\n%s\n%s", c.args, code, out, errOut, c.canonical, wcode, wout, werr)
			}
			if wout == "" {
				t.Errorf("canonical form printed nothing (exit %d): %s", wcode, werr)
			}
		})
	}
}

// FuzzNormalizeArgs: the rewrite never panics, never loses or invents an
// argument, and is idempotent (the canonical form is its own canonical
// form).
func FuzzNormalizeArgs(f *testing.F) {
	for _, s := range []string{
		"--format json verify", "explain tf.log --format json", "fix a --grace 5s -- --yes b",
		"--python /x snapshot -o out", "watch --pid -5 -q", "explain - -v", "--from - -f md",
		"-h fix x", "verify --version", "--quick explain x", "frobnicate --format json explain",
	} {
		f.Add(s)
	}
	app := newApp(NewFactory(&iostreams.IOStreams{}))
	f.Fuzz(func(t *testing.T, s string) {
		in := append([]string{"doctor"}, strings.Fields(s)...)
		out, err := normalizeArgs(app, in)
		if err != nil {
			return
		}
		help, version := false, false
		for _, a := range out[1:] {
			help = help || a == "--help"
			version = version || a == "--version"
		}
		if help || version {
			return
		}
		count := func(xs []string) map[string]int {
			m := map[string]int{}
			for _, x := range xs {
				m[x]++
			}
			return m
		}
		if !reflect.DeepEqual(count(in), count(out)) {
			t.Fatalf("%q became %q", in, out)
		}
		again, err := normalizeArgs(app, out)
		if err != nil || !reflect.DeepEqual(again, out) {
			t.Fatalf("%q → %q → %q (%v)", in, out, again, err)
		}
	})
}
