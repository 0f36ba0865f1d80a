package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/rules"
)

// explainRules are the log signatures and the reasoning steps, for
// `doctor rules`.
func explainRules() []ruleDoc {
	var out []ruleDoc
	for _, d := range rules.SignatureDocs() {
		out = append(out, ruleDoc{Kind: d.Kind, ID: d.ID, Link: d.Link, Title: d.Title, Causes: d.Causes, Doc: d.Doc})
	}
	return out
}

// explainOptions are the options of `doctor explain`.
type explainOptions struct {
	Path     string // "" or "-": standard input
	Format   string
	Verbose  bool
	NoColor  bool
	NoRedact bool
	Redact   bool
	Output   string // -o FILE
}

const explainHelp = `Reads what was pasted from a machine with the problem (TensorFlow's stderr, a
Python traceback, nvidia-smi output or errors, dmesg/journal lines, pip,
conda or container runtime errors, several mixed together) and answers with
the same report as doctor: findings ranked along the chain, the root cause
first, the evidence lines quoted with their line numbers, and the fix.

   doctor explain tf.log
   python train.py 2>&1 | doctor explain
   doctor explain --format json - < paste.txt

With no FILE (or -) the log is read from standard input.

EXIT CODES:
   0  no error-severity finding: only warnings, only harmless messages
      (root cause benign_warning_only), or nothing recognised (root_cause
      null and one info finding asking for the output that would decide)
   1  at least one error-severity finding
   2  bad usage, or a log that cannot be read: missing, empty or binary
   3  doctor itself failed
   130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM: every wait ends, children are killed
`

func explainCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:        "explain",
		Usage:       "diagnose a pasted log (TensorFlow stderr, traceback, nvidia-smi, dmesg, pip, conda...)",
		ArgsUsage:   "[FILE or -]",
		Description: explainHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "output format: text, json, markdown or prometheus"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "show every finding with its detail, evidence and fixes"},
			&cli.BoolFlag{Name: "no-color", Usage: "no colour (also NO_COLOR=1)"},
			&cli.BoolFlag{Name: "no-redact", Usage: "keep user, host names, home paths and GPU UUIDs in Markdown output"},
			&cli.BoolFlag{Name: "redact", Usage: "redact personal data in text and JSON output too"},
			outputFlag(),
		},
		Action: func(c *cli.Context) error {
			o, err := explainOptionsFrom(c)
			if err != nil {
				return err
			}
			return runExplain(c.Context, o, ios)
		},
	}
}

// explainOptionsFrom parses the flags; a flag given before the subcommand
// (doctor --format json explain) counts too.
func explainOptionsFrom(c *cli.Context) (explainOptions, error) {
	if c.NArg() > 1 {
		return explainOptions{}, usageErr("explain takes one FILE (or - for standard input), got %d arguments", c.NArg())
	}
	str := func(name string) string {
		for _, ctx := range c.Lineage() {
			if ctx.IsSet(name) {
				return ctx.String(name)
			}
		}
		return c.String(name)
	}
	flag := func(name string) bool {
		for _, ctx := range c.Lineage() {
			if ctx.IsSet(name) {
				return ctx.Bool(name)
			}
		}
		return false
	}
	o := explainOptions{
		Path:     c.Args().First(),
		Format:   strings.ToLower(str("format")),
		Verbose:  flag("verbose"),
		NoColor:  flag("no-color"),
		NoRedact: flag("no-redact"),
		Redact:   flag("redact"),
		Output:   str("output"),
	}
	if err := checkOutputFile(o.Output); err != nil {
		return o, err
	}
	if o.Format == "md" {
		o.Format = "markdown"
	}
	for _, f := range formats {
		if f == o.Format {
			return o, nil
		}
	}
	return o, usageErr("unknown --format %q: use one of %s", o.Format, strings.Join(formats, ", "))
}

func runExplain(ctx context.Context, o explainOptions, ios *iostreams.IOStreams) error {
	var in io.Reader
	name := o.Path
	if o.Path == "" || o.Path == "-" {
		in, name = ios.In, "standard input"
		if ios.IsStdinTTY() {
			fmt.Fprintln(ios.ErrOut, "doctor: paste the log, then press Ctrl-D on an empty line")
		}
	} else {
		f, err := openInput(ctx, o.Path)
		if interrupted(ctx, err) {
			return errInterrupted
		}
		if err != nil {
			return usageErr("cannot read the log: %v", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return usageErr("cannot read the log %s: it is a folder", o.Path)
		}
		in = f
	}
	// A read waiting on a terminal, a pipe or a FIFO ends on Ctrl-C.
	r, err := rules.Explain(newCtxReader(ctx, in), rules.ExplainOptions{Version: toolVersion()})
	if interrupted(ctx, err) {
		return errInterrupted
	}
	if err != nil {
		var ie *rules.InputError
		if errors.As(err, &ie) {
			return usageErr("%s: %s", name, ie.Msg)
		}
		return usageErr("cannot read the log %s: %v", name, err)
	}
	if r.Input != nil {
		fmt.Fprintf(ios.ErrOut, "doctor: read %s (%d lines) from %s\n", sizeOf(r.Input.Bytes), r.Input.Lines, name)
	}
	dopts := diagnoseOptions{Format: o.Format, Verbose: o.Verbose, NoColor: o.NoColor, NoRedact: o.NoRedact, Redact: o.Redact,
		Command: "doctor explain", Output: o.Output}
	if o.Path != "" && o.Path != "-" {
		if strings.HasPrefix(o.Path, "-") {
			// A name that looks like a flag needs "--" before it, or the
			// printed next command would be refused.
			dopts.Command += " --"
		}
		dopts.Command += " " + shellQuote(o.Path)
		if o.Redact {
			dopts.Command = "doctor explain FILE"
		}
	}
	if err := render(ios, r, nil, dopts); err != nil {
		return internalErr("writing the report: %v", err)
	}
	return exitCode(r.ExitCode())
}

// sizeOf writes a byte count for people.
func sizeOf(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
