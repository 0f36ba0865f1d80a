package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/atomicfile"
	"github.com/tfdoctor/doctor/internal/iostreams"
	"github.com/tfdoctor/doctor/internal/metrics"
	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
	"github.com/tfdoctor/doctor/watch"
)

// watchOptions are the options of doctor watch, parsed from flags.
type watchOptions struct {
	PID      int
	Duration time.Duration
	Interval time.Duration
	Format   string
	Verbose  bool
	NoColor  bool
	Redact   bool
	NoRedact bool
	Quiet    bool
	Samples  string
	Output   string // -o FILE
}

func watchCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "sample a running job's GPU and CPU use and say why the GPU idles",
		ArgsUsage: " ",
		Description: `Samples the GPUs (NVML: utilisation, memory, clocks, throttle reasons, power,
processes) and the job (a PID and its child processes, or every GPU process:
CPU use, busiest thread, threads, I/O) at a steady rate, then says whether the
GPU is busy, starved by the input pipeline, idle for another reason, not used
by the job at all, throttled, short of memory or shared with another process,
with TensorFlow advice for each.

   doctor watch --pid 4242                 watch a training job for 30 s
   doctor watch --pid 4242 --duration 2m   longer
   doctor watch --format json > w.json     every GPU process; the report as JSON

A terminal shows the samples live on stderr (plain lines when stderr is not a
terminal; --quiet for none). Ctrl-C ends early and still prints the report
(exit 130).
Exit code 1 when the job does not use the GPU; 2 for bad usage or an unknown
PID.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "pid", Aliases: []string{"p"}, Usage: "watch this process and its children (default: every process that uses a GPU)"},
			&cli.DurationFlag{Name: "duration", Aliases: []string{"d"}, Value: 30 * time.Second, Usage: "how long to watch"},
			&cli.DurationFlag{Name: "interval", Aliases: []string{"i"}, Value: time.Second, Usage: "time between samples"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "output format: text, json, markdown or prometheus"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "show every finding with its detail, evidence and advice"},
			&cli.BoolFlag{Name: "no-color", Usage: "no colour (also NO_COLOR=1)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no live view on stderr"},
			&cli.StringFlag{Name: "samples", Usage: "also write every sample (JSON) to `FILE`"},
			&cli.BoolFlag{Name: "no-redact", Usage: "keep user, host names, home paths and GPU UUIDs in Markdown output"},
			&cli.BoolFlag{Name: "redact", Usage: "redact personal data in text and JSON output too"},
			outputFlag(),
		},
		Action: func(c *cli.Context) error {
			o, err := watchOptionsFrom(c)
			if err != nil {
				return err
			}
			return runWatch(c, o, f)
		},
	}
}

// fromLineage returns the context where name was set: this command's, or
// the app's (doctor --format json watch).
func fromLineage(c *cli.Context, name string) *cli.Context {
	for _, x := range c.Lineage() {
		if x != nil && x.IsSet(name) {
			return x
		}
	}
	return c
}

func watchOptionsFrom(c *cli.Context) (watchOptions, error) {
	if c.NArg() > 0 {
		return watchOptions{}, usageErr("watch takes no arguments (use --pid PID)")
	}
	o := watchOptions{
		PID:      c.Int("pid"),
		Duration: c.Duration("duration"),
		Interval: c.Duration("interval"),
		Format:   strings.ToLower(fromLineage(c, "format").String("format")),
		Verbose:  fromLineage(c, "verbose").Bool("verbose"),
		NoColor:  fromLineage(c, "no-color").Bool("no-color"),
		Redact:   fromLineage(c, "redact").Bool("redact"),
		NoRedact: fromLineage(c, "no-redact").Bool("no-redact"),
		Quiet:    c.Bool("quiet"),
		Samples:  c.String("samples"),
		Output:   fromLineage(c, "output").String("output"),
	}
	if err := checkOutputFile(o.Output); err != nil {
		return o, err
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
	if c.IsSet("pid") && o.PID <= 0 {
		return o, usageErr("--pid must be a positive process ID, got %d", o.PID)
	}
	if err := (watch.Options{PID: o.PID, Duration: o.Duration, Interval: o.Interval}).Validate(); err != nil {
		return o, usageErr("%v", err)
	}
	if o.Samples != "" {
		if st, err := os.Stat(filepath.Dir(o.Samples)); err != nil || !st.IsDir() {
			return o, usageErr("cannot write %s: folder %s does not exist", o.Samples, filepath.Dir(o.Samples))
		}
		if st, err := os.Stat(o.Samples); err == nil && st.IsDir() {
			return o, usageErr("cannot write %s: it is a folder", o.Samples)
		}
	}
	return o, nil
}

func runWatch(c *cli.Context, o watchOptions, f *Factory) error {
	ios := f.IOStreams
	ctx := c.Context
	if o.PID == os.Getpid() {
		return usageErr("--pid %d is doctor itself", o.PID)
	}
	if o.PID > 0 {
		if _, err := watch.ProcessCommand(ctx, o.PID); err != nil {
			return usageErr("no process with PID %d", o.PID)
		}
	}
	wo := watch.Options{PID: o.PID, Duration: o.Duration, Interval: o.Interval, GPUs: f.WatchGPUs()}
	if !o.Quiet {
		live := watch.NewLive(ios.ErrOut, ios.IsStderrTTY())
		wo.OnSample = live.Update
		who := "every GPU process"
		if o.PID > 0 {
			who = fmt.Sprintf("PID %d and its children", o.PID)
		}
		fmt.Fprintf(ios.ErrOut, "doctor watch: sampling %s every %s for %s (Ctrl-C ends early)\n", who, o.Interval, o.Duration)
	}
	s, err := watch.Run(ctx, wo)
	if err != nil {
		if watch.IsNoProcess(err) {
			return usageErr("no process with PID %d", o.PID)
		}
		return internalErr("watch: %v", err)
	}
	if o.Samples != "" {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err := enc.Encode(s)
		if err == nil {
			err = atomicfile.Write(o.Samples, b.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintf(ios.ErrOut, "doctor: cannot write %s: %v\n", o.Samples, err)
		}
	}
	r := watch.Report(s, host.Tool{Name: "doctor", Version: toolVersion()})
	if err := renderWatch(ios, r, s, o); err != nil {
		return internalErr("writing the report: %v", err)
	}
	return exitCode(r.ExitCode())
}

// renderWatch writes the report in the chosen format. As with the
// diagnosis, Markdown is redacted unless --no-redact, the others only with
// --redact.
func renderWatch(ios *iostreams.IOStreams, r *rules.Report, s *watch.Series, o watchOptions) error {
	r = report.Scrub(r) // no credential reaches any format
	if (o.Format == "markdown" && !o.NoRedact) || o.Redact {
		r = report.Redact(r, selfIdentity())
	}
	return writeOutput(ios, o.Output, func(w io.Writer) error {
		switch o.Format {
		case "json":
			return report.JSON(w, r)
		case "markdown":
			return report.Markdown(w, r)
		case "prometheus":
			return metrics.Write(w, report.PrometheusCollector(r, time.Now()), watch.PrometheusCollector(s))
		}
		to := watch.TextOptions(r)
		to.Color, to.Verbose, to.Width = ios.ColorEnabled() && !o.NoColor, o.Verbose, ios.TerminalWidth()
		if o.Output != "" && o.Output != "-" { // a file gets no colour and nothing cut
			to.Color, to.Width = false, 0
		}
		to.Command = "doctor watch"
		if o.PID > 0 {
			to.Command += fmt.Sprintf(" --pid %d", o.PID)
		}
		return report.Text(w, r, to)
	})
}

// selfIdentity is what redaction hides on this machine.
func selfIdentity() report.Identity {
	id := report.Identity{}
	if u, err := user.Current(); err == nil {
		id.User, id.Home = u.Username, u.HomeDir
	}
	id.Hostname, _ = os.Hostname()
	return id
}

// watchRules documents the verdicts of doctor watch in `doctor rules`.
func watchRules() []ruleDoc {
	return []ruleDoc{
		{Kind: "watch", ID: watch.IDBusy, Link: "performance", Title: "The GPU is busy", Causes: []string{watch.CauseHealthy},
			Doc: fmt.Sprintf("Mean GPU utilisation of the job's GPUs at or above %.0f%%: the GPU is the limit. Advice: mixed precision (compute capability 7.0+), XLA.", watch.BusyUtil)},
		{Kind: "watch", ID: watch.IDInputPipeline, Link: "performance", Title: "The input pipeline starves the GPU", Causes: []string{watch.CausePipeline},
			Doc: fmt.Sprintf("Mean GPU utilisation below %.0f%% while the job's busiest thread uses %.0f%% of a core or more, or the job uses %.0f%% of the cores it may use, or it waits on block I/O %.0f%% of the time (or the machine's iowait reaches %.1f cores while the job reads). Advice: tf.data map(num_parallel_calls=AUTOTUNE), prefetch(AUTOTUNE), cache().",
				watch.BusyUtil, watch.FullCore, 100*watch.AllCores, watch.JobIOWait, watch.SystemIOWaitCores)},
		{Kind: "watch", ID: watch.IDUnderused, Link: "performance", Title: "The GPU idles though the CPU is free", Causes: []string{watch.CauseUnderused},
			Doc: fmt.Sprintf("Mean GPU utilisation below %.0f%% (a warning below %.0f%%) without a saturated CPU or I/O wait: small batches, many small ops, synchronisation, or work off the GPU. Advice: larger batches, XLA, prefetch.", watch.BusyUtil, watch.IdleUtil)},
		{Kind: "watch", ID: watch.IDGPUNotUsed, Link: "runtime", Title: "The job does not use the GPU", Causes: []string{watch.CauseNotUsed},
			Doc: "With --pid: neither the process nor its children appeared among any GPU's compute processes, and none holds a GPU device node open. The job runs on the CPU; run doctor to find which link is broken."},
		{Kind: "watch", ID: watch.IDCompetition, Link: "performance", Title: "Another process competes for the GPU", Causes: []string{watch.CauseCompetition},
			Doc: fmt.Sprintf("Another process on a GPU the job uses runs kernels %.0f%% of the time or more (per-process utilisation; where the driver does not report it, a process present in half of the samples is shown as information).", watch.CompetitorSM)},
		{Kind: "watch", ID: watch.IDThrottle, Link: "performance", Title: "Clocks held down while watching", Causes: []string{watch.CauseThrottled},
			Doc: fmt.Sprintf("Hardware slowdown, thermal slowdown or power brake set in %.0f%% of the samples or more.", 100*watch.ThrottleShare)},
		{Kind: "watch", ID: watch.IDMemory, Link: "performance", Title: "GPU memory nearly full", Causes: []string{watch.CauseMemory},
			Doc: fmt.Sprintf("Peak GPU memory used at %.0f%% of the total or more: information with one TensorFlow job (it pre-allocates), a warning when other processes hold 5%% or more. Advice: memory growth.", watch.MemFull)},
	}
}
