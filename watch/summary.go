package watch

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/host"
)

// Stat summarises one sampled figure.
type Stat struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// stat computes mean and nearest-rank percentiles, rounded to 0.1.
func stat(v []float64) Stat {
	if len(v) == 0 {
		return Stat{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(s)))) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	return Stat{N: len(s), Mean: r1(sum / float64(len(s))), P50: r1(rank(50)), P95: r1(rank(95)), Min: r1(s[0]), Max: r1(s[len(s)-1])}
}

func r1(x float64) float64 { return math.Round(x*10) / 10 }

// Summary is what the samples say, figure by figure: the evidence of every
// verdict.
type Summary struct {
	Samples   int     `json:"samples"`
	IntervalS float64 `json:"interval_s"`
	ElapsedS  float64 `json:"elapsed_s"`
	Ended     string  `json:"ended,omitempty"`
	// WindowFrom is the first sample judged (elapsed seconds): in --pid
	// mode, the first one where the job was on a GPU.
	WindowFrom float64       `json:"window_from_s"`
	GPUs       []GPUSummary  `json:"gpus"`
	Job        *JobSummary   `json:"job,omitempty"`
	System     SystemSummary `json:"system"`
	// PerProcessUtil says whether the driver reports each process's share.
	PerProcessUtil string   `json:"per_process_utilization"`
	SelfCPUPercent *float64 `json:"self_cpu_percent,omitempty"`
	SampleCostMS   Stat     `json:"sample_cost_ms"`
	SetupMS        float64  `json:"setup_ms"`
}

// GPUSummary is one GPU over the judged window.
type GPUSummary struct {
	Index             int    `json:"index"`
	Name              string `json:"name,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	// UsedByJob is true when the job appeared on this GPU; JobSamples
	// counts those samples.
	UsedByJob  bool `json:"used_by_job"`
	JobSamples int  `json:"job_samples"`
	Util       Stat `json:"util_percent"`
	MemUtil    Stat `json:"mem_util_percent"`
	// JobSMUtil is the job's own share (per-process utilisation), when
	// the driver reports it.
	JobSMUtil      *Stat   `json:"job_sm_util_percent,omitempty"`
	MemUsedMiB     Stat    `json:"mem_used_mib"`
	MemTotalMiB    uint64  `json:"mem_total_mib"`
	MemUsedPercent float64 `json:"mem_used_max_percent"`
	SMClockMHz     Stat    `json:"sm_clock_mhz"`
	MaxSMClockMHz  int     `json:"max_sm_clock_mhz,omitempty"`
	PowerW         Stat    `json:"power_w"`
	PowerLimitW    float64 `json:"power_limit_w,omitempty"`
	TempMaxC       *int    `json:"temp_max_c,omitempty"`
	// ClockEvents is the share of samples (0-1) in which each clock event
	// reason was set.
	ClockEvents   map[string]float64 `json:"clock_events"`
	ProcsKnown    bool               `json:"procs_known"`
	ProcUtilKnown bool               `json:"proc_util_known"`
	Others        []OtherProc        `json:"other_processes"`
	// ForeignPIDs counts GPU processes whose PIDs are not in this /proc
	// (doctor runs in a container): neither the job nor competitors.
	ForeignPIDs int      `json:"foreign_pids,omitempty"`
	Unsupported []string `json:"unsupported,omitempty"`
	Errors      int      `json:"query_errors,omitempty"`
}

// OtherProc is a GPU process that is not part of the job.
type OtherProc struct {
	PID       int    `json:"pid"`
	Command   string `json:"command,omitempty"`
	Samples   int    `json:"samples"`
	SMUtil    *Stat  `json:"sm_util_percent,omitempty"`
	MemMiBMax uint64 `json:"mem_mib_max"`
}

// JobSummary is the job's CPU side over the judged window.
type JobSummary struct {
	PID                  int      `json:"pid,omitempty"`
	Command              string   `json:"command,omitempty"`
	Processes            int      `json:"processes_max"`
	ThreadsMax           int      `json:"threads_max"`
	CPUPercent           Stat     `json:"cpu_percent"`
	BusiestThreadPercent Stat     `json:"busiest_thread_percent"`
	CPUs                 float64  `json:"cpus_available"`
	CPUsSource           string   `json:"cpus_source,omitempty"`
	IOWaitPercent        *Stat    `json:"iowait_percent,omitempty"`
	IOWaitNote           string   `json:"iowait_note,omitempty"`
	ReadMBps             float64  `json:"read_mb_s"`
	WriteMBps            float64  `json:"write_mb_s"`
	DiskReadMBps         float64  `json:"disk_read_mb_s"`
	DiskWriteMBps        float64  `json:"disk_write_mb_s"`
	IOUnreadable         bool     `json:"io_unreadable,omitempty"`
	DeviceNodes          []string `json:"device_nodes,omitempty"`
}

// SystemSummary is the machine's CPU over the judged window.
type SystemSummary struct {
	CPUPercent    Stat `json:"cpu_percent"`
	IOWaitPercent Stat `json:"iowait_percent"`
	// IOWaitCores is the mean iowait in cores (percent of all CPUs times
	// their number): one thread blocked on a disk is one core.
	IOWaitCores float64 `json:"iowait_cores"`
	HostCPUs    int     `json:"host_cpus"`
}

// jobOn reports whether the job was on GPU g in sample smp: one of its
// processes is in the GPU's list, or holds the GPU's device node.
func jobOn(s *Series, smp *Sample, g int) bool {
	pids := map[int]bool{}
	for _, p := range smp.Job.PIDs {
		pids[p] = true
	}
	for _, gs := range smp.GPUs {
		if gs.Index != g {
			continue
		}
		for _, p := range gs.Procs {
			if pids[p.PID] {
				return true
			}
		}
	}
	minor := -1
	for _, info := range s.Inventory.GPUs {
		if info.Index == g {
			minor = info.Minor
		}
	}
	for _, n := range smp.Job.DeviceNodes {
		if n == "/dev/dxg" || (minor >= 0 && n == fmt.Sprintf("/dev/nvidia%d", minor)) {
			return true
		}
	}
	return false
}

// window returns the samples to judge: in --pid mode, from the first one
// where the job was on a GPU (a job loads data before it creates its CUDA
// context); otherwise all.
func window(s *Series) []Sample {
	if s.PID == 0 {
		return s.Samples
	}
	for i := range s.Samples {
		for _, g := range s.Samples[i].GPUs {
			if jobOn(s, &s.Samples[i], g.Index) {
				return s.Samples[i:]
			}
		}
	}
	return s.Samples
}

// Summarize computes the figures of the judged window.
func Summarize(s *Series) Summary {
	win := window(s)
	sum := Summary{Samples: len(s.Samples), IntervalS: s.Interval, Ended: s.Ended, SelfCPUPercent: roundPtr(s.SelfCPUPercent, 2), SetupMS: r1(s.SetupMS)}
	if n := len(s.Samples); n > 0 {
		sum.ElapsedS = r1(s.Samples[n-1].Elapsed)
	}
	if len(win) > 0 {
		sum.WindowFrom = r1(win[0].Elapsed - s.Interval)
		if sum.WindowFrom < 0 {
			sum.WindowFrom = 0
		}
	}
	var cost []float64
	for _, smp := range s.Samples {
		cost = append(cost, smp.CostMS)
	}
	sum.SampleCostMS = stat(cost)
	known, supported := false, false
	for _, info := range s.Inventory.GPUs {
		gs := summarizeGPU(s, win, info)
		known = known || gs.ProcsKnown
		supported = supported || gs.ProcUtilKnown
		sum.GPUs = append(sum.GPUs, gs)
	}
	switch {
	case supported:
		sum.PerProcessUtil = "supported"
	case known:
		sum.PerProcessUtil = "not supported by the driver (processes are listed, their share is not)"
	case len(s.Inventory.GPUs) > 0:
		sum.PerProcessUtil = "not supported by the driver (it does not list GPU processes)"
	default:
		sum.PerProcessUtil = "no GPU"
	}
	sum.Job = summarizeJob(s, win)
	var sc, sw []float64
	for _, smp := range win {
		sc = append(sc, smp.System.CPUPercent)
		sw = append(sw, smp.System.IOWaitPercent)
	}
	sum.System = SystemSummary{CPUPercent: stat(sc), IOWaitPercent: stat(sw), HostCPUs: s.HostCPUs}
	sum.System.IOWaitCores = r1(sum.System.IOWaitPercent.Mean / 100 * float64(s.HostCPUs))
	return sum
}

func roundPtr(p *float64, digits int) *float64 {
	if p == nil {
		return nil
	}
	f := math.Pow(10, float64(digits))
	v := math.Round(*p*f) / f
	return &v
}

func summarizeGPU(s *Series, win []Sample, info GPUInfo) GPUSummary {
	gs := GPUSummary{Index: info.Index, Name: info.Name, ComputeCapability: info.ComputeCapability,
		MemTotalMiB: info.MemoryTotalMiB, MaxSMClockMHz: info.MaxSMClockMHz, PowerLimitW: info.PowerLimitW,
		ClockEvents: map[string]float64{}, Others: []OtherProc{}}
	var util, memUtil, memUsed, clock, power, jobSM []float64
	events := map[string]int{}
	eventSamples := 0
	others := map[int]*OtherProc{}
	foreign := map[int]bool{}
	otherSM := map[int][]float64{}
	unsup := map[string]bool{}
	for i := range win {
		smp := &win[i]
		var g *GPUSample
		for j := range smp.GPUs {
			if smp.GPUs[j].Index == info.Index {
				g = &smp.GPUs[j]
			}
		}
		if g == nil {
			continue
		}
		for _, u := range g.Unsupported {
			unsup[u] = true
		}
		gs.Errors += len(g.Errors)
		if g.Util != nil {
			util = append(util, float64(*g.Util))
		}
		if g.MemUtil != nil {
			memUtil = append(memUtil, float64(*g.MemUtil))
		}
		if g.MemUsedMiB != nil {
			memUsed = append(memUsed, float64(*g.MemUsedMiB))
		}
		if g.SMClockMHz != nil {
			clock = append(clock, float64(*g.SMClockMHz))
		}
		if g.PowerW != nil {
			power = append(power, *g.PowerW)
		}
		if g.TempC != nil && (gs.TempMaxC == nil || *g.TempC > *gs.TempMaxC) {
			t := *g.TempC
			gs.TempMaxC = &t
		}
		if g.ClockEvents != nil {
			eventSamples++
			for _, name := range host.ThrottleReasonNames(*g.ClockEvents) {
				events[name]++
			}
		}
		gs.ProcsKnown = gs.ProcsKnown || g.ProcsKnown
		gs.ProcUtilKnown = gs.ProcUtilKnown || g.ProcUtilKnown
		on := jobOn(s, smp, info.Index)
		if on {
			gs.UsedByJob = true
			gs.JobSamples++
		}
		job := map[int]bool{}
		if s.PID > 0 {
			for _, p := range smp.Job.PIDs {
				job[p] = true
			}
		}
		sm, smKnown := 0.0, false
		for _, p := range g.Procs {
			if job[p.PID] {
				if p.SMUtil != nil {
					sm += float64(*p.SMUtil)
					smKnown = true
				}
				continue
			}
			if p.PID == s.Self {
				continue
			}
			if p.Foreign {
				foreign[p.PID] = true
				continue
			}
			o := others[p.PID]
			if o == nil {
				o = &OtherProc{PID: p.PID, Command: s.Commands[p.PID]}
				others[p.PID] = o
			}
			o.Samples++
			if p.UsedMiB > o.MemMiBMax {
				o.MemMiBMax = p.UsedMiB
			}
			if p.SMUtil != nil {
				otherSM[p.PID] = append(otherSM[p.PID], float64(*p.SMUtil))
			}
		}
		if on && smKnown {
			jobSM = append(jobSM, sm)
		}
	}
	gs.Util, gs.MemUtil, gs.MemUsedMiB = stat(util), stat(memUtil), stat(memUsed)
	gs.SMClockMHz, gs.PowerW = stat(clock), stat(power)
	if len(jobSM) > 0 {
		st := stat(jobSM)
		gs.JobSMUtil = &st
	}
	if gs.MemTotalMiB > 0 {
		gs.MemUsedPercent = r1(100 * gs.MemUsedMiB.Max / float64(gs.MemTotalMiB))
	}
	for name, n := range events {
		gs.ClockEvents[name] = math.Round(100*float64(n)/float64(eventSamples)) / 100
	}
	for pid, o := range others {
		if v := otherSM[pid]; len(v) > 0 {
			st := stat(v)
			o.SMUtil = &st
		}
		gs.Others = append(gs.Others, *o)
	}
	sort.Slice(gs.Others, func(i, j int) bool { return gs.Others[i].PID < gs.Others[j].PID })
	gs.ForeignPIDs = len(foreign)
	for u := range unsup {
		gs.Unsupported = append(gs.Unsupported, u)
	}
	sort.Strings(gs.Unsupported)
	return gs
}

func summarizeJob(s *Series, win []Sample) *JobSummary {
	j := &JobSummary{PID: s.PID, Command: s.Command, CPUs: s.CPUs, CPUsSource: s.CPUsSource}
	var cpuV, thr, iow []float64
	var rd, wr, drd, dwr float64
	nodes := map[string]bool{}
	for _, smp := range win {
		js := smp.Job
		if s.PID > 0 && !js.Alive {
			continue
		}
		cpuV = append(cpuV, js.CPUPercent)
		thr = append(thr, js.BusiestThreadPercent)
		if js.IOWaitPercent != nil {
			iow = append(iow, *js.IOWaitPercent)
		}
		rd += js.ReadBps
		wr += js.WriteBps
		drd += js.DiskReadBps
		dwr += js.DiskWriteBps
		j.IOUnreadable = j.IOUnreadable || js.IOUnreadable
		if len(js.PIDs) > j.Processes {
			j.Processes = len(js.PIDs)
		}
		if js.Threads > j.ThreadsMax {
			j.ThreadsMax = js.Threads
		}
		for _, n := range js.DeviceNodes {
			nodes[n] = true
		}
	}
	j.CPUPercent, j.BusiestThreadPercent = stat(cpuV), stat(thr)
	if n := float64(len(cpuV)); n > 0 {
		mb := n * 1e6
		j.ReadMBps, j.WriteMBps, j.DiskReadMBps, j.DiskWriteMBps = r1(rd/mb), r1(wr/mb), r1(drd/mb), r1(dwr/mb)
	}
	switch {
	case len(iow) > 0:
		st := stat(iow)
		j.IOWaitPercent = &st
	case s.DelayAccounting != nil && !*s.DelayAccounting:
		j.IOWaitNote = "kernel delay accounting is off (sysctl kernel.task_delayacct=1 turns it on): the job's own I/O wait is not measured; the system's iowait is"
	}
	for n := range nodes {
		j.DeviceNodes = append(j.DeviceNodes, n)
	}
	sort.Strings(j.DeviceNodes)
	return j
}

// describe names a process for people: "PID 12 (python train.py)".
func describe(pid int, cmd string) string {
	if cmd == "" {
		return fmt.Sprintf("PID %d", pid)
	}
	if r := []rune(cmd); len(r) > 60 {
		cmd = string(r[:59]) + "…"
	}
	return fmt.Sprintf("PID %d (%s)", pid, strings.TrimSpace(cmd))
}
