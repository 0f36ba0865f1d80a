package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Options configures one watch.
type Options struct {
	// PID is the process to follow with its descendants; 0 follows every
	// process that uses a GPU.
	PID int
	// Duration bounds the watch; Interval is the time between samples.
	Duration, Interval time.Duration
	// GPUs reads the GPUs (NVML() in real use); nil watches the CPU only.
	GPUs GPUs
	// OnSample is called after each sample (the live view).
	OnSample func(s *Series, smp Sample)
}

// Validate reports bad options in words a user can act on.
func (o Options) Validate() error {
	switch {
	case o.PID < 0:
		return fmt.Errorf("--pid must be a positive process ID, got %d", o.PID)
	case o.Duration <= 0:
		return fmt.Errorf("--duration must be positive, got %s", o.Duration)
	case o.Interval < 50*time.Millisecond:
		return fmt.Errorf("--interval must be at least 50ms, got %s", o.Interval)
	case o.Interval > o.Duration:
		return fmt.Errorf("--interval (%s) is longer than --duration (%s)", o.Interval, o.Duration)
	}
	return nil
}

// Run samples until the duration ends, ctx is cancelled (Ctrl-C), or the
// watched process exits, and returns what it saw. It fails only when the
// options are bad or the PID does not exist (ErrNoProcess); a GPU that
// cannot be read is recorded in Series.GPUError and the CPU is still
// watched.
func Run(ctx context.Context, o Options) (*Series, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := &Series{
		PID: o.PID, Self: os.Getpid(), Interval: o.Interval.Seconds(), Duration: o.Duration.Seconds(),
		HostCPUs: runtime.NumCPU(), DelayAccounting: delayAccounting(), Commands: map[int]string{},
	}
	if o.PID > 0 {
		cmd, err := ProcessCommand(ctx, o.PID)
		if err != nil {
			return nil, fmt.Errorf("PID %d: %w", o.PID, err)
		}
		s.Command = cmd
		s.Commands[o.PID] = cmd
		s.CPUs, s.CPUsSource = cpusAvailable(o.PID)
	} else {
		s.CPUs, s.CPUsSource = cpusAvailable(s.Self)
	}
	if s.CPUs == 0 {
		s.CPUs, s.CPUsSource = float64(s.HostCPUs), "host"
	}

	setup := time.Now()
	w := &sampler{s: s, gpus: o.GPUs, job: newJobSampler()}
	if o.GPUs != nil {
		inv, err := o.GPUs.Open()
		if err != nil {
			s.GPUError = err.Error()
			w.gpus = nil
		} else {
			s.Inventory = inv
			defer o.GPUs.Close()
		}
	}
	s.Started = time.Now()
	w.take(ctx, s.Started) // the baseline: deltas need a previous reading
	s.SetupMS = ms(time.Since(setup))

	cpu0, wall0 := selfCPU(), time.Now()
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	n := int(o.Duration / o.Interval)
	if n < 1 {
		n = 1
	}
loop:
	for len(s.Samples) < n {
		select {
		case <-ctx.Done():
			s.Ended = "interrupted"
			break loop
		case now := <-tick.C:
			smp := w.take(ctx, now)
			s.Samples = append(s.Samples, smp)
			if o.OnSample != nil {
				o.OnSample(s, smp)
			}
			if o.PID > 0 && !smp.Job.Alive {
				s.Ended = "the job exited"
				break loop
			}
		}
	}
	if cpu1, wall := selfCPU(), time.Since(wall0); cpu0 >= 0 && cpu1 >= 0 && wall > 0 {
		p := 100 * (cpu1 - cpu0).Seconds() / wall.Seconds()
		s.SelfCPUPercent = &p
	}
	for pid, name := range w.job.names {
		if pid == o.PID || w.gpuPIDs[pid] {
			s.Commands[pid] = name
		}
	}
	return s, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// selfCPU is this process's CPU time so far (-1 when unknown).
func selfCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type sampler struct {
	s       *Series
	gpus    GPUs
	job     *jobSampler
	gpuPIDs map[int]bool // every PID seen on a GPU: true when it is in this /proc
}

// take reads the GPUs, the job and the system once.
func (w *sampler) take(ctx context.Context, now time.Time) Sample {
	t0 := time.Now()
	smp := Sample{At: now, Elapsed: now.Sub(w.s.Started).Seconds()}
	if w.gpus != nil {
		g, err := w.gpus.Sample()
		if err != nil {
			smp.GPUError = err.Error()
		}
		smp.GPUs = g
	}
	if w.gpuPIDs == nil {
		w.gpuPIDs = map[int]bool{}
	}
	onGPU := map[int]bool{}
	var roots []int
	for gi := range smp.GPUs {
		for pi := range smp.GPUs[gi].Procs {
			p := &smp.GPUs[gi].Procs[pi]
			if _, seen := w.gpuPIDs[p.PID]; !seen {
				name, err := ProcessCommand(ctx, p.PID)
				w.gpuPIDs[p.PID] = err == nil
				if err == nil {
					w.job.names[p.PID] = name
				}
			}
			if !w.gpuPIDs[p.PID] {
				p.Foreign = true
				continue
			}
			onGPU[p.PID] = true
			if w.s.PID == 0 && p.PID != w.s.Self {
				roots = append(roots, p.PID)
			}
		}
	}
	if w.s.PID > 0 {
		roots = []int{w.s.PID}
	}
	pids := tree(ctx, roots, w.s.Self)
	smp.Job = w.job.sample(ctx, pids, now)
	smp.Job.Alive = w.s.PID == 0 || (contains(smp.Job.PIDs, w.s.PID) && !w.job.zombie(ctx, w.s.PID))
	if w.s.DelayAccounting != nil && !*w.s.DelayAccounting {
		smp.Job.IOWaitPercent = nil
	}
	if w.s.PID > 0 {
		listed := false
		for _, pid := range smp.Job.PIDs {
			listed = listed || onGPU[pid]
		}
		// NVML names the job's GPUs; when it does not (no process list,
		// another PID namespace), the device nodes the job holds do.
		if !listed {
			smp.Job.DeviceNodes = deviceNodes(smp.Job.PIDs)
		}
	}
	smp.System = w.job.system(ctx)
	smp.CostMS = ms(time.Since(t0))
	return smp
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// IsNoProcess reports whether err says the PID does not exist.
func IsNoProcess(err error) bool { return errors.Is(err, ErrNoProcess) }
