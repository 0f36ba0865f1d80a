package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options controls one gather. The zero value reads this machine with
// default deadlines but no NVML (set GPU to NVMLSource() for that).
type Options struct {
	// Root is the folder that file collectors read under; "" or "/" is this
	// machine. With another root, collectors that need the live machine
	// (NVML, nvidia-smi, the kernel ring buffer, disks, processes' owners)
	// read the tree's files or are skipped.
	Root string
	// Environ is the environment to examine; nil means os.Environ().
	Environ []string
	// GPU reads driver and device facts; nil skips the NVML collector.
	GPU GPUSource
	// Timeout bounds the whole gather (default 10 s).
	Timeout time.Duration
	// CollectorTimeout bounds each collector (default 5 s, never more than
	// Timeout).
	CollectorTimeout time.Duration
	// Python is the interpreter to examine (--python); "" picks one.
	Python string
	// Quick skips anything that starts Python or touches the GPU with work.
	Quick bool
	// Only, when set, runs just these collectors (tests).
	Only []string
	// Skip leaves these collectors out (recorded machines that lack a part,
	// such as a tree without Python).
	Skip []string
	// Version is doctor's version, recorded in the snapshot.
	Version string
	// SelfPID is doctor's own PID (default os.Getpid()), to tell doctor's
	// own use of the GPU from other processes'.
	SelfPID int
	// Now returns the time (default time.Now).
	Now func() time.Time
	// Progress, when set, is called as each collector finishes.
	Progress func(name string, st CollectorStatus)
	// NvidiaSMI is the nvidia-smi program to run; "" looks it up on the
	// examined PATH (live machine only).
	NvidiaSMI string
	// UID and GIDs are the examined user's IDs for permission checks under
	// a --root tree (default: this process's).
	UID  *int
	GIDs []int
}

// DefaultTimeout bounds a gather unless Options.Timeout says otherwise; the
// run as a whole (--timeout, the ladder included) is bounded by the
// caller's context.
const DefaultTimeout = 10 * time.Second

// DefaultCollectorTimeout is each collector's own deadline.
const DefaultCollectorTimeout = 5 * time.Second

// collector fills one part of the snapshot. It must not write to the
// snapshot itself: it returns a function that does, applied only when the
// collector finished in time, so a collector that overruns its deadline can
// never race with the result.
type collector struct {
	name string
	// live is true for collectors that only make sense on the live machine
	// (skipped when Root is not "/").
	live bool
	run  func(ctx context.Context, g *gatherer) (apply func(*Snapshot), err error)
}

// collectors run concurrently; their order here is the order of Collectors
// in progress output, never of results (results go to fixed fields).
var collectors = []collector{
	{name: "platform", run: collectPlatform},
	{name: "pci", run: collectPCI},
	{name: "modules", run: collectModules},
	{name: "devices", run: collectDevices},
	{name: "nvml", run: collectNVML},
	{name: "nvidia-smi", run: collectNvidiaSMI},
	{name: "holders", run: collectHolders},
	{name: "env", run: collectEnv},
	{name: "kernel-log", run: collectKernelLog},
	{name: "disks", run: collectDisks},
	{name: "python", run: collectPython},
}

// CollectorNames lists the collectors in their fixed order.
func CollectorNames() []string {
	out := make([]string, len(collectors))
	for i, c := range collectors {
		out[i] = c.name
	}
	return out
}

// gatherer is the shared, read-only context of one gather.
type gatherer struct {
	opts Options
	root string
	env  map[string]string
	self int
}

// Gather collects a Snapshot. Collectors run concurrently, each under its own
// deadline; the whole gather ends by opts.Timeout whatever the collectors do.
// It never fails: what could not be collected is recorded in Collectors.
func Gather(ctx context.Context, opts Options) *Snapshot {
	g := newGatherer(opts)
	whole := opts.Timeout
	if whole <= 0 {
		whole = DefaultTimeout
	}
	per := opts.CollectorTimeout
	if per <= 0 {
		per = DefaultCollectorTimeout
	}
	// A collector's own deadline; less when the run has less time left, and
	// then a timeout proves nothing (CollectorStatus.Cut).
	own := per
	if per > whole {
		per = whole
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, whole)
	defer cancel()

	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	s := &Snapshot{
		Schema:      SnapshotSchema,
		Tool:        Tool{Name: "doctor", Version: opts.Version},
		CollectedAt: now().UTC().Round(time.Millisecond),
		Root:        g.root,
		Env:         map[string]string{},
		Collectors:  map[string]CollectorStatus{},
	}

	type result struct {
		name  string
		apply func(*Snapshot)
		st    CollectorStatus
	}
	todo := g.selected()
	results := make(chan result, len(todo))
	var wg sync.WaitGroup
	for _, c := range todo {
		if why := g.skip(c); why != "" {
			results <- result{name: c.name, st: CollectorStatus{Skipped: why}}
			continue
		}
		if skippedByEnv(c.name) {
			results <- result{name: c.name, st: CollectorStatus{Skipped: "DOCTOR_SKIP_COLLECTORS"}}
			continue
		}
		if containsName(opts.Skip, c.name) {
			results <- result{name: c.name, st: CollectorStatus{Skipped: "left out for this gather"}}
			continue
		}
		wg.Add(1)
		go func(c collector) {
			defer wg.Done()
			cctx, ccancel := context.WithTimeout(ctx, per)
			defer ccancel()
			start := time.Now()
			cut := per < own
			if dl, ok := parent.Deadline(); ok && dl.Before(start.Add(per-10*time.Millisecond)) {
				cut = true
			}
			done := make(chan result, 1)
			go func() {
				var r result
				defer func() {
					if p := recover(); p != nil {
						r.st.Error = fmt.Sprintf("collector panicked: %v", p)
						r.apply = nil
					}
					done <- r
				}()
				apply, err := c.run(cctx, g)
				r.apply = apply
				if err != nil {
					r.st.Error = err.Error()
				}
			}()
			var r result
			select {
			case r = <-done:
				if r.st.Error != "" && errors.Is(cctx.Err(), context.DeadlineExceeded) {
					r.st.TimedOut = true
				}
			case <-cctx.Done():
				// The collector is stuck (a read inside the driver, say). Its
				// goroutine is abandoned; its result is never applied.
				r.st.TimedOut = true
				r.st.Error = fmt.Sprintf("no answer within %s", time.Since(start).Round(time.Millisecond))
			}
			r.name = c.name
			r.st.DurationMS = msSince(start)
			r.st.Cut = cut && (r.st.TimedOut || r.st.Error != "")
			results <- r
		}(c)
	}
	go func() { wg.Wait(); close(results) }()

	var got []result
	for r := range results {
		got = append(got, r)
		if opts.Progress != nil {
			opts.Progress(r.name, r.st)
		}
	}
	// Apply in the fixed collector order, whatever the finishing order.
	sort.Slice(got, func(i, j int) bool { return collectorIndex(got[i].name) < collectorIndex(got[j].name) })
	for _, r := range got {
		if r.apply != nil {
			r.apply(s)
		}
		f := collectorState(r.name, r.st)
		r.st.State, r.st.StateWhy = f.State, f.Why
		s.Collectors[r.name] = r.st
	}
	s.RecordFacts()
	return s
}

// skippedByEnv reports whether the hidden DOCTOR_SKIP_COLLECTORS variable
// (comma separated names; for timing doctor with and without a collector)
// names a collector. It is doctor's own setting, read from doctor's
// environment, not the examined one.
func skippedByEnv(name string) bool {
	for _, n := range strings.Split(os.Getenv("DOCTOR_SKIP_COLLECTORS"), ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

func collectorIndex(name string) int {
	for i, c := range collectors {
		if c.name == name {
			return i
		}
	}
	return len(collectors)
}

func newGatherer(opts Options) *gatherer {
	root := opts.Root
	if root == "" {
		root = "/"
	}
	root = filepath.Clean(root)
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			env[k] = v
		}
	}
	self := opts.SelfPID
	if self == 0 {
		self = os.Getpid()
	}
	return &gatherer{opts: opts, root: root, env: env, self: self}
}

func (g *gatherer) selected() []collector {
	if len(g.opts.Only) == 0 {
		return collectors
	}
	var out []collector
	for _, c := range collectors {
		for _, n := range g.opts.Only {
			if c.name == n {
				out = append(out, c)
			}
		}
	}
	return out
}

// skip says why a collector does not run here ("" when it runs).
func (g *gatherer) skip(c collector) string {
	switch {
	case c.name == "nvml" && g.opts.GPU == nil:
		return "NVML is read only on the live machine"
	case c.name == "nvidia-smi" && !g.live() && g.opts.NvidiaSMI == "":
		return "nvidia-smi runs only on the live machine"
	case c.live && !g.live():
		return "reads the live machine; not run on a --root tree"
	}
	return ""
}

// uid is the examined user's ID.
func (g *gatherer) uid() int {
	if g.opts.UID != nil {
		return *g.opts.UID
	}
	return os.Getuid()
}

// live reports whether the gather reads the running machine.
func (g *gatherer) live() bool { return g.root == "/" }

// path maps an absolute machine path into the root.
func (g *gatherer) path(p string) string {
	if g.root == "/" {
		return p
	}
	return filepath.Join(g.root, p)
}

// maxFile bounds what a collector reads of one file.
const maxFile = 4 << 20

// readFile reads a (small) file under the root.
func (g *gatherer) readFile(p string) (string, error) {
	f, err := os.Open(g.path(p))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	return string(b), err
}

// exists reports whether a path exists under the root (without following a
// final symlink, so dangling links count).
func (g *gatherer) exists(p string) bool {
	_, err := os.Lstat(g.path(p))
	return err == nil
}

func (g *gatherer) getenv(k string) string { return g.env[k] }

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

func goos() string { return runtime.GOOS }

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
