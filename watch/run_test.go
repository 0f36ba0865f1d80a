package watch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// fakeGPUs is one GPU whose process list holds the PIDs procs returns.
type fakeGPUs struct {
	mu      sync.Mutex
	procs   func() []int
	openErr error
	calls   int
	closed  bool
}

func (f *fakeGPUs) Open() (Inventory, error) {
	if f.openErr != nil {
		return Inventory{}, f.openErr
	}
	return Inventory{Driver: "580.159.03", GPUs: []GPUInfo{{Index: 0, Name: "NVIDIA H200", Minor: 0, ComputeCapability: "9.0", MemoryTotalMiB: 143771}}}, nil
}

func (f *fakeGPUs) Sample() ([]GPUSample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	g := GPUSample{Index: 0, Util: ip(95), MemUsedMiB: up(4096), ProcsKnown: true, ProcUtilKnown: true}
	if f.procs != nil {
		for _, pid := range f.procs() {
			g.Procs = append(g.Procs, GPUProc{PID: pid, UsedMiB: 1024, SMUtil: ip(90)})
		}
	}
	return []GPUSample{g}, nil
}

func (f *fakeGPUs) Close() { f.closed = true }

// start runs a shell script as a real process and stops it (and its
// children: it leads its own process group) when the test ends.
func start(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// waitChildren waits until pid has n descendants (the shell forked).
func waitChildren(t *testing.T, pid, n int) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		all := tree(context.Background(), []int{pid}, 0)
		if len(all) >= n+1 {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %d has %d processes in its tree, want %d", pid, len(all), n+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const burn = "while :; do :; done"

// cpuSeconds is the user+system time of the processes, from the kernel.
func cpuSeconds(t *testing.T, pids []int) float64 {
	t.Helper()
	sum := 0.0
	for _, pid := range pids {
		p, err := process.NewProcess(int32(pid))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := p.Times()
		if err != nil {
			t.Fatal(err)
		}
		sum += ts.User + ts.System
	}
	return sum
}

// A job whose parent sleeps while its child burns a core: the tree is
// followed, the CPU summed over it, and the child on the GPU counts as
// the job on the GPU.
func TestRunFollowsTheProcessTree(t *testing.T) {
	cmd := start(t, "("+burn+") & sleep 60 & wait")
	pids := waitChildren(t, cmd.Process.Pid, 2)
	burner := 0
	for _, p := range pids {
		if p != cmd.Process.Pid {
			if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm"); string(b) == "sh\n" {
				burner = p
			}
		}
	}
	if burner == 0 {
		t.Fatalf("no burning subshell among %v", pids)
	}
	gpus := &fakeGPUs{procs: func() []int { return []int{burner} }}
	before := cpuSeconds(t, pids)
	var live []Sample
	s, err := Run(context.Background(), Options{PID: cmd.Process.Pid, Duration: 1200 * time.Millisecond, Interval: 300 * time.Millisecond, GPUs: gpus,
		OnSample: func(_ *Series, smp Sample) { live = append(live, smp) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Samples) != 4 || len(live) != 4 || s.Ended != "" {
		t.Fatalf("%d samples (%d live), ended %q; want 4 and the duration run out", len(s.Samples), len(live), s.Ended)
	}
	if !gpus.closed || gpus.calls != 5 {
		t.Errorf("GPUs closed %v after %d samples, want closed after the baseline and 4", gpus.closed, gpus.calls)
	}
	sum := Summarize(s)
	j := sum.Job
	if j.Processes != 3 || j.ThreadsMax < 3 {
		t.Errorf("job processes %d, threads %d; want 3 processes (shell, subshell, sleep)", j.Processes, j.ThreadsMax)
	}
	// How much CPU the burner gets depends on the machine's load, so the
	// measure is checked against the kernel's own count over a slightly
	// longer span (before and after Run), not against a fixed figure.
	measured, prev := 0.0, 0.0
	for _, smp := range s.Samples {
		measured += smp.Job.CPUPercent / 100 * (smp.Elapsed - prev)
		prev = smp.Elapsed
	}
	truth := cpuSeconds(t, pids) - before
	if measured > truth+0.03 || measured < 0.7*truth-0.05 {
		t.Errorf("measured %.3f CPU seconds over the tree, the kernel counted %.3f", measured, truth)
	}
	// Only the subshell burns: the busiest thread is nearly all of it. The
	// thread and the process are read a moment apart, so the thread may
	// come out a little above the whole.
	if d := j.CPUPercent.Mean - j.BusiestThreadPercent.Mean; d < -5 || d > 5+0.2*j.CPUPercent.Mean {
		t.Errorf("job CPU %+v, busiest thread %+v: want the busiest thread to carry the job", j.CPUPercent, j.BusiestThreadPercent)
	}
	if !sum.GPUs[0].UsedByJob || sum.GPUs[0].JobSamples != 4 {
		t.Errorf("gpu summary %+v: want the job on GPU 0 through its child", sum.GPUs[0])
	}
	if s.Commands[cmd.Process.Pid] == "" || s.Commands[burner] == "" {
		t.Errorf("commands = %v, want the job and the GPU process named", s.Commands)
	}
	if s.SelfCPUPercent == nil || *s.SelfCPUPercent < 0 {
		t.Errorf("self CPU not measured: %v", s.SelfCPUPercent)
	}
	if s.CPUs < 1 {
		t.Errorf("CPUs available = %v", s.CPUs)
	}
}

// An idle job uses no CPU and, not being on the GPU, does not use it.
func TestRunIdleJobNotOnGPU(t *testing.T) {
	cmd := start(t, "exec sleep 60")
	gpus := &fakeGPUs{procs: func() []int { return []int{os.Getpid()} }} // someone else (doctor) on the GPU
	s, err := Run(context.Background(), Options{PID: cmd.Process.Pid, Duration: 900 * time.Millisecond, Interval: 300 * time.Millisecond, GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(s)
	if sum.Job.CPUPercent.Max > 10 || sum.Job.Processes != 1 || sum.Job.ThreadsMax != 1 {
		t.Errorf("idle job: %+v", sum.Job)
	}
	if len(sum.GPUs[0].Others) != 0 {
		t.Errorf("doctor itself counted as another process: %+v", sum.GPUs[0].Others)
	}
	fs := Analyze(s)
	if fs[0].ID != IDGPUNotUsed {
		t.Errorf("first verdict %s (%s), want %s", fs[0].ID, fs[0].Title, IDGPUNotUsed)
	}
}

// I/O: a reader's bytes per second are measured from /proc/PID/io.
func TestRunMeasuresReads(t *testing.T) {
	cmd := start(t, "exec dd if=/dev/zero of=/dev/null bs=65536")
	s, err := Run(context.Background(), Options{PID: cmd.Process.Pid, Duration: 600 * time.Millisecond, Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if j := Summarize(s).Job; j.ReadMBps < 1 || j.WriteMBps < 1 {
		t.Errorf("dd read %v MB/s, wrote %v MB/s; want both measured", j.ReadMBps, j.WriteMBps)
	}
}

// The watch ends when the job exits, and says so.
func TestRunJobExits(t *testing.T) {
	cmd := exec.Command("sleep", "0.4")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // reap it: a zombie still has a /proc entry
	defer func() { <-done }()
	s, err := Run(context.Background(), Options{PID: cmd.Process.Pid, Duration: 10 * time.Second, Interval: 100 * time.Millisecond, GPUs: &fakeGPUs{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ended != "the job exited" || len(s.Samples) > 20 {
		t.Errorf("ended %q after %d samples", s.Ended, len(s.Samples))
	}
}

// A job that exited but is not reaped yet (a zombie) has ended too.
func TestRunJobZombie(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }() // reaped only after the watch
	time.Sleep(100 * time.Millisecond)
	s, err := Run(context.Background(), Options{PID: cmd.Process.Pid, Duration: 5 * time.Second, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ended != "the job exited" || len(s.Samples) != 1 {
		t.Errorf("ended %q after %d samples, want the zombie seen as exited at once", s.Ended, len(s.Samples))
	}
}

// Ctrl-C (a cancelled context) ends early with what was sampled.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	s, err := Run(ctx, Options{Duration: time.Minute, Interval: 50 * time.Millisecond, GPUs: &fakeGPUs{},
		OnSample: func(*Series, Sample) {
			if n++; n == 3 {
				cancel()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ended != "interrupted" || len(s.Samples) != 3 {
		t.Errorf("ended %q after %d samples", s.Ended, len(s.Samples))
	}
}

// Without --pid every GPU process (and its children) is the job.
func TestRunEveryGPUProcess(t *testing.T) {
	cmd := start(t, "("+burn+") & wait")
	waitChildren(t, cmd.Process.Pid, 1)
	gpus := &fakeGPUs{procs: func() []int { return []int{cmd.Process.Pid, 1 << 30} }} // the second is in no /proc
	s, err := Run(context.Background(), Options{Duration: 600 * time.Millisecond, Interval: 200 * time.Millisecond, GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	last := s.Samples[len(s.Samples)-1]
	if len(last.Job.PIDs) != 2 {
		t.Errorf("job PIDs %v, want the GPU process and its child", last.Job.PIDs)
	}
	if p := last.GPUs[0].Procs; len(p) != 2 || p[0].Foreign || !p[1].Foreign {
		t.Errorf("procs %+v: want the PID missing from /proc marked foreign", p)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(context.Background(), Options{PID: 1 << 30, Duration: time.Second, Interval: time.Second}); !IsNoProcess(err) {
		t.Errorf("unknown PID: %v", err)
	}
	for _, o := range []Options{
		{PID: -1, Duration: time.Second, Interval: time.Second},
		{Duration: 0, Interval: time.Second},
		{Duration: time.Second, Interval: time.Millisecond},
		{Duration: time.Second, Interval: 2 * time.Second},
	} {
		if _, err := Run(context.Background(), o); err == nil || IsNoProcess(err) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	// NVML that cannot be opened: the CPU side is still watched.
	s, err := Run(context.Background(), Options{Duration: 200 * time.Millisecond, Interval: 100 * time.Millisecond, GPUs: &fakeGPUs{openErr: errors.New("nvmlInit: ERROR_DRIVER_NOT_LOADED")}})
	if err != nil || s.GPUError == "" || len(s.Samples) != 2 {
		t.Errorf("run without NVML: %v, %+v", err, s)
	}
}

// BenchmarkSample measures one sample: a fake GPU, and the real job (this
// test process, with its Go threads) and system. 1% of one core at 1 Hz is
// 10 ms a sample.
func BenchmarkSample(b *testing.B) {
	ctx := context.Background()
	s := &Series{PID: os.Getpid(), Self: -1, Started: time.Now()}
	g := &fakeGPUs{procs: func() []int { return []int{os.Getpid()} }}
	if _, err := g.Open(); err != nil {
		b.Fatal(err)
	}
	w := &sampler{s: s, gpus: g, job: newJobSampler()}
	w.take(ctx, time.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.take(ctx, time.Now())
	}
}

// BenchmarkSampleNotOnGPU adds the device-node scan done while NVML does
// not list the job.
func BenchmarkSampleNotOnGPU(b *testing.B) {
	ctx := context.Background()
	s := &Series{PID: os.Getpid(), Self: -1, Started: time.Now()}
	w := &sampler{s: s, gpus: &fakeGPUs{}, job: newJobSampler()}
	w.take(ctx, time.Now())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.take(ctx, time.Now())
	}
}
