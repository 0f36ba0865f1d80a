package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
	"github.com/tfdoctor/doctor/verify"
)

// cublasFromSnapshot returns the libcublas file that the library resolution
// (Snapshot.Libraries) says TensorFlow would load, "" when it does not say;
// the ladder then searches the way TensorFlow does. Wired by the library
// resolution's owner.
func cublasFromSnapshot(s *host.Snapshot) string {
	if s == nil || s.Libraries == nil {
		return ""
	}
	libs := checks.TFLibraries(s) // what TensorFlow needs is the checks' judgment
	for _, l := range libs.Needed {
		if l.Name == "cublas" && l.Found && l.Path != "" {
			return l.Path
		}
	}
	// TensorFlow's own cuBLAS is missing (or TensorFlow is): the newest
	// cuBLAS present in the environment stands in, so the GEMM still tests
	// the libraries this environment has.
	best := host.Library{}
	for _, l := range libs.Present {
		if l.Name == "cublas" && l.Found && l.Path != "" && l.CUDAMajor >= best.CUDAMajor {
			best = l
		}
	}
	return best.Path
}

// verifyCollectors are the collectors `doctor verify` reads alongside the
// ladder, for the runtime and performance checks: quick ones only.
var verifyCollectors = []string{"platform", "pci", "modules", "devices", "nvml", "env", "kernel-log"}

func verifyCommand(f *Factory) *cli.Command {
	ios := f.IOStreams
	return &cli.Command{
		Name:            "verify",
		Usage:           "run only the verification ladder: real GPU work from the driver up to TensorFlow",
		ArgsUsage:       " ",
		HideHelpCommand: true,
		Description: `Three rungs, each in a child process under its own deadline, each isolating
one layer, so that a failure says which layer broke:

   1 driver     libcuda.so.1 loaded by doctor itself (no toolkit, no Python):
                a PTX kernel compiled by the driver, run and checked
   2 libraries  GEMMs through the libcublas TensorFlow would load, in fp32,
                TF32 and bf16 (compute capability 8.0+), timed with CUDA events
                and checked against a float64 CPU reference
   3 framework  the examined Python: TensorFlow imported, GPUs listed, a matmul
                placed on /GPU:0, checked and timed; without TensorFlow, the
                same through PyTorch, JAX or CuPy

Figures are medians after warm-up, next to what the GPU model should reach; a
result far under it is a performance finding. 'doctor' runs the same ladder
unless --quick. Exit code 1 when a rung fails.`,
		Flags: append(verifyCommonFlags(),
			&cli.IntFlag{Name: "size", Value: verify.DefaultSize, Usage: "m = n = k of the timed products"},
			&cli.IntFlag{Name: "runs", Value: verify.DefaultRuns, Usage: "timed runs after warm-up; figures are their median"},
			&cli.StringFlag{Name: "framework", Value: "auto", Usage: "auto (TensorFlow, else PyTorch, JAX, CuPy), tensorflow, torch, jax, cupy or none"},
			&cli.StringSliceFlag{Name: "rung", Usage: "run only this rung: driver, libraries or framework; repeatable"},
			&cli.StringFlag{Name: "libcuda", Usage: "the driver library to load (default libcuda.so.1 from the loader's path)"},
			&cli.StringFlag{Name: "libcublas", Usage: "the libcublas file to use (default: the examined Python's nvidia wheels, then libcublas.so.13/12/11)"},
			&cli.DurationFlag{Name: "rung-timeout", Usage: "deadline of each rung (default 30 s driver, 60 s libraries, 180 s framework)"},
		),
		Subcommands: []*cli.Command{{
			Name:   verify.ChildCommandName,
			Hidden: true,
			Usage:  "run one rung in this process (the ladder's child; reads a JSON request on standard input)",
			Action: func(c *cli.Context) error {
				if code := verify.ChildMain(ios.In, ios.Out); code != 0 {
					return exitCode(code)
				}
				return nil
			},
		}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("verify takes no arguments (unknown %q)", c.Args().First())
			}
			o, err := diagnoseOptionsFrom(c)
			if err != nil {
				return err
			}
			vo, err := verifyOptionsFrom(c, o)
			if err != nil {
				return err
			}
			return runVerify(c.Context, o, vo, f)
		},
	}
}

// verifyCommonFlags are commonFlags less --quick and --root, which verify
// does not take (argv.go's whyNot says why).
func verifyCommonFlags() []cli.Flag {
	var out []cli.Flag
	for _, f := range commonFlags() {
		if n := f.Names()[0]; n != "quick" && n != "root" {
			out = append(out, f)
		}
	}
	return out
}

func verifyOptionsFrom(c *cli.Context, o diagnoseOptions) (verify.Options, error) {
	vo := verify.Options{
		Size:      c.Int("size"),
		Runs:      c.Int("runs"),
		Framework: strings.ToLower(c.String("framework")),
		Rungs:     splitIDs(c.StringSlice("rung")),
		LibCUDA:   c.String("libcuda"),
		LibCublas: c.String("libcublas"),
		Python:    o.Python,
	}
	if d := c.Duration("rung-timeout"); d != 0 {
		if d < 0 {
			return vo, usageErr("--rung-timeout must be positive, got %s", d)
		}
		vo.DriverTimeout, vo.LibrariesTimeout, vo.FrameworkTimeout = d, d, d
	}
	if err := vo.Validate(); err != nil {
		return vo, usageErr("%v", err)
	}
	return vo, nil
}

// runVerify runs the ladder and, meanwhile, reads the few machine facts the
// runtime and performance checks need; then reports on those checks only.
func runVerify(ctx context.Context, o diagnoseOptions, vo verify.Options, f *Factory) error {
	ios := f.IOStreams
	environ := f.Environ()
	// --timeout bounds the whole run: each rung's deadline is cut to what
	// is left.
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	notice := newWaitNotice(ios.ErrOut, ios.IsStderrTTY() && o.Format == "text")
	defer notice.close()
	type gathered struct{ s *host.Snapshot }
	ch := make(chan gathered, 1)
	go func() {
		ch <- gathered{host.Gather(ctx, host.Options{Only: verifyCollectors, GPU: f.GPU(), Environ: environ, Now: f.Now,
			Python: o.Python, Quick: true, Version: toolVersion()})}
	}()
	vo.GPU = f.GPU()
	v := runLadder(ctx, vo, o, f, environ, notice)
	s := (<-ch).s
	s.Verification = v
	r, err := rules.Evaluate(s, rules.Options{Only: []string{"runtime", "performance"}, Skip: o.Skip})
	if err != nil {
		var uc *rules.UnknownCheckError
		if errors.As(err, &uc) {
			return usageErr("%v", err)
		}
		return internalErr("evaluating checks: %v", err)
	}
	r.Source = "live"
	o.Command = "doctor verify"
	notice.close()
	if err := render(ios, r, s, o); err != nil {
		return internalErr("writing the report: %v", err)
	}
	// A ladder that proved nothing (every rung skipped or cut short) is not
	// a pass.
	if code := r.ExitCode(); code != 0 || !checks.Verified(v) {
		return exitCode(exitFindings)
	}
	return nil
}

// probeRuntime is the runtime part of plain `doctor` (and of `doctor
// snapshot`): the ladder, run after the gather, with what the gather found
// about the examined Python and its libraries.
func probeRuntime(ctx context.Context, s *host.Snapshot, o diagnoseOptions, f *Factory, environ []string, notice *waitNotice) {
	// The ladder probes the interpreter the snapshot examined; without
	// one it resolves --python the same way (host.ResolvePython).
	vo := verify.Options{Python: o.Python, GPU: f.GPU()}
	if s.Python != nil && s.Python.Found && s.Python.Executable != "" {
		vo.Python = s.Python.Executable
	}
	vo.LibCublas = cublasFromSnapshot(s)
	s.Verification = runLadder(ctx, vo, o, f, environ, notice)
	s.RecordFacts()
}

// rungWork says what a rung does, for the wait notice.
var rungWork = map[string]string{
	host.RungDriver:    "the driver rung (a kernel through libcuda)",
	host.RungLibraries: "the libraries rung (cuBLAS on the GPU)",
	host.RungFramework: "the framework rung (Python: import, matmul on GPU:0)",
}

// runLadder runs the ladder, saying on standard error which rung it waits
// for and how long it will at most; with -v it prints each rung as it ends
// and the rungs' standard error afterwards.
func runLadder(ctx context.Context, vo verify.Options, o diagnoseOptions, f *Factory, environ []string, notice *waitNotice) *host.Verification {
	vo.ChildCommand = f.RungChild()
	vo.Environ = environ
	start := f.Now()
	vo.Waiting = func(rung string, deadline time.Time) { notice.set(rungWork[rung], deadline) }
	vo.Progress = func(r host.Rung) {
		notice.idle()
		if o.Verbose {
			notice.line("doctor: rung %-9s %-4s %7.1f ms  %s\n", r.Name, r.Status, r.DurationMS, r.Summary)
		}
	}
	v := verify.Run(ctx, vo)
	notice.idle()
	if o.Verbose {
		for _, r := range v.Rungs {
			if strings.TrimSpace(r.Stderr) == "" {
				continue
			}
			notice.line("doctor: standard error of the %s rung:\n", r.Name)
			for _, l := range strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n") {
				notice.line("  | %s\n", l)
			}
		}
		notice.line("doctor: verification ladder took %s\n", time.Since(start).Round(time.Millisecond))
	}
	return v
}
