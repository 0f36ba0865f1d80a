package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
)

// loadSnapshot reads --from, or gathers this machine (or the --root tree)
// with the environment environ (nil: f.Environ()); on this machine, unless
// --quick, the verification ladder runs into the snapshot. --timeout bounds
// the two together: collectors keep their own short deadlines, and each
// rung's deadline is cut to what is left.
func loadSnapshot(ctx context.Context, o diagnoseOptions, f *Factory, environ []string) (*host.Snapshot, string, error) {
	ios := f.IOStreams
	if environ == nil {
		environ = f.Environ()
	}
	if o.From != "" {
		s, err := readSnapshotFile(ctx, o.From, ios)
		return s, "snapshot", err
	}
	hopts := host.Options{
		Root:    o.Root,
		Python:  o.Python,
		Quick:   o.Quick,
		Version: toolVersion(),
		Environ: environ,
		Now:     f.Now,
	}
	if o.Root == "" || filepath.Clean(o.Root) == "/" {
		hopts.GPU = f.GPU()
	} else if st, err := os.Stat(o.Root); err != nil || !st.IsDir() {
		return nil, "", usageErr("--root %s: not a folder", o.Root)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	notice := newWaitNotice(ios.ErrOut, ios.IsStderrTTY() && o.Format == "text")
	defer notice.close()
	progress := startProgress(ctx, notice, o)
	hopts.Progress = progress.step
	s := host.Gather(ctx, hopts)
	notice.idle()
	if !o.Quick && hopts.GPU != nil {
		probeRuntime(ctx, s, o, f, environ, notice)
	}
	return s, "live", nil
}

// readSnapshotFile reads a snapshot from a file or standard input ("-").
func readSnapshotFile(ctx context.Context, path string, ios *iostreams.IOStreams) (*host.Snapshot, error) {
	var r io.Reader
	name := path
	if path == "-" {
		r, name = ios.In, "standard input"
	} else {
		f, err := openInput(ctx, path)
		if interrupted(ctx, err) {
			return nil, errInterrupted
		}
		if err != nil {
			return nil, usageErr("cannot read snapshot: %v", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, usageErr("cannot read snapshot %s: it is a folder", path)
		}
		r = f
	}
	// A read waiting on a pipe or a FIFO ends on Ctrl-C.
	s, err := host.ReadSnapshot(newCtxReader(ctx, r))
	if interrupted(ctx, err) {
		return nil, errInterrupted
	}
	if err != nil {
		return nil, usageErr("cannot read snapshot %s: %v", name, err)
	}
	s.HideOtherUsersCommands() // a snapshot of an older doctor may hold them
	return s, nil
}

func runDiagnose(ctx context.Context, o diagnoseOptions, f *Factory) error {
	ios := f.IOStreams
	s, source, err := loadSnapshot(ctx, o, f, nil)
	if err != nil {
		return err
	}
	r, err := rules.Evaluate(s, rules.Options{Only: o.Only, Skip: o.Skip})
	if err != nil {
		var uc *rules.UnknownCheckError
		if errors.As(err, &uc) {
			return usageErr("%v", err)
		}
		return internalErr("evaluating checks: %v", err)
	}
	r.Source = source
	if err := render(ios, r, s, o); err != nil {
		return internalErr("writing the report: %v", err)
	}
	return exitCode(r.ExitCode())
}

// identityOf is what redaction hides for a snapshot.
func identityOf(s *host.Snapshot) report.Identity {
	return report.Identity{User: s.Platform.User, Home: s.Platform.Home, Hostname: s.Platform.Hostname}
}

// render writes the report in the chosen format. Markdown is redacted unless
// --no-redact; the other formats only with --redact.
func render(ios *iostreams.IOStreams, r *rules.Report, s *host.Snapshot, o diagnoseOptions) error {
	// No credential reaches any format, redacted or not.
	r = report.Scrub(r)
	if (o.Format == "markdown" && !o.NoRedact) || o.Redact {
		id := report.Identity{}
		if s != nil {
			id = identityOf(s)
		}
		r = report.Redact(r, id)
	}
	toFile := o.Output != "" && o.Output != "-"
	return writeOutput(ios, o.Output, func(w io.Writer) error {
		switch o.Format {
		case "json":
			return report.JSON(w, r)
		case "markdown":
			return report.Markdown(w, r)
		case "prometheus":
			return report.Prometheus(w, r)
		}
		to := report.TextOptions{Color: ios.ColorEnabled() && !o.NoColor, Verbose: o.Verbose,
			Width: ios.TerminalWidth(), Command: footerCommand(o)}
		if toFile { // a file gets no colour and nothing cut to a terminal's width
			to.Color, to.Width = false, 0
		}
		return report.Text(w, r, to)
	})
}

// footerCommand is the command the text report's footer names: the one
// that made the report, so that "-v" and "--format markdown" added to it
// show the same thing in more detail.
func footerCommand(o diagnoseOptions) string {
	if o.Command != "" {
		return o.Command
	}
	switch {
	case o.From != "":
		return "doctor --from " + shellQuote(o.From)
	case o.Root != "" && !isLiveRoot(o.Root):
		return "doctor --root " + shellQuote(o.Root)
	}
	return "doctor"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// progress follows the gather: what is still being collected (for the
// wait notice), and with -v each collector's time as it ends.
type progress struct {
	notice  *waitNotice
	o       diagnoseOptions
	until   time.Time
	pending []string
}

func startProgress(ctx context.Context, notice *waitNotice, o diagnoseOptions) *progress {
	p := &progress{notice: notice, o: o, until: time.Now().Add(host.DefaultTimeout), pending: host.CollectorNames()}
	if dl, ok := ctx.Deadline(); ok && dl.Before(p.until) {
		p.until = dl
	}
	p.show()
	return p
}

func (p *progress) show() {
	if len(p.pending) == 0 {
		p.notice.idle()
		return
	}
	what := "the " + p.pending[0] + " collector"
	if len(p.pending) > 1 {
		what = "the collectors " + strings.Join(p.pending, ", ")
	}
	p.notice.set(what, p.until)
}

func (p *progress) step(name string, st host.CollectorStatus) {
	for i, n := range p.pending {
		if n == name {
			p.pending = append(p.pending[:i:i], p.pending[i+1:]...)
			break
		}
	}
	if p.o.Verbose {
		state := "ok"
		switch {
		case st.Skipped != "":
			state = "skipped: " + st.Skipped
		case st.Cut:
			state = "cut short by --timeout"
		case st.TimedOut:
			state = "timed out"
		case st.Error != "":
			state = "error: " + strings.SplitN(st.Error, "\n", 2)[0]
		}
		p.notice.line("doctor: collector %-11s %7.1f ms  %s\n", name, st.DurationMS, state)
	}
	p.show()
}
