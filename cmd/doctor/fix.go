package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/fixes"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/rules"
)

// fixOptions are the options of `doctor --fix` and `doctor fix`.
type fixOptions struct {
	diag   diagnoseOptions
	Names  []string
	Yes    bool
	DryRun bool
	Undo   bool
	Grace  time.Duration
}

func fixFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "accept safe and moderate fixes without asking (never dangerous ones)"},
		&cli.BoolFlag{Name: "dry-run", Usage: "print the plan only; change nothing"},
		&cli.BoolFlag{Name: "undo", Usage: "restore the files the last fix run changed, byte for byte"},
		&cli.DurationFlag{Name: "grace", Value: fixes.DefaultGrace, Usage: "time a stopped process gets between SIGTERM and SIGKILL"},
	}
}

func fixCommand(f *Factory) *cli.Command {
	cmd := &cli.Command{
		Name:      "fix",
		Usage:     "repair: every fix doctor can apply, or only the fix IDs named",
		ArgsUsage: "[FIX-ID...]",
		Description: `Diagnoses the machine, shows the whole plan (exact file edits, commands as
argv, processes with PID, user and GPU memory), asks, applies, then examines
the machine again and runs the verification ladder.

On a terminal doctor asks per fix, and per process before stopping one.
Without a terminal it applies only with --yes. --yes covers safe and
moderate fixes; a dangerous fix (stopping a process, installing a driver)
runs only when its ID is named here and confirmed on a terminal:

   doctor fix stop-gpu-process

Steps that need root run only as root; otherwise the plan shows the sudo
line and nothing changes. Every edited file is backed up first into
$XDG_STATE_HOME/doctor (default ~/.local/state/doctor);
'doctor fix --undo' restores the last run's files.

Fix IDs: ` + strings.Join(fixes.KnownIDs(), ", "),
		Flags: append(commonFlags(), fixFlags()...),
	}
	cmd.Action = func(c *cli.Context) error {
		fo, err := fixOptionsFrom(c)
		if err != nil {
			return err
		}
		return runFix(c.Context, fo, f)
	}
	return cmd
}

// fixOptionsFrom parses `doctor fix [FIX-ID...]`.
func fixOptionsFrom(c *cli.Context) (fixOptions, error) {
	o, err := diagnoseOptionsFrom(c)
	if err != nil {
		return fixOptions{}, err
	}
	fo := fixOptions{diag: o, Names: splitIDs(c.Args().Slice()), Yes: c.Bool("yes"), DryRun: c.Bool("dry-run"), Undo: c.Bool("undo"), Grace: c.Duration("grace")}
	if fo.Undo && (len(fo.Names) > 0 || fo.Yes || fo.DryRun) {
		return fo, usageErr("fix --undo takes no fix IDs, --yes or --dry-run")
	}
	if fo.Grace <= 0 {
		return fo, usageErr("--grace must be positive, got %s", fo.Grace)
	}
	return fo, nil
}

// fixFlagsOptionsFrom parses `doctor --fix`.
func fixFlagsOptionsFrom(c *cli.Context, o diagnoseOptions) (fixOptions, error) {
	fo := fixOptions{diag: o, Yes: c.Bool("yes"), DryRun: c.Bool("dry-run"), Grace: c.Duration("grace")}
	if fo.Grace <= 0 {
		return fo, usageErr("--grace must be positive, got %s", fo.Grace)
	}
	return fo, nil
}

// runFixFromFlags is `doctor --fix`.
func runFixFromFlags(c *cli.Context, o diagnoseOptions, f *Factory) error {
	fo, err := fixFlagsOptionsFrom(c, o)
	if err != nil {
		return err
	}
	return runFix(c.Context, fo, f)
}

func runFix(ctx context.Context, fo fixOptions, f *Factory) error {
	ios := f.IOStreams
	o := fo.diag
	if o.From != "" {
		return usageErr("--fix repairs this machine; --from only evaluates a saved snapshot")
	}
	if fo.Grace <= 0 {
		fo.Grace = fixes.DefaultGrace
	}
	for _, n := range fo.Names {
		if !fixes.Known(n) {
			return usageErr("%v", &fixes.UnknownFixError{ID: n})
		}
	}
	// The plan and the questions go with the text report; with a machine
	// format on standard output they go to standard error.
	w := ios.Out
	if o.Format != "text" {
		w = ios.ErrOut
	}
	environ := f.Environ()
	m := fixes.NewMachine(o.Root, environ, nil)
	m.IsRoot = f.IsRoot
	self := f.Self()
	stateDir := m.StateDir()

	if !fo.DryRun {
		lock, err := fixes.AcquireLock(stateDir)
		if err != nil {
			var se *fixes.StateError
			if errors.Is(err, fixes.ErrLocked) || errors.As(err, &se) {
				return usageErr("%v", err)
			}
			return internalErr("cannot lock %s: %v", stateDir, err)
		}
		defer lock.Release()
	}
	if fo.Undo {
		return runUndo(stateDir, w, f.Now())
	}

	s, _, err := loadSnapshot(ctx, o, f, environ)
	if err != nil {
		return err
	}
	before, err := evaluate(s, o)
	if err != nil {
		return err
	}
	m.Snap = s
	plans, unused, err := fixes.Build(m, before, fo.Names)
	if err != nil {
		return usageErr("%v", err)
	}
	for _, n := range unused {
		fmt.Fprintf(w, "No failing finding calls for %s now; nothing to do for it.\n", n)
	}
	writeStatus(w, "Before", before)
	noLive := ""
	if !isLiveRoot(o.Root) {
		noLive = "--root: commands and signals would act on this machine, not on the tree"
	}
	popts := fixes.PlanOptions{IsRoot: m.IsRoot(), Self: self, Named: fo.Names, NoLive: noLive, Grace: fo.Grace.String()}
	fixes.WritePlan(w, plans, popts)
	if n := fixes.Deferred(before); n > 0 && len(fo.Names) == 0 {
		fmt.Fprintf(w, "%s that the causes above explain %s left for later: they rest on what is fixed first; run doctor --fix again afterwards.\n\n",
			plural(n, "finding", "findings"), map[bool]string{true: "is", false: "are"}[n == 1])
	}
	if fo.DryRun {
		fmt.Fprintln(w, "--dry-run: nothing was changed.")
		return finishUnchanged(ios, before, s, o)
	}

	sess := &fixes.Session{M: m, W: w, In: ios.In, TTY: ios.IsStdinTTY(), Yes: fo.Yes, Named: fo.Names,
		NoLive: noLive, Grace: fo.Grace, Self: self}
	res := sess.Run(ctx, plans)
	fmt.Fprintln(w)
	fixes.WriteOutcomes(w, res, self)
	noTTY := false
	for _, oc := range res.Outcomes {
		noTTY = noTTY || strings.HasPrefix(oc.Reason, "no terminal to ask")
	}

	if ctx.Err() != nil {
		fmt.Fprintln(w, "\nInterrupted: the fixes above that were not applied were left alone.")
		return exitCode(exitFindings)
	}
	if !res.Applied() {
		fmt.Fprintln(w, "\nNothing changed on this machine.")
		if noTTY {
			return usageErr("no terminal to ask for consent: rerun with --yes (safe and moderate fixes) or with --dry-run")
		}
		return finishUnchanged(ios, before, s, o)
	}

	// Examine again, with the environment a new shell gets: the fixes
	// changed files that new shells read, not this process's environment,
	// which stays as it is. The second gather and the ladder's children
	// are given the new environment explicitly.
	s2, _, err := loadSnapshot(ctx, o, f, afterFixEnv(environ, res.Env, w))
	if err != nil {
		return err
	}
	after, err := evaluate(s2, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	writeStatus(w, "After", after)
	writeComparison(w, before, after)
	if o.Quick || !isLiveRoot(o.Root) {
		fmt.Fprintln(w, "Verification ladder: not run (not available here, or --quick/--root); the checks above are the verification.")
	}
	fmt.Fprintln(w)
	if err := render(ios, after, s2, o); err != nil {
		return internalErr("writing the report: %v", err)
	}
	return exitCode(after.ExitCode())
}

// finishUnchanged ends a run that changed nothing: a machine format still
// gets its report on standard output.
func finishUnchanged(ios *iostreams.IOStreams, r *rules.Report, s *host.Snapshot, o diagnoseOptions) error {
	if o.Format != "text" {
		if err := render(ios, r, s, o); err != nil {
			return internalErr("writing the report: %v", err)
		}
	}
	return exitCode(r.ExitCode())
}

func isLiveRoot(root string) bool { return root == "" || filepath.Clean(root) == "/" }

// evaluate runs the selected checks, as the diagnosis does.
func evaluate(s *host.Snapshot, o diagnoseOptions) (*rules.Report, error) {
	r, err := rules.Evaluate(s, rules.Options{Only: o.Only, Skip: o.Skip})
	if err != nil {
		var uc *rules.UnknownCheckError
		if errors.As(err, &uc) {
			return nil, usageErr("%v", err)
		}
		return nil, internalErr("evaluating checks: %v", err)
	}
	r.Source = "live"
	return r, nil
}

// afterFixEnv is environ as a new shell gets it after the fixes (env: name
// to new value, nil to unset), for the second examination and the
// ladder's child processes. doctor's own environment is not changed.
func afterFixEnv(environ []string, env map[string]*string, w io.Writer) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(environ)+len(keys))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, changed := env[k]; !changed {
			out = append(out, kv)
		}
	}
	for _, k := range keys {
		if v := env[k]; v != nil {
			out = append(out, k+"="+*v)
		}
	}
	if len(keys) > 0 {
		fmt.Fprintf(w, "\nExamining again with the environment a new shell gets (%s changed).\n", strings.Join(keys, ", "))
	}
	return out
}

func runUndo(stateDir string, w io.Writer, now time.Time) error {
	res, err := fixes.Undo(stateDir, w, now)
	var se *fixes.StateError
	if errors.As(err, &se) {
		return usageErr("undo: %v", err)
	}
	if err != nil {
		return internalErr("undo: %v", err)
	}
	if res.Run == "" {
		fmt.Fprintln(w, "Nothing to undo: no fix run changed files (or all were undone).")
		return nil
	}
	writeUndo(w, res)
	if res.Partial {
		return exitCode(exitFindings)
	}
	return nil
}

// writeUndo says what an undo restored and what it did not.
func writeUndo(w io.Writer, res *fixes.UndoResult) {
	done := len(res.Restored) + len(res.Unchanged)
	switch {
	case !res.Partial:
		fmt.Fprintf(w, "Undid %s:\n", res.Run)
	case done > 0:
		fmt.Fprintf(w, "Undid part of %s:\n", res.Run)
	default:
		fmt.Fprintf(w, "Restored nothing of %s:\n", res.Run)
	}
	for _, p := range res.Restored {
		fmt.Fprintf(w, "  ✓ restored %s\n", p)
	}
	for _, p := range res.Unchanged {
		fmt.Fprintf(w, "  ✓ %s already held its old content\n", p)
	}
	for _, p := range res.Conflicts {
		if b := res.Backups[p]; b != "" {
			fmt.Fprintf(w, "  ✗ not restored: %s changed after the fix; your version stays (doctor's backup: %s)\n", p, b)
		} else {
			fmt.Fprintf(w, "  ✗ not removed: %s (created by the fix) changed after it; your version stays\n", p)
		}
	}
	for _, p := range res.Failed {
		fmt.Fprintf(w, "  ✗ not restored: %s: %s\n", p, res.Errors[p])
	}
	for _, p := range res.NotUndone {
		fmt.Fprintf(w, "  · not undone (not a file change): %s\n", p)
	}
	if res.Partial {
		fmt.Fprintln(w, "The run stays undoable for what is left: doctor fix --undo tries those files again and never overwrites an edit")
		fmt.Fprintln(w, "(to restore doctor's backup over your edit, copy it over the file first).")
	}
}

// writeStatus prints a one-line verdict with the failing findings.
func writeStatus(w io.Writer, label string, r *rules.Report) {
	errs, warns := 0, 0
	for _, f := range r.Findings {
		switch f.Severity {
		case checks.SevError:
			errs++
		case checks.SevWarning:
			warns++
		}
	}
	fmt.Fprintf(w, "%s: %s (%s, %s)\n", label, r.Status, plural(errs, "error", "errors"), plural(warns, "warning", "warnings"))
	if label != "Before" {
		return
	}
	for _, f := range r.Findings {
		if f.Failing() {
			mark := "✗"
			if f.Severity == checks.SevWarning {
				mark = "!"
			}
			fmt.Fprintf(w, "  %s %s\n", mark, f.Title)
		}
	}
	fmt.Fprintln(w)
}

// writeComparison says, per failing finding before, whether it is fixed.
func writeComparison(w io.Writer, before, after *rules.Report) {
	failingAfter := map[string]checks.Finding{}
	for _, f := range after.Findings {
		if f.Failing() {
			failingAfter[f.ID] = f
		}
	}
	seen := map[string]bool{}
	for _, f := range before.Findings {
		if !f.Failing() {
			continue
		}
		seen[f.ID] = true
		if g, ok := failingAfter[f.ID]; ok {
			mark := "✗"
			if g.Severity == checks.SevWarning {
				mark = "!"
			}
			fmt.Fprintf(w, "  %s still: %s\n", mark, g.Title)
		} else {
			fmt.Fprintf(w, "  ✓ fixed: %s\n", f.Title)
		}
	}
	for _, f := range after.Findings {
		if f.Failing() && !seen[f.ID] {
			fmt.Fprintf(w, "  ✗ new:   %s\n", f.Title)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
