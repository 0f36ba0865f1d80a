package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tfdoctor/doctor/host"
)

// Options controls one run of the ladder. The zero value runs every rung
// with the defaults below.
type Options struct {
	// Size is m = n = k of the timed products (default 8192).
	Size int
	// Runs is the number of timed samples after warm-up (default 10);
	// figures are their median.
	Runs int
	// Samples is the number of result entries checked against the float64
	// CPU reference (default 128 for cuBLAS, 16 for the framework).
	Samples int
	// Framework is auto (TensorFlow first, then PyTorch, JAX, CuPy),
	// tensorflow, torch, jax, cupy, or none (no framework rung).
	Framework string
	// Python is the interpreter whose environment is examined: the
	// snapshot's Python.Executable or --python; "" picks the one the
	// snapshot would (host.ResolvePython: the active conda env or venv,
	// the one first on PATH when both are active, then python3 on PATH).
	Python string
	// LibCUDA is the driver library to load (default libcuda.so.1, found
	// the way the dynamic loader finds it).
	LibCUDA string
	// LibCublas is the libcublas file TensorFlow would load, as the library
	// resolution found it; "" searches: the examined Python's
	// site-packages/nvidia/cublas/lib, then libcublas.so.13, .12 and .11 on
	// the loader's path.
	LibCublas string
	// Rungs selects rungs by name (default all three).
	Rungs []string
	// DriverTimeout, LibrariesTimeout and FrameworkTimeout bound each rung
	// from the moment it may start its GPU work (defaults 30 s, 60 s,
	// 180 s).
	DriverTimeout, LibrariesTimeout, FrameworkTimeout time.Duration
	// Environ is the environment the rungs run in (default os.Environ()).
	Environ []string
	// ChildCommand is the argv that runs one rung of doctor's own
	// (default: this executable with the hidden __rung command). The
	// request is written to its standard input.
	ChildCommand []string
	// GPU, when set, is read again after the ladder if a figure came out
	// far under the GPU's expected speed, to record the evidence (clock
	// throttling, other processes, the PCIe link) in Conditions.
	GPU host.GPUSource
	// Progress, when set, is called as each rung finishes.
	Progress func(host.Rung)
	// Waiting, when set, is called as the ladder starts waiting for a rung,
	// with the moment it gives up on it.
	Waiting func(rung string, deadline time.Time)

	// pythonFrom and pythonErr record how the interpreter was resolved.
	pythonFrom string
	pythonErr  error
}

// Defaults.
const (
	DefaultSize             = 8192
	DefaultRuns             = 10
	DefaultDriverTimeout    = 30 * time.Second
	DefaultLibrariesTimeout = 60 * time.Second
	DefaultFrameworkTimeout = 180 * time.Second
	// ChildCommandName is the hidden doctor subcommand that runs one rung.
	ChildCommandName = "__rung"
	// maxSize keeps every index of an m×k matrix within 32 bits.
	maxSize = 32768
	minSize = 16
)

// Frameworks the framework rung knows, in the order auto tries them.
var Frameworks = []string{"tensorflow", "torch", "jax", "cupy"}

// Validate reports options a user typed wrong, in one line.
func (o Options) Validate() error {
	if o.Size != 0 && (o.Size < minSize || o.Size > maxSize) {
		return fmt.Errorf("size %d is out of range: use %d to %d", o.Size, minSize, maxSize)
	}
	if o.Runs < 0 || o.Runs > 200 {
		return fmt.Errorf("runs %d is out of range: use 1 to 200", o.Runs)
	}
	if o.Samples < 0 || o.Samples > 4096 {
		return fmt.Errorf("samples %d is out of range: use 1 to 4096", o.Samples)
	}
	switch o.Framework {
	case "", "auto", "none", "tensorflow", "torch", "jax", "cupy":
	default:
		return fmt.Errorf("unknown framework %q: use auto, tensorflow, torch, jax, cupy or none", o.Framework)
	}
	for _, r := range o.Rungs {
		if r != host.RungDriver && r != host.RungLibraries && r != host.RungFramework {
			return fmt.Errorf("unknown rung %q: use driver, libraries or framework", r)
		}
	}
	for _, l := range []struct{ flag, path string }{{"libcuda", o.LibCUDA}, {"libcublas", o.LibCublas}} {
		if err := namedLibrary(l.path); err != nil {
			return fmt.Errorf("--%s %s: %v", l.flag, l.path, err)
		}
	}
	return nil
}

// namedLibrary checks a library file the user named by its path: it must
// be a file that starts like a shared library (an ELF header). A bare
// soname ("libcuda.so.1") is the loader's to find.
func namedLibrary(path string) error {
	if path == "" || !strings.Contains(path, "/") {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return errors.New("no such file")
		}
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return errors.New("not a loadable library: not a regular file")
	}
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != "\x7fELF" {
		return errors.New("not a loadable library: the file is not an ELF shared object")
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if o.Runs == 0 {
		o.Runs = DefaultRuns
	}
	if o.Framework == "" {
		o.Framework = "auto"
	}
	if o.LibCUDA == "" {
		o.LibCUDA = "libcuda.so.1"
	}
	if len(o.Rungs) == 0 {
		o.Rungs = []string{host.RungDriver, host.RungLibraries, host.RungFramework}
	}
	if o.Framework == "none" {
		var keep []string
		for _, r := range o.Rungs {
			if r != host.RungFramework {
				keep = append(keep, r)
			}
		}
		o.Rungs = keep
	}
	if o.DriverTimeout <= 0 {
		o.DriverTimeout = DefaultDriverTimeout
	}
	if o.LibrariesTimeout <= 0 {
		o.LibrariesTimeout = DefaultLibrariesTimeout
	}
	if o.FrameworkTimeout <= 0 {
		o.FrameworkTimeout = DefaultFrameworkTimeout
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	// One interpreter for every rung, picked by doctor's one resolver
	// (host.ResolvePython), as the snapshot's python collector picks it.
	if o.pythonErr == nil && o.pythonFrom == "" {
		exe, from, err := host.ResolvePython(host.Options{Python: o.Python, Environ: o.Environ})
		o.Python, o.pythonFrom, o.pythonErr = exe, from, err
		if err != nil {
			o.Python = ""
		}
	}
	if len(o.ChildCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		o.ChildCommand = []string{exe, ChildCommandName}
	}
	return o
}

// childRequest is the first line a rung child reads.
type childRequest struct {
	Rung    string   `json:"rung"`
	LibCUDA string   `json:"libcuda"`
	Cublas  []string `json:"cublas,omitempty"`
	Size    int      `json:"size"`
	Runs    int      `json:"runs"`
	Samples int      `json:"samples"`
	// Gate makes the child wait for a "go" line before its timed work.
	Gate bool `json:"gate"`
}

// childResponse is the one line a rung child prints.
type childResponse struct {
	Rung host.Rung `json:"rung"`
}

// step is one rung in flight.
type step struct {
	name    string
	timeout time.Duration
	proc    *proc
	// done is a result known without a child (the framework rung finding
	// no Python), or the child's start failure.
	done   *host.Rung
	finish func(o outcome, pid int) host.Rung
}

// Run runs the ladder and returns its result. Each rung runs in a child
// process under its own deadline. All children start at once so that their
// set-up (loading libcuda and cuBLAS, importing the framework) overlaps, but
// each holds at its gate until the rung below it has finished: timed GPU
// work never overlaps.
func Run(ctx context.Context, opts Options) *host.Verification {
	o := opts.withDefaults()
	start := time.Now()
	var steps []*step
	for _, name := range o.Rungs {
		steps = append(steps, o.startStep(name))
	}
	// Each rung is let past its gate as soon as the rung below has
	// printed its result (or ended): its CUDA teardown need not be waited
	// for.
	for i := 1; i < len(steps); i++ {
		below, s := steps[i-1], steps[i]
		if s.proc == nil {
			continue
		}
		if below.proc == nil {
			s.proc.release()
			continue
		}
		go func() {
			<-below.proc.finished()
			s.proc.release()
		}()
	}
	v := &host.Verification{Rungs: []host.Rung{}}
	for _, s := range steps {
		var r host.Rung
		if s.done != nil {
			r = *s.done
		} else {
			// The rung's own deadline, cut to what the run has left
			// (--timeout bounds the whole run).
			deadline, cut := time.Now().Add(s.timeout), false
			if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
				deadline, cut = dl, true
			}
			if o.Waiting != nil {
				o.Waiting(s.name, deadline)
			}
			out := s.proc.wait(ctx, deadline)
			if cut && (out.timedOut || errors.Is(out.err, context.DeadlineExceeded)) {
				r = cutRung(s.name, out, s.proc.pid())
			} else {
				r = s.finish(out, s.proc.pid())
			}
		}
		if r.Status == host.RungFail && r.Cause == "" {
			r.Cause = causeComputeFailed
		}
		v.Rungs = append(v.Rungs, r)
		if o.Progress != nil {
			o.Progress(r)
		}
	}
	inheritCause(v)
	if o.GPU != nil && FarUnderExpected(v) {
		if nv, err := o.GPU.Read(ctx); err == nil {
			v.Conditions = &nv
		}
	}
	v.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return v
}

// inheritCause gives a framework failure that its probe could not explain
// (the framework just sees no GPU) the cause of the driver rung's failure:
// the layer below explains the one above.
func inheritCause(v *host.Verification) {
	d, f := v.Rung(host.RungDriver), v.Rung(host.RungFramework)
	if d == nil || f == nil || d.Status != host.RungFail || f.Status != host.RungFail || f.Cause != causeComputeFailed {
		return
	}
	if f.API != "stage devices" && f.API != "stage init" {
		return
	}
	if f.Facts == nil {
		f.Facts = map[string]string{}
	}
	f.Facts["cause_from"] = "the driver rung"
	f.Cause = d.Cause
}

// SlowRatio is the fraction of the expected speed under which a figure is
// "far under" it.
const SlowRatio = 0.5

// FarUnderExpected reports whether any figure came out under SlowRatio of
// what the GPU model should reach.
func FarUnderExpected(v *host.Verification) bool {
	if v == nil {
		return false
	}
	for _, r := range v.Rungs {
		for _, f := range r.Figures {
			if f.ExpectedTFLOPS > 0 && f.TFLOPS < SlowRatio*f.ExpectedTFLOPS {
				return true
			}
		}
	}
	return false
}

func (o Options) startStep(name string) *step {
	s := &step{name: name}
	switch name {
	case host.RungDriver:
		s.timeout = o.DriverTimeout
		s.start(o, childRequest{Rung: name, LibCUDA: o.LibCUDA, Size: o.Size, Runs: o.Runs, Samples: o.Samples})
	case host.RungLibraries:
		s.timeout = o.LibrariesTimeout
		req := childRequest{Rung: name, LibCUDA: o.LibCUDA, Cublas: cublasCandidates(o.LibCublas, o.Python, o.Environ),
			Size: o.Size, Runs: o.Runs, Samples: o.Samples, Gate: len(o.Rungs) > 1 && o.Rungs[0] != name}
		s.start(o, req)
	case host.RungFramework:
		s.timeout = o.FrameworkTimeout
		o.startFramework(s)
	}
	return s
}

// start runs one of doctor's own rung children.
func (s *step) start(o Options, req childRequest) {
	line, _ := json.Marshal(req)
	p, err := startProc(o.ChildCommand, o.Environ, "", append(line, '\n'))
	if err != nil {
		s.done = &host.Rung{Name: s.name, Status: host.RungFail, Cause: causeComputeFailed,
			Summary: "could not start the rung's child process", Error: err.Error()}
		return
	}
	s.proc = p
	s.finish = func(out outcome, pid int) host.Rung { return childResult(s.name, out, pid) }
}

// cutRung is a rung stopped by the run's --timeout before its own deadline:
// it could not run to the end, which proves nothing about the GPU (a
// skip, not a failure), and its child was killed with its process group.
func cutRung(name string, out outcome, pid int) host.Rung {
	r := host.Rung{Name: name, Status: host.RungSkip, PID: pid, TimedOut: true,
		Summary: fmt.Sprintf("not finished when the run's --timeout ran out (after %.1f s); stopped, nothing proved", out.duration.Seconds()),
		Facts:   map[string]string{"cut_short": "--timeout"}}
	if out.stuck {
		r.Summary += "; the child could not be killed (stuck inside the driver)"
	}
	r.DurationMS = float64(out.duration.Microseconds()) / 1000
	r.Stderr = tail(out.stderr, 16<<10)
	return r
}

// childResult turns what a rung child printed into its result.
func childResult(name string, out outcome, pid int) host.Rung {
	r, ok := parseChildOutput(out.stdout)
	if !ok {
		r = host.Rung{Name: name, Status: host.RungFail}
		r.Error = "the rung's child process " + out.describe()
		switch {
		case out.timedOut:
			r.Cause = causeUnresponsive
			r.TimedOut = true
			r.Summary = "no answer from the GPU in time: the driver or GPU hangs"
		default:
			r.Cause = causeComputeFailed
			r.Summary = "the rung crashed before it could report"
		}
	}
	r.Name = name
	r.PID = pid
	r.DurationMS = float64(out.duration.Microseconds()) / 1000
	r.Stderr = tail(out.stderr, 16<<10)
	return r
}

// parseChildOutput reads the last JSON line a rung child printed.
func parseChildOutput(stdout []byte) (host.Rung, bool) {
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) == 0 || l[0] != '{' {
			continue
		}
		var resp childResponse
		if err := json.Unmarshal(l, &resp); err != nil || resp.Rung.Status == "" {
			continue
		}
		switch resp.Rung.Status {
		case host.RungPass, host.RungFail, host.RungSkip:
			return resp.Rung, true
		}
	}
	return host.Rung{}, false
}

// tail keeps the last n bytes of b, at a line boundary where possible.
func tail(b []byte, n int) string {
	s := strings.TrimRight(string(b), "\n")
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "…\n" + s
}
