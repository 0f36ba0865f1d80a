package watch

import (
	"sort"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/google/go-cmp/cmp"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/knowledge"
	"github.com/tfdoctor/doctor/rules"
)

// tick describes one canned sample: GPU 0 (and more with gpus), the job's
// CPU side, the machine.
type tick struct {
	util      int
	noUtil    bool
	memMiB    uint64
	events    uint64
	procs     []GPUProc // on GPU 0
	procsGone bool      // the driver does not list processes
	procUtil  bool      // per-process utilisation reported
	gpus      []GPUSample
	jobPIDs   []int
	cpu       float64
	busiest   float64
	threads   int
	iowait    *float64
	readBps   float64
	nodes     []string
	sysIOWait float64
}

func ip(v int) *int         { return &v }
func fp(v float64) *float64 { return &v }
func up(v uint64) *uint64   { return &v }
func proc(pid int) GPUProc  { return GPUProc{PID: pid, UsedMiB: 2048} }
func procSM(pid, sm int) GPUProc {
	return GPUProc{PID: pid, UsedMiB: 20480, SMUtil: ip(sm), MemUtil: ip(sm / 2)}
}

const jobPID = 4242

// canned builds a series of n samples at 1 Hz on one H200-like GPU.
func canned(pid, n int, f func(i int) tick) *Series {
	s := &Series{PID: pid, Command: "python train.py", Self: 1, Interval: 1, Duration: float64(n),
		Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), CPUs: 16, CPUsSource: "affinity", HostCPUs: 16,
		Inventory: Inventory{Driver: "580.159.03", GPUs: []GPUInfo{{Index: 0, Name: "NVIDIA H200", Minor: 0,
			ComputeCapability: "9.0", MemoryTotalMiB: 143771, MaxSMClockMHz: 1980, MaxMemClockMHz: 3201, PowerLimitW: 700}}},
		Commands: map[int]string{pid: "python train.py", 777: "python other_job.py"},
	}
	for i := 0; i < n; i++ {
		t := f(i)
		g := GPUSample{Index: 0, ProcsKnown: !t.procsGone, ProcUtilKnown: t.procUtil, Procs: t.procs,
			MemUsedMiB: up(t.memMiB), SMClockMHz: ip(1980), PowerW: fp(400), TempC: ip(50)}
		if g.MemUsedMiB != nil && *g.MemUsedMiB == 0 {
			g.MemUsedMiB = up(4096)
		}
		if !t.noUtil {
			g.Util, g.MemUtil = ip(t.util), ip(t.util/2)
		}
		ev := t.events
		g.ClockEvents = &ev
		if t.procsGone {
			g.Procs = nil
		}
		gpus := append([]GPUSample{g}, t.gpus...)
		pids := t.jobPIDs
		if pids == nil && pid > 0 {
			pids = []int{pid}
		}
		threads := t.threads
		if threads == 0 {
			threads = 20
		}
		s.Samples = append(s.Samples, Sample{
			At: s.Started.Add(time.Duration(i+1) * time.Second), Elapsed: float64(i + 1), GPUs: gpus,
			Job: JobSample{Alive: true, PIDs: pids, Threads: threads, CPUPercent: t.cpu, BusiestThreadPercent: t.busiest,
				IOWaitPercent: t.iowait, ReadBps: t.readBps, DeviceNodes: t.nodes},
			System: SystemSample{CPUPercent: 10, IOWaitPercent: t.sysIOWait}, CostMS: 0.8,
		})
	}
	return s
}

type verdict struct {
	ID       string
	Cause    string
	Severity checks.Severity
}

func TestAnalyze(t *testing.T) {
	onGPU := []GPUProc{proc(jobPID)}
	tests := []struct {
		name   string
		series *Series
		want   []verdict
		root   string   // expected root-cause finding ID ("" for none)
		fixes  []string // fix IDs of the first finding, in order
	}{
		{
			name:   "busy GPU-bound matmul loop",
			series: canned(jobPID, 15, func(i int) tick { return tick{util: 97 + i%3, procs: onGPU, cpu: 100, busiest: 99} }),
			want:   []verdict{{IDBusy, "healthy", checks.SevOK}},
			fixes:  []string{FixTFMixedPrecision, FixTFXLA},
		},
		{
			name: "busy on a GPU without tensor cores: no mixed precision advice",
			series: func() *Series {
				s := canned(jobPID, 10, func(i int) tick { return tick{util: 90, procs: onGPU, cpu: 100, busiest: 99} })
				s.Inventory.GPUs[0].ComputeCapability = "6.1"
				return s
			}(),
			want:  []verdict{{IDBusy, "healthy", checks.SevOK}},
			fixes: []string{FixTFXLA},
		},
		{
			name:   "single-threaded loader starves the GPU",
			series: canned(jobPID, 15, func(i int) tick { return tick{util: 8 + i%5, procs: onGPU, cpu: 104, busiest: 99} }),
			want:   []verdict{{IDInputPipeline, CausePipeline, checks.SevWarning}},
			root:   IDInputPipeline,
			fixes:  []string{FixTFDataParallelMap, FixTFDataPrefetch, FixTFDataCache},
		},
		{
			name:   "loader saturates every core it may use",
			series: canned(jobPID, 15, func(i int) tick { return tick{util: 25, procs: onGPU, cpu: 1500, busiest: 95} }),
			want:   []verdict{{IDInputPipeline, CausePipeline, checks.SevWarning}},
			root:   IDInputPipeline,
			fixes:  []string{FixTFDataPrefetch, FixTFDataCache},
		},
		{
			name:   "partly idle GPU with a saturated loader is still a bottleneck",
			series: canned(jobPID, 15, func(i int) tick { return tick{util: 55, procs: onGPU, cpu: 100, busiest: 97} }),
			want:   []verdict{{IDInputPipeline, CausePipeline, checks.SevWarning}},
			root:   IDInputPipeline,
		},
		{
			name: "job waits on block I/O",
			series: canned(jobPID, 15, func(i int) tick {
				return tick{util: 10, procs: onGPU, cpu: 20, busiest: 15, iowait: fp(45), readBps: 80e6}
			}),
			want:  []verdict{{IDInputPipeline, CausePipeline, checks.SevWarning}},
			root:  IDInputPipeline,
			fixes: []string{FixTFDataCache, FixTFDataPrefetch, FixTFDataParallelMap},
		},
		{
			name: "machine waits on I/O while the job reads (no delay accounting)",
			series: canned(jobPID, 15, func(i int) tick {
				return tick{util: 10, procs: onGPU, cpu: 20, busiest: 15, readBps: 50e6, sysIOWait: 6.25}
			}),
			want: []verdict{{IDInputPipeline, CausePipeline, checks.SevWarning}},
			root: IDInputPipeline,
		},
		{
			name: "machine iowait from someone else while the job does not read",
			series: canned(jobPID, 15, func(i int) tick {
				return tick{util: 10, procs: onGPU, cpu: 20, busiest: 15, sysIOWait: 30}
			}),
			want: []verdict{{IDUnderused, CauseUnderused, checks.SevWarning}},
			root: IDUnderused,
		},
		{
			name:   "idle GPU, idle CPU: small batches or waiting for something else",
			series: canned(jobPID, 15, func(i int) tick { return tick{util: 15, procs: onGPU, cpu: 30, busiest: 25} }),
			want:   []verdict{{IDUnderused, CauseUnderused, checks.SevWarning}},
			root:   IDUnderused,
			fixes:  []string{FixTFLargerBatch, FixTFXLA, FixTFDataPrefetch},
		},
		{
			name:   "moderately used GPU without a CPU limit is information",
			series: canned(jobPID, 15, func(i int) tick { return tick{util: 55, procs: onGPU, cpu: 40, busiest: 35} }),
			want:   []verdict{{IDUnderused, CauseUnderused, checks.SevInfo}},
		},
		{
			name: "CPU-only job: not among the GPU's processes",
			series: canned(jobPID, 15, func(i int) tick {
				return tick{util: 0, procs: nil, cpu: 100, busiest: 99}
			}),
			want:  []verdict{{IDGPUNotUsed, CauseNotUsed, checks.SevError}},
			root:  IDGPUNotUsed,
			fixes: []string{FixRunDoctor},
		},
		{
			name: "CPU-only job while another process keeps the GPU busy",
			series: canned(jobPID, 15, func(i int) tick {
				return tick{util: 95, procs: []GPUProc{procSM(777, 95)}, procUtil: true, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDGPUNotUsed, CauseNotUsed, checks.SevError}},
			root: IDGPUNotUsed,
		},
		{
			name: "a child process of the job is on the GPU",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 92, procs: []GPUProc{proc(5000)}, jobPIDs: []int{jobPID, 5000}, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "job in another PID namespace holds the device node",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 93, procs: []GPUProc{{PID: 99999, UsedMiB: 2048, Foreign: true}}, nodes: []string{"/dev/nvidia0"}, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "WSL2: the driver lists no processes",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 95, procsGone: true, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDGPUUseUnknown, CauseIncomplete, checks.SevInfo}, {IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "WSL2 with /dev/dxg open: the job uses the GPU",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 95, procsGone: true, nodes: []string{"/dev/dxg"}, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "the driver reports no utilisation",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{noUtil: true, procs: onGPU, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDUtilUnknown, CauseIncomplete, checks.SevInfo}},
		},
		{
			name: "job loads data first, then trains: judged from its first GPU sample",
			series: canned(jobPID, 20, func(i int) tick {
				if i < 8 {
					return tick{util: 0, cpu: 100, busiest: 99}
				}
				return tick{util: 96, procs: onGPU, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "job reaches the GPU in the last sample: too few to judge",
			series: canned(jobPID, 10, func(i int) tick {
				if i < 9 {
					return tick{util: 0, cpu: 100, busiest: 99}
				}
				return tick{util: 96, procs: onGPU, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDTooFew, CauseIncomplete, checks.SevInfo}},
		},
		{
			name:   "too few samples",
			series: canned(jobPID, 2, func(i int) tick { return tick{util: 96, procs: onGPU} }),
			want:   []verdict{{IDTooFew, CauseIncomplete, checks.SevInfo}},
		},
		{
			name: "thermal slowdown in half the samples",
			series: canned(jobPID, 10, func(i int) tick {
				ev := uint64(nvml.ClocksEventReasonSwPowerCap)
				if i%2 == 0 {
					ev |= nvml.ClocksThrottleReasonHwThermalSlowdown
				}
				return tick{util: 97, procs: onGPU, cpu: 100, busiest: 99, events: ev}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}, {IDThrottle + "/gpu0", CauseThrottled, checks.SevWarning}},
			root: IDThrottle + "/gpu0",
		},
		{
			name: "idle and power-cap reasons are not throttling",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 97, procs: onGPU, cpu: 100, busiest: 99, events: nvml.ClocksEventReasonSwPowerCap | nvml.ClocksEventReasonGpuIdle}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "one hardware slowdown sample is not throttling",
			series: canned(jobPID, 10, func(i int) tick {
				var ev uint64
				if i == 3 {
					ev = nvml.ClocksThrottleReasonHwSlowdown
				}
				return tick{util: 97, procs: onGPU, cpu: 100, busiest: 99, events: ev}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "memory full with one TensorFlow job: information",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 97, procs: onGPU, memMiB: 141000, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}, {IDMemory + "/gpu0", CauseMemory, checks.SevInfo}},
		},
		{
			name: "memory full with another process holding a share: warning",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 97, procs: []GPUProc{proc(jobPID), {PID: 777, UsedMiB: 20480}}, memMiB: 141000, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}, {IDCompetition + "/gpu0", CauseCompetition, checks.SevInfo}, {IDMemory + "/gpu0", CauseMemory, checks.SevWarning}},
			root: IDMemory + "/gpu0",
		},
		{
			name: "another process competes for the SMs",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 60, procs: []GPUProc{procSM(jobPID, 15), procSM(777, 45)}, procUtil: true, cpu: 40, busiest: 30}
			}),
			want: []verdict{{IDUnderused, CauseUnderused, checks.SevInfo}, {IDCompetition + "/gpu0", CauseCompetition, checks.SevWarning}},
			root: IDCompetition + "/gpu0",
		},
		{
			name: "an idle neighbour with per-process figures is no competitor",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 95, procs: []GPUProc{procSM(jobPID, 95), procSM(777, 0)}, procUtil: true, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "doctor itself on the GPU is nobody's competitor",
			series: canned(jobPID, 10, func(i int) tick {
				return tick{util: 95, procs: []GPUProc{procSM(jobPID, 95), procSM(1, 50)}, procUtil: true, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "every GPU process: two busy processes share GPU 0",
			series: canned(0, 10, func(i int) tick {
				return tick{util: 99, procs: []GPUProc{procSM(100, 50), procSM(200, 49)}, procUtil: true, jobPIDs: []int{100, 200}, cpu: 200, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}, {IDCompetition + "/gpu0", CauseCompetition, checks.SevWarning}},
			root: IDCompetition + "/gpu0",
		},
		{
			name: "every GPU process: one job alone",
			series: canned(0, 10, func(i int) tick {
				return tick{util: 99, procs: []GPUProc{procSM(100, 99)}, procUtil: true, jobPIDs: []int{100}, cpu: 100, busiest: 99}
			}),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
		{
			name: "every GPU process: nobody uses a GPU",
			series: canned(0, 10, func(i int) tick {
				return tick{util: 0, jobPIDs: []int{}}
			}),
			want: []verdict{{IDNoGPUProcess, CauseHealthy, checks.SevInfo}},
		},
		{
			name: "every GPU process on WSL2: utilisation only",
			series: canned(0, 10, func(i int) tick {
				return tick{util: 12, procsGone: true, jobPIDs: []int{}}
			}),
			want: []verdict{{IDUnderused, CauseUnderused, checks.SevInfo}},
		},
		{
			name: "NVML unreadable",
			series: func() *Series {
				s := canned(jobPID, 5, func(i int) tick { return tick{cpu: 100} })
				s.GPUError, s.Inventory = "libnvidia-ml.so.1 could not be loaded", Inventory{}
				for i := range s.Samples {
					s.Samples[i].GPUs = nil
				}
				return s
			}(),
			want: []verdict{{IDGPUUnreadable, CauseIncomplete, checks.SevWarning}},
			root: IDGPUUnreadable,
		},
		{
			name: "NVML lists no GPU",
			series: func() *Series {
				s := canned(jobPID, 5, func(i int) tick { return tick{cpu: 100} })
				s.Inventory.GPUs = nil
				return s
			}(),
			want: []verdict{{IDGPUUnreadable, CauseIncomplete, checks.SevWarning}},
			root: IDGPUUnreadable,
		},
		{
			name: "two GPUs, the job on GPU 1 only",
			series: func() *Series {
				s := canned(jobPID, 10, func(i int) tick {
					return tick{util: 0, cpu: 100, busiest: 99, gpus: []GPUSample{{Index: 1, Util: ip(94), ProcsKnown: true, Procs: []GPUProc{proc(jobPID)}}}}
				})
				s.Inventory.GPUs = append(s.Inventory.GPUs, GPUInfo{Index: 1, Name: "NVIDIA H200", Minor: 1, ComputeCapability: "9.0", MemoryTotalMiB: 143771})
				return s
			}(),
			want: []verdict{{IDBusy, "healthy", checks.SevOK}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Analyze(tt.series)
			var got []verdict
			for _, f := range fs {
				if f.ID != IDSummary {
					got = append(got, verdict{f.ID, f.Cause, f.Severity})
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				for _, f := range fs {
					t.Logf("%s: %s — %s", f.ID, f.Title, f.Detail)
				}
				t.Fatalf("verdicts (-want +got):\n%s", d)
			}
			if last := fs[len(fs)-1]; last.ID != IDSummary {
				t.Errorf("last finding is %s, want the summary", last.ID)
			}
			r := rules.Assemble(fs)
			root := ""
			if r.RootCause != nil {
				root = r.RootCause.ID
			}
			if root != tt.root {
				t.Errorf("root cause %q, want %q", root, tt.root)
			}
			if tt.fixes != nil {
				var ids []string
				for _, fx := range fs[0].Fixes {
					ids = append(ids, fx.ID)
				}
				if d := cmp.Diff(tt.fixes, ids); d != "" {
					t.Errorf("fixes of %s (-want +got):\n%s", fs[0].ID, d)
				}
			}
			for _, f := range fs {
				if !knowledge.IsCause(f.Cause) {
					t.Errorf("%s: unknown cause label %q", f.ID, f.Cause)
				}
				if f.Title == "" || f.Evidence == nil || f.Fixes == nil {
					t.Errorf("%s: needs a title, evidence and fixes (may be empty)", f.ID)
				}
				for _, fx := range f.Fixes {
					if fx.ID == "" || fx.Title == "" || len(fx.Steps) == 0 {
						t.Errorf("%s: fix %+v incomplete", f.ID, fx)
					}
					if err := checks.CheckFix(fx); err != nil {
						t.Errorf("%s: %v", f.ID, err) // the one fix catalog
					}
				}
			}
		})
	}
}

// The advice says why and when it applies, before the code.
func TestAdviceSaysWhyAndWhen(t *testing.T) {
	for _, fx := range []checks.Fix{adviceParallelMap(99, 16), advicePrefetch(), adviceCache(false), adviceCache(true),
		adviceLargerBatch(), adviceMixedPrecision("8.0"), adviceXLA(), adviceMemoryGrowth()} {
		if len(fx.Steps) < 3 || fx.Steps[0][:7] != "# why: " || fx.Steps[1][:8] != "# when: " {
			t.Errorf("%s: steps %q do not start with why and when", fx.ID, fx.Steps)
		}
		if !fx.Manual || fx.Risk != checks.RiskSafe {
			t.Errorf("%s: advice must be manual and safe", fx.ID)
		}
	}
}

func TestCCAtLeast(t *testing.T) {
	for cc, want := range map[string]bool{"9.0": true, "7.0": true, "7.5": true, "6.1": false, "10.0": true, "": false, "x.y": false, "12": false} {
		if got := ccAtLeast(cc, 7.0); got != want {
			t.Errorf("ccAtLeast(%q) = %v, want %v", cc, got, want)
		}
	}
}

func TestStat(t *testing.T) {
	got := stat([]float64{10, 0, 100, 50, 20, 30, 40, 60, 70, 80, 90})
	want := Stat{N: 11, Mean: 50, P50: 50, P95: 100, Min: 0, Max: 100}
	if got != want {
		t.Errorf("stat = %+v, want %+v", got, want)
	}
	if (stat(nil) != Stat{}) {
		t.Error("stat(nil) is not zero")
	}
}

// The summary finding carries the sampled figures the acceptance asks
// for: mean/p50/p95 utilisation, the job's CPU, iowait, memory, throttle
// reasons seen, doctor's own CPU.
func TestSummaryEvidence(t *testing.T) {
	s := canned(jobPID, 10, func(i int) tick {
		return tick{util: 10 * i, procs: []GPUProc{procSM(jobPID, 10*i)}, procUtil: true, cpu: 100, busiest: 99, iowait: fp(1), events: nvml.ClocksEventReasonSwPowerCap}
	})
	s.SelfCPUPercent = fp(0.123)
	fs := Analyze(s)
	sum := fs[len(fs)-1]
	for _, k := range []string{"samples", "gpus", "job", "system", "self_cpu_percent", "per_process_utilization", "sample_cost_ms", "interval_s"} {
		if _, ok := sum.Evidence[k]; !ok {
			t.Errorf("summary evidence lacks %q", k)
		}
	}
	gs := sum.Evidence["gpus"].([]GPUSummary)
	if g := gs[0]; g.Util.Mean != 45 || g.Util.P50 != 40 || g.Util.P95 != 90 || g.ClockEvents["sw_power_cap"] != 1 || g.JobSMUtil == nil || g.JobSMUtil.Mean != 45 {
		t.Errorf("gpu summary = %+v", g)
	}
	j := sum.Evidence["job"].(*JobSummary)
	if j.CPUPercent.Mean != 100 || j.IOWaitPercent == nil || j.IOWaitPercent.Mean != 1 {
		t.Errorf("job summary = %+v", j)
	}
	if sum.Evidence["self_cpu_percent"] != 0.12 {
		t.Errorf("self_cpu_percent = %v", sum.Evidence["self_cpu_percent"])
	}
}

// Every label watch may report is a known cause label.
func TestCauseLabels(t *testing.T) {
	labels := []string{CauseUnderused, CauseNotUsed, CausePipeline, CauseCompetition, CauseThrottled, CauseMemory, CauseIncomplete, CauseHealthy}
	sort.Strings(labels)
	for _, l := range labels {
		if !knowledge.IsCause(l) {
			t.Errorf("%q is not in knowledge.Causes", l)
		}
	}
}
