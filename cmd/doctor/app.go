package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/fixes"
	"github.com/tfdoctor/doctor/internal/iostreams"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func toolVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// Exit codes: the CLI contract in DESIGN.md.
const (
	exitOK       = 0 // no error-severity finding
	exitFindings = 1 // at least one error-severity finding
	exitUsage    = 2 // bad usage or bad input
	exitInternal = 3 // doctor itself failed
)

// exitError carries an exit code and a one-line message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, a...)}
}

func internalErr(format string, a ...any) error {
	return &exitError{code: exitInternal, msg: fmt.Sprintf(format, a...)}
}

// exitCode is returned by a command that ran to the end with a verdict.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

const helpExtra = `EXIT CODES:
   0  no error-severity finding (with --fix: every error was fixed and verified)
   1  at least one error-severity finding remains
   2  bad usage or bad input (unknown flag, unreadable snapshot or log)
   3  doctor itself failed
   130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM: every wait ends, children are killed

ENVIRONMENT:
   NO_COLOR          any non-empty value turns colour off (as --no-color)
   CLICOLOR=0        turns colour off; CLICOLOR_FORCE=1 turns it on without a terminal
   CONDA_PREFIX      the active conda environment, examined when --python is not given
   VIRTUAL_ENV       the active venv, examined when --python and CONDA_PREFIX are not given
                     (both set: the one whose bin comes first on PATH; the checks, the
                     verification ladder and the fixes all use that one interpreter)
   XDG_STATE_HOME    where doctor --fix keeps its journal and backups (default ~/.local/state/doctor)
   CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH and the TF_*/XLA_* variables are examined, never changed.
`

// Main runs doctor with args (args[0] is the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, ios *iostreams.IOStreams) int {
	return MainWith(ctx, args, NewFactory(ios))
}

// MainWith is Main with the dependencies given (tests pass fakes).
func MainWith(ctx context.Context, args []string, f *Factory) int {
	return resolveExit(runApp(ctx, newApp(f), args), f.IOStreams)
}

// runApp runs app on args put in the canonical order (argv.go).
func runApp(ctx context.Context, app *cli.App, args []string) error {
	args, err := normalizeArgs(app, args)
	if err != nil {
		return err
	}
	return app.RunContext(ctx, args)
}

func resolveExit(err error, ios *iostreams.IOStreams) int {
	if err == nil {
		return exitOK
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	if errors.Is(err, errInterrupted) {
		return errInterrupted.code // the signal was reported when it came
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(ios.ErrOut, "doctor: %s\n", ee.msg)
		return ee.code
	}
	// Anything else comes from flag parsing in urfave/cli: a usage error.
	fmt.Fprintf(ios.ErrOut, "doctor: %s\nRun 'doctor --help' for usage.\n", err)
	return exitUsage
}

// commonFlags are accepted by the diagnosis and by every subcommand that
// examines a machine, before or after the subcommand's name.
func commonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "output format: text, json, markdown or prometheus"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "show every finding with its detail, evidence and fixes"},
		&cli.BoolFlag{Name: "quick", Usage: "no runtime probe: no Python import and no GPU matmul"},
		&cli.StringFlag{Name: "python", Usage: "the interpreter whose environment is examined (default: the active conda env or venv, else python3 on PATH)"},
		&cli.StringFlag{Name: "root", Usage: "read machine files under `DIR` instead of / (recorded trees, support cases)"},
		&cli.DurationFlag{Name: "timeout", Value: DefaultRunTimeout, Usage: "bound for the whole run, the ladder included; collectors keep their own short deadlines and each rung's deadline is cut to what is left"},
		&cli.BoolFlag{Name: "no-color", Usage: "no colour (also NO_COLOR=1)"},
		&cli.StringSliceFlag{Name: "check", Usage: "run only this check `ID` (or a whole link, e.g. driver); repeatable"},
		&cli.StringSliceFlag{Name: "skip", Usage: "leave out this check `ID` (or link); repeatable"},
		&cli.BoolFlag{Name: "no-redact", Usage: "keep user, host names, home paths and GPU UUIDs in Markdown output"},
		&cli.BoolFlag{Name: "redact", Usage: "redact personal data in text and JSON output too"},
		outputFlag(),
	}
}

func newApp(f *Factory) *cli.App {
	ios := f.IOStreams
	// -v is --verbose here; --version has no short form.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
	app := &cli.App{
		Name:    "doctor",
		Usage:   "find out why TensorFlow does not see or use the NVIDIA GPU, and fix it",
		Version: toolVersion(),
		Description: `Examines the chain from the GPU up to TensorFlow (hardware, kernel module,
driver, environment, CUDA libraries, Python and TensorFlow, runtime) and names
the lowest broken link as the root cause, with the evidence and the exact fix.

   doctor                      diagnose this machine
   doctor --fix                diagnose, show the repair plan, ask, apply, verify
   doctor --from snap.json     evaluate a saved snapshot; touch nothing here
   doctor --format markdown    a redacted report to paste into a ticket

` + helpExtra,
		Reader:               ios.In,
		Writer:               ios.Out,
		ErrWriter:            ios.ErrOut,
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "from", Usage: "evaluate a saved snapshot `FILE` (- for standard input) instead of this machine"},
			&cli.BoolFlag{Name: "fix", Usage: "repair what can be repaired: show the plan, ask, apply, verify"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --fix: accept safe and moderate fixes without asking (never dangerous ones)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "with --fix: print the plan only"},
			&cli.DurationFlag{Name: "grace", Value: fixes.DefaultGrace, Usage: "with --fix: time a stopped process gets between SIGTERM and SIGKILL"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("unknown command %q (see doctor --help)", c.Args().First())
			}
			opts, err := diagnoseOptionsFrom(c)
			if err != nil {
				return err
			}
			if c.Bool("fix") {
				return runFixFromFlags(c, opts, f)
			}
			if err := fixFlagsNeedFix(c); err != nil {
				return err
			}
			return runDiagnose(c.Context, opts, f)
		},
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usageErr("%v", err)
		},
		ExitErrHandler: func(c *cli.Context, err error) {}, // Main maps errors to exit codes
		Commands: []*cli.Command{
			snapshotCommand(f),
			rulesCommand(ios),
			explainCommand(ios),
			verifyCommand(f),
			watchCommand(f),
			fleetCommand(ios),
			fixCommand(f),
		},
	}
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintf(c.App.Writer, "doctor %s\n", c.App.Version) }
	addDisplayFlags(app.Commands)
	for _, cmd := range app.Commands {
		cmd.OnUsageError = app.OnUsageError
	}
	return app
}

// addDisplayFlags gives every visible command the display flags, which
// change only how output looks: --no-color and -v/--verbose. So they may be
// written before any command (alias doctor='doctor --no-color', as before
// flag positions were checked) and a script that passes them everywhere
// keeps working (docs/CONTRACTS.md). A command that defines its own keeps
// its own, with its own meaning; one that does not gets a --verbose whose
// help says it changes nothing there.
func addDisplayFlags(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		idx := flagIndex(c.Flags)
		if _, ok := idx["no-color"]; !ok {
			c.Flags = append(c.Flags, &cli.BoolFlag{Name: "no-color", Usage: "no colour (also NO_COLOR=1)"})
		}
		if _, ok := idx["verbose"]; !ok {
			v := &cli.BoolFlag{Name: "verbose", Usage: "taken by every command; " + c.Name + " has no more detail to show, so it changes nothing here"}
			if _, ok := idx["v"]; !ok {
				v.Aliases = []string{"v"}
			}
			c.Flags = append(c.Flags, v)
		}
		addDisplayFlags(c.Subcommands)
	}
}

// fixFlagsNeedFix refuses --yes, --dry-run and --grace without --fix.
func fixFlagsNeedFix(c *cli.Context) error {
	for _, f := range []string{"yes", "dry-run", "grace"} {
		if c.IsSet(f) {
			return usageErr("--%s goes with --fix (or doctor fix)", f)
		}
	}
	return nil
}

// diagnoseOptions are the options of a diagnosis, parsed from flags.
type diagnoseOptions struct {
	Format   string
	Verbose  bool
	Quick    bool
	Python   string
	Root     string
	Timeout  time.Duration
	NoColor  bool
	Only     []string
	Skip     []string
	From     string
	NoRedact bool
	Redact   bool
	// Command is the command line the text report's footer names for -v
	// and Markdown (not a flag; "" is doctor itself, with --from/--root).
	Command string
	Output  string // -o FILE; "" or "-" is standard output
}

var formats = []string{"text", "json", "markdown", "prometheus"}

func diagnoseOptionsFrom(c *cli.Context) (diagnoseOptions, error) {
	o := diagnoseOptions{
		Format:   strings.ToLower(c.String("format")),
		Verbose:  c.Bool("verbose"),
		Quick:    c.Bool("quick"),
		Python:   c.String("python"),
		Root:     c.String("root"),
		Timeout:  c.Duration("timeout"),
		NoColor:  c.Bool("no-color"),
		Only:     splitIDs(c.StringSlice("check")),
		Skip:     splitIDs(c.StringSlice("skip")),
		From:     c.String("from"),
		NoRedact: c.Bool("no-redact"),
		Redact:   c.Bool("redact"),
		Output:   c.String("output"),
	}
	if o.Format == "md" {
		o.Format = "markdown"
	}
	ok := false
	for _, f := range formats {
		ok = ok || f == o.Format
	}
	if !ok {
		return o, usageErr("unknown --format %q: use one of %s", o.Format, strings.Join(formats, ", "))
	}
	if o.Timeout <= 0 {
		return o, usageErr("--timeout must be positive, got %s", o.Timeout)
	}
	// A path the user typed must exist; a bare name is looked up on PATH
	// by the collector (and its absence is a finding).
	if o.Python != "" && strings.Contains(o.Python, "/") && o.Root == "" {
		if st, err := os.Stat(o.Python); err != nil || st.IsDir() {
			return o, usageErr("--python %s: no such interpreter", o.Python)
		}
	}
	if o.From != "" && o.Root != "" {
		return o, usageErr("--from and --root exclude each other")
	}
	if err := checkOutputFile(o.Output); err != nil {
		return o, err
	}
	return o, nil
}

// splitIDs accepts both --check a --check b and --check a,b.
func splitIDs(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
