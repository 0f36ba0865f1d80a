package watch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/checks"
)

// The thresholds of the verdicts. They are deliberately coarse: a verdict
// must hold for a whole watch, not for one sample.
const (
	// BusyUtil: a mean GPU utilisation at or above it is a busy GPU.
	BusyUtil = 70.0
	// IdleUtil: below it the GPU is mostly idle; between the two it is
	// partly used.
	IdleUtil = 40.0
	// FullCore: a thread at this percent of one core (mean) is saturated:
	// a single-threaded loader cannot go faster.
	FullCore = 85.0
	// AllCores: a job using this share of the cores it may use is
	// saturated.
	AllCores = 0.85
	// JobIOWait: the job waits on block I/O this percent of the time.
	JobIOWait = 20.0
	// SystemIOWaitCores: the machine's iowait, in cores, that counts as
	// waiting on storage when the job is reading (ReadingMBps).
	SystemIOWaitCores = 0.5
	ReadingMBps       = 1.0
	// MemFull: GPU memory used at its peak, percent of the total.
	MemFull = 95.0
	// ThrottleShare: a serious clock event reason in at least this share
	// of samples is throttling.
	ThrottleShare = 0.2
	// CompetitorSM: another process with this mean SM share competes.
	CompetitorSM = 10.0
	// MinSamples: fewer judged samples give no verdict.
	MinSamples = 3
)

// seriousClockEvents are the reasons that mean heat or power trouble, not
// an idle GPU or a configured cap.
var seriousClockEvents = map[string]string{
	"hw_slowdown":             "hardware slowdown (temperature or power brake signal)",
	"hw_thermal_slowdown":     "the GPU is too hot",
	"hw_power_brake_slowdown": "the power supply asserted the power brake",
	"sw_thermal_slowdown":     "the driver lowers clocks to cool the GPU",
}

// Finding IDs of doctor watch (stable: scripts match on them).
const (
	IDGPUNotUsed     = "watch.gpu_not_used"
	IDGPUUnreadable  = "watch.gpu_unreadable"
	IDTooFew         = "watch.too_few_samples"
	IDGPUUseUnknown  = "watch.gpu_use_unknown"
	IDNoGPUProcess   = "watch.no_gpu_process"
	IDBusy           = "watch.busy"
	IDInputPipeline  = "watch.input_pipeline"
	IDUnderused      = "watch.underused"
	IDUtilUnknown    = "watch.util_unknown"
	IDCompetition    = "watch.competition"
	IDThrottle       = "watch.throttle"
	IDMemory         = "watch.memory"
	IDSummary        = "watch.summary"
	CauseUnderused   = "gpu_underutilized"
	CauseNotUsed     = "gpu_not_used"
	CausePipeline    = "data_pipeline_bottleneck"
	CauseCompetition = "gpu_out_of_memory_other_process"
	CauseThrottled   = "gpu_throttled"
	CauseMemory      = "gpu_memory_preallocation"
	CauseIncomplete  = "check_incomplete"
	CauseHealthy     = "healthy"
)

// Analyze turns a watch into findings. It is a pure function of the
// series: the same samples give the same verdicts.
func Analyze(s *Series) []checks.Finding {
	a := &analysis{s: s, sum: Summarize(s), win: window(s)}
	a.run()
	a.out = append(a.out, a.summaryFinding())
	return a.out
}

type analysis struct {
	s   *Series
	sum Summary
	win []Sample
	out []checks.Finding
}

func (a *analysis) add(id, cause string, sev checks.Severity, link checks.Link, title, detail string, ev checks.Ev, fixes ...checks.Fix) {
	if ev == nil {
		ev = checks.Ev{}
	}
	if fixes == nil {
		fixes = []checks.Fix{}
	}
	for i := range fixes {
		fixes[i] = checks.Normalize(fixes[i])
	}
	a.out = append(a.out, checks.Finding{ID: id, Check: strings.SplitN(id, "/", 2)[0], Cause: cause, Severity: sev, Link: link,
		Title: title, Detail: detail, Evidence: ev, Fixes: fixes})
}

func (a *analysis) run() {
	s, sum := a.s, a.sum
	if s.GPUError != "" {
		a.add(IDGPUUnreadable, CauseIncomplete, checks.SevWarning, checks.LinkDriver,
			"Cannot read the GPUs: "+s.GPUError,
			"Without NVML doctor watch sees only the CPU side of the job. Run doctor to find why the driver cannot be reached.",
			a.jobEvidence(), fixRunDoctor("Find out why the driver cannot be reached"))
		return
	}
	if len(s.Inventory.GPUs) == 0 {
		a.add(IDGPUUnreadable, CauseIncomplete, checks.SevWarning, checks.LinkDriver, "The driver lists no GPU",
			"NVML answered but reports no device, so there is nothing to watch. Run doctor to find out why.", a.jobEvidence(),
			fixRunDoctor("Find out why the driver shows no GPU"))
		return
	}
	if len(s.Samples) < MinSamples {
		a.add(IDTooFew, CauseIncomplete, checks.SevInfo, checks.LinkPerformance,
			fmt.Sprintf("Too few samples to judge (%d)", len(s.Samples)),
			fmt.Sprintf("A verdict needs at least %d samples; watch longer (--duration) or sample faster (--interval).", MinSamples), nil)
		return
	}

	var judged []GPUSummary
	for _, g := range sum.GPUs {
		if g.UsedByJob || (s.PID == 0 && !g.ProcsKnown) {
			judged = append(judged, g)
		}
	}
	if len(judged) == 0 {
		anyKnown := false
		for _, g := range sum.GPUs {
			anyKnown = anyKnown || g.ProcsKnown
		}
		switch {
		case s.PID > 0 && anyKnown:
			a.notUsed()
			return
		case s.PID > 0:
			a.add(IDGPUUseUnknown, CauseIncomplete, checks.SevInfo, checks.LinkRuntime,
				"Cannot tell whether the job uses the GPU: the driver does not list GPU processes",
				"This driver (WSL2 and some virtual GPUs) reports no per-process information, and the job holds no GPU device node. The figures below are for every GPU.", nil)
			judged = sum.GPUs
		default:
			ev := checks.Ev{}
			for _, g := range sum.GPUs {
				ev[fmt.Sprintf("gpu%d_util_mean", g.Index)] = g.Util.Mean
			}
			a.add(IDNoGPUProcess, CauseHealthy, checks.SevInfo, checks.LinkPerformance,
				"No process used a GPU while watching",
				"No compute process appeared on any GPU. To watch a job that should use the GPU, pass its PID: doctor watch --pid PID.", ev)
			return
		}
	}
	if n := len(a.win); n < MinSamples {
		a.add(IDTooFew, CauseIncomplete, checks.SevInfo, checks.LinkPerformance,
			fmt.Sprintf("The job used the GPU for only %d samples: too few to judge", n),
			"The job created its GPU context near the end of the watch. Watch again once it trains.", nil)
		return
	}
	a.utilisation(judged)
	for _, g := range judged {
		a.competition(g)
		a.throttle(g)
		a.memory(g)
	}
}

// notUsed: the job never appeared among the GPUs' processes.
func (a *analysis) notUsed() {
	s, sum := a.s, a.sum
	var gpus []string
	var busy []string
	for _, g := range sum.GPUs {
		if !g.ProcsKnown {
			continue
		}
		name := fmt.Sprintf("GPU %d", g.Index)
		if g.Name != "" {
			name += " (" + g.Name + ")"
		}
		gpus = append(gpus, name)
		if len(g.Others) > 0 {
			busy = append(busy, fmt.Sprintf("GPU %d is %s busy with %d other process(es)", g.Index, pct(g.Util.Mean), len(g.Others)))
		}
	}
	who := describe(s.PID, s.Command) + " did not appear"
	if n := sum.Job.Processes - 1; n > 0 {
		who = fmt.Sprintf("neither %s nor its %d child process(es) appeared", describe(s.PID, s.Command), n)
	}
	detail := fmt.Sprintf("Over %d samples (%.0f s) %s among the compute processes of %s, and the job holds no GPU device node open. "+
		"The job runs on the CPU (mean %s of one core). TensorFlow falls back to the CPU without an error when it cannot load the CUDA libraries or sees no GPU: run doctor in the job's environment to find which link is broken.",
		len(s.Samples), sum.ElapsedS, who, strings.Join(gpus, ", "), pct(sum.Job.CPUPercent.Mean))
	if len(busy) > 0 {
		detail += " Meanwhile " + strings.Join(busy, "; ") + "."
	}
	ev := a.jobEvidence()
	ev["gpus_checked"] = len(gpus)
	a.add(IDGPUNotUsed, CauseNotUsed, checks.SevError, checks.LinkRuntime,
		fmt.Sprintf("The job does not use the GPU: PID %d is not among the GPU's processes", s.PID), detail, ev, fixRunDoctor("Find out why the job does not use the GPU"))
}

// utilisation gives the main verdict: busy, starved by its input, or idle
// for another reason.
func (a *analysis) utilisation(judged []GPUSummary) {
	s, sum := a.s, a.sum
	util := a.pooledUtil(judged)
	names := gpuNames(judged)
	ev := a.jobEvidence()
	ev["gpus"] = indices(judged)
	ev["gpu_util_mean"], ev["gpu_util_p50"], ev["gpu_util_p95"] = util.Mean, util.P50, util.P95
	ev["samples"] = util.N
	var memMax float64
	events := map[string]float64{}
	for _, g := range judged {
		memMax = max(memMax, g.MemUsedMiB.Max)
		for name, share := range g.ClockEvents {
			events[name] = max(events[name], share)
		}
	}
	ev["gpu_mem_used_mib_max"], ev["clock_events_seen"] = memMax, events
	if util.N == 0 {
		a.add(IDUtilUnknown, CauseIncomplete, checks.SevInfo, checks.LinkPerformance,
			"The driver does not report GPU utilisation",
			"Without utilisation figures doctor watch cannot judge how busy the GPU is (WSL2 does not report it).", ev)
		return
	}
	var cc string
	for _, g := range judged {
		if cc == "" || g.ComputeCapability < cc {
			cc = g.ComputeCapability
		}
	}
	if util.Mean >= BusyUtil {
		var fixes []checks.Fix
		if ccAtLeast(cc, mixedPrecisionMinimum) {
			fixes = append(fixes, adviceMixedPrecision(cc))
		}
		fixes = append(fixes, adviceXLA())
		for _, g := range judged {
			if share := g.ClockEvents["sw_power_cap"]; share > 0 {
				ev[fmt.Sprintf("gpu%d_power_capped_share", g.Index)] = share
			}
		}
		a.add(IDBusy, CauseHealthy, checks.SevOK, checks.LinkPerformance,
			fmt.Sprintf("%s busy: kernels ran %s of the time (p50 %s, p95 %s)", names, pct(util.Mean), pct(util.P50), pct(util.P95)),
			"The GPU is the limit, as it should be. To go faster, make each step cheaper on the GPU.", ev, fixes...)
		return
	}
	j := sum.Job
	if j == nil || j.Processes == 0 {
		a.add(IDUnderused, CauseUnderused, checks.SevInfo, checks.LinkPerformance,
			fmt.Sprintf("%s mostly idle (mean %s); its processes could not be followed", names, pct(util.Mean)),
			"The driver does not name the processes on the GPU, so their CPU use is unknown. Watch the job with --pid PID.", ev)
		return
	}
	busiest, jobCPU := j.BusiestThreadPercent.Mean, j.CPUPercent.Mean
	single := busiest >= FullCore || (j.ThreadsMax == 0 && jobCPU >= FullCore)
	all := jobCPU >= AllCores*s.CPUs*100
	jobIO := j.IOWaitPercent != nil && j.IOWaitPercent.Mean >= JobIOWait
	sysIO := sum.System.IOWaitCores >= SystemIOWaitCores && (j.ReadMBps >= ReadingMBps || j.DiskReadMBps >= ReadingMBps)
	ev["job_saturates_one_core"] = single
	ev["job_saturates_all_cores"] = all
	ev["job_waits_on_io"] = jobIO || sysIO
	level := "mostly idle"
	if util.Mean >= IdleUtil {
		level = "partly idle"
	}
	head := fmt.Sprintf("%s %s (mean %s)", names, level, pct(util.Mean))
	utilText := fmt.Sprintf("Over %.0f s the GPU ran kernels %s of the time (p50 %s, p95 %s)", a.windowSeconds(), pct(util.Mean), pct(util.P50), pct(util.P95))
	switch {
	case all || single:
		var why, title string
		if all {
			title = fmt.Sprintf("%s while the job keeps all its %s busy: the input pipeline is the bottleneck", head, cores(s.CPUs))
			why = fmt.Sprintf("while the job used %s CPU, %s of the %s it may use.", pct(jobCPU), pct(100*jobCPU/(s.CPUs*100)), cores(s.CPUs))
		} else {
			title = fmt.Sprintf("%s while the job's busiest thread runs at %s of one core: the input pipeline is the bottleneck", head, pct(busiest))
			why = fmt.Sprintf("while one thread of the job used %s of a core (the whole job %s of one core, %s available). "+
				"A single-threaded input pipeline (decoding, augmentation, Python preprocessing) cannot feed the GPU: spread it over the cores and overlap it with training.",
				pct(busiest), pct(jobCPU), cores(s.CPUs))
		}
		fixes := []checks.Fix{}
		if !all {
			fixes = append(fixes, adviceParallelMap(busiest, s.CPUs))
		}
		fixes = append(fixes, advicePrefetch(), adviceCache(false))
		a.add(IDInputPipeline, CausePipeline, checks.SevWarning, checks.LinkPerformance, title, utilText+" "+why, ev, fixes...)
	case jobIO || sysIO:
		wait := ""
		if jobIO {
			wait = fmt.Sprintf("the job waited on block I/O %s of the time", pct(j.IOWaitPercent.Mean))
		} else {
			wait = fmt.Sprintf("the machine waited on I/O (%s cores' worth of iowait)", fmtFloat(sum.System.IOWaitCores))
		}
		title := fmt.Sprintf("%s while the job waits on reads: the input pipeline is the bottleneck", head)
		detail := fmt.Sprintf("%s while %s, reading %s MB/s (%s MB/s from storage). The GPU waits for data from slow storage.",
			utilText, wait, fmtFloat(j.ReadMBps), fmtFloat(j.DiskReadMBps))
		a.add(IDInputPipeline, CausePipeline, checks.SevWarning, checks.LinkPerformance, title, detail, ev,
			adviceCache(true), advicePrefetch(), adviceParallelMap(busiest, s.CPUs))
	default:
		sev := checks.SevWarning
		if util.Mean >= IdleUtil {
			sev = checks.SevInfo
		}
		title := fmt.Sprintf("%s though the job's CPU is not saturated", head)
		detail := fmt.Sprintf("%s while the job used %s of one core (busiest thread %s) and did not wait on I/O. "+
			"The GPU waits on something else: small batches or many small ops (kernel launch overhead), host-device copies and synchronisation "+
			"(.numpy(), Python control flow per step), or work off the GPU (evaluation, checkpoints, the network).",
			utilText, pct(jobCPU), pct(busiest))
		a.add(IDUnderused, CauseUnderused, sev, checks.LinkPerformance, title, detail, ev,
			adviceLargerBatch(), adviceXLA(), advicePrefetch())
	}
}

// competition: other processes on a GPU the job uses.
func (a *analysis) competition(g GPUSummary) {
	s := a.s
	var strong, present []OtherProc
	for _, o := range g.Others {
		switch {
		case o.SMUtil != nil && o.SMUtil.Mean >= CompetitorSM:
			strong = append(strong, o)
		case o.SMUtil == nil && 2*o.Samples >= len(a.win):
			present = append(present, o)
		}
	}
	id := fmt.Sprintf("%s/gpu%d", IDCompetition, g.Index)
	// Watching every GPU process, one busy process is the job itself.
	if s.PID == 0 && len(strong) < 2 {
		if len(present) < 2 {
			return
		}
		strong = nil
	}
	ev := checks.Ev{"gpu": g.Index, "other_processes": g.Others, "gpu_util_mean": g.Util.Mean}
	if g.JobSMUtil != nil {
		ev["job_sm_util_mean"] = g.JobSMUtil.Mean
	}
	if len(strong) > 0 {
		var parts []string
		for _, o := range strong {
			parts = append(parts, fmt.Sprintf("%s uses %s of the SMs and %s", describe(o.PID, o.Command), pct(o.SMUtil.Mean), mib(o.MemMiBMax)))
		}
		sort.Slice(strong, func(i, j int) bool { return strong[i].SMUtil.Mean > strong[j].SMUtil.Mean })
		title := fmt.Sprintf("Another process competes for GPU %d: %s", g.Index, parts[0])
		if s.PID == 0 {
			title = fmt.Sprintf("%d processes compete for GPU %d", len(strong), g.Index)
		}
		detail := "Kernels of several processes take turns on the GPU (time slicing), so each job runs slower, and their memory adds up. " + strings.Join(parts, "; ") + "."
		if g.JobSMUtil != nil {
			detail += fmt.Sprintf(" The job's own share was %s.", pct(g.JobSMUtil.Mean))
		}
		fixes := []checks.Fix{fixUseFreeGPU(g.Index)}
		if s.PID > 0 {
			fixes = append(fixes, fixStopProcess(strong[0]))
		}
		a.add(id, CauseCompetition, checks.SevWarning, checks.LinkPerformance, title, detail, ev, fixes...)
		return
	}
	if len(present) > 0 {
		var parts []string
		for _, o := range present {
			parts = append(parts, fmt.Sprintf("%s (%s)", describe(o.PID, o.Command), mib(o.MemMiBMax)))
		}
		a.add(id, CauseCompetition, checks.SevInfo, checks.LinkPerformance,
			fmt.Sprintf("GPU %d is shared with %d other process(es)", g.Index, len(present)),
			"The driver does not report per-process utilisation, so their share of the GPU is unknown: "+strings.Join(parts, "; ")+".",
			ev, fixUseFreeGPU(g.Index))
	}
}

// throttle: clocks held down by heat or power.
func (a *analysis) throttle(g GPUSummary) {
	var why, names []string
	worst := 0.0
	for name, share := range g.ClockEvents {
		if d, ok := seriousClockEvents[name]; ok && share >= ThrottleShare {
			why = append(why, fmt.Sprintf("%s (%s of samples)", d, pct(100*share)))
			names = append(names, name)
			if share > worst {
				worst = share
			}
		}
	}
	if len(why) == 0 {
		return
	}
	sort.Strings(why)
	sort.Strings(names)
	ev := checks.Ev{"gpu": g.Index, "reasons": names, "clock_events": g.ClockEvents, "sm_clock_mhz_mean": g.SMClockMHz.Mean,
		"max_sm_clock_mhz": g.MaxSMClockMHz, "power_w_mean": g.PowerW.Mean, "power_limit_w": g.PowerLimitW}
	detail := fmt.Sprintf("SM clock mean %s MHz", fmtFloat(g.SMClockMHz.Mean))
	if g.MaxSMClockMHz > 0 {
		detail += fmt.Sprintf(" of %d MHz at most", g.MaxSMClockMHz)
	}
	if g.TempMaxC != nil {
		ev["temp_max_c"] = *g.TempMaxC
		detail += fmt.Sprintf("; temperature up to %d °C", *g.TempMaxC)
	}
	if g.PowerW.N > 0 {
		detail += fmt.Sprintf("; power %s W", fmtFloat(g.PowerW.Mean))
		if g.PowerLimitW > 0 {
			detail += fmt.Sprintf(" of a %s W limit", fmtFloat(g.PowerLimitW))
		}
	}
	a.add(fmt.Sprintf("%s/gpu%d", IDThrottle, g.Index), CauseThrottled, checks.SevWarning, checks.LinkPerformance,
		fmt.Sprintf("GPU %d clocks held down: %s", g.Index, strings.Join(why, "; ")),
		detail+". The GPU runs below its rated clocks, so every step takes longer.", ev, fixCheckCooling())
}

// memory: GPU memory nearly full.
func (a *analysis) memory(g GPUSummary) {
	if g.MemTotalMiB == 0 || g.MemUsedPercent < MemFull {
		return
	}
	var others uint64
	for _, o := range g.Others {
		others += o.MemMiBMax
	}
	ev := checks.Ev{"gpu": g.Index, "mem_used_mib_max": g.MemUsedMiB.Max, "mem_total_mib": g.MemTotalMiB,
		"mem_used_max_percent": g.MemUsedPercent, "other_processes_mib": others}
	sev := checks.SevInfo
	detail := "TensorFlow maps nearly all GPU memory at start by default, so a full GPU is expected with one TensorFlow job; " +
		"a second process, or a second framework in the same process, then fails with CUDA_ERROR_OUT_OF_MEMORY."
	if float64(others) >= 0.05*float64(g.MemTotalMiB) {
		sev = checks.SevWarning
		detail += fmt.Sprintf(" Other processes hold %s of it.", mib(others))
	}
	a.add(fmt.Sprintf("%s/gpu%d", IDMemory, g.Index), CauseMemory, sev, checks.LinkPerformance,
		fmt.Sprintf("GPU %d memory nearly full: %s of %s (%s)", g.Index, mib(uint64(g.MemUsedMiB.Max)), mib(g.MemTotalMiB), pct(g.MemUsedPercent)),
		detail, ev, adviceMemoryGrowth())
}

func (a *analysis) summaryFinding() checks.Finding {
	s, sum := a.s, a.sum
	who := "every GPU process"
	if s.PID > 0 {
		who = describe(s.PID, s.Command)
	}
	title := fmt.Sprintf("Watched %s for %.1f s: %d samples every %s s", who, sum.ElapsedS, sum.Samples, fmtFloat(s.Interval))
	if sum.Ended != "" && sum.Ended != "interrupted" {
		title += " (" + sum.Ended + ")"
	} else if sum.Ended == "interrupted" {
		title += " (interrupted)"
	}
	detail := ""
	if sum.SelfCPUPercent != nil {
		detail = fmt.Sprintf("doctor's own sampling used %s of one core (%s ms a sample).", fmtFloat(*sum.SelfCPUPercent)+"%", fmtFloat(sum.SampleCostMS.Mean))
	}
	ev := checks.Ev{
		"samples": sum.Samples, "interval_s": sum.IntervalS, "elapsed_s": sum.ElapsedS, "window_from_s": sum.WindowFrom,
		"gpus": sum.GPUs, "job": sum.Job, "system": sum.System, "per_process_utilization": sum.PerProcessUtil,
		"sample_cost_ms": sum.SampleCostMS, "setup_ms": sum.SetupMS,
	}
	if sum.SelfCPUPercent != nil {
		ev["self_cpu_percent"] = *sum.SelfCPUPercent
	}
	if sum.Ended != "" {
		ev["ended"] = sum.Ended
	}
	if s.Inventory.Driver != "" {
		ev["driver"] = s.Inventory.Driver
	}
	return checks.Finding{ID: IDSummary, Check: IDSummary, Cause: CauseHealthy, Severity: checks.SevInfo, Link: checks.LinkPerformance,
		Title: title, Detail: detail, Evidence: ev, Fixes: []checks.Fix{}}
}

// jobEvidence is the CPU side of the job in a few flat figures.
func (a *analysis) jobEvidence() checks.Ev {
	j, sum := a.sum.Job, a.sum
	ev := checks.Ev{"system_cpu_percent_mean": sum.System.CPUPercent.Mean, "system_iowait_percent_mean": sum.System.IOWaitPercent.Mean}
	if j == nil {
		return ev
	}
	if a.s.PID > 0 {
		ev["pid"] = a.s.PID
	}
	ev["job_cpu_percent_mean"], ev["job_cpu_percent_p95"] = j.CPUPercent.Mean, j.CPUPercent.P95
	ev["job_busiest_thread_percent_mean"] = j.BusiestThreadPercent.Mean
	ev["job_threads_max"], ev["job_processes_max"] = j.ThreadsMax, j.Processes
	ev["cpus_available"] = j.CPUs
	ev["job_read_mb_s"], ev["job_disk_read_mb_s"] = j.ReadMBps, j.DiskReadMBps
	if j.IOWaitPercent != nil {
		ev["job_iowait_percent_mean"] = j.IOWaitPercent.Mean
	}
	return ev
}

// pooledUtil is the utilisation of the judged GPUs, all their samples
// together.
func (a *analysis) pooledUtil(judged []GPUSummary) Stat {
	want := map[int]bool{}
	for _, g := range judged {
		want[g.Index] = true
	}
	var v []float64
	for _, smp := range a.win {
		for _, g := range smp.GPUs {
			if want[g.Index] && g.Util != nil {
				v = append(v, float64(*g.Util))
			}
		}
	}
	return stat(v)
}

func (a *analysis) windowSeconds() float64 {
	return float64(len(a.win)) * a.s.Interval
}

func gpuNames(gs []GPUSummary) string {
	if len(gs) == 1 {
		return fmt.Sprintf("GPU %d", gs[0].Index)
	}
	var idx []string
	for _, g := range gs {
		idx = append(idx, fmt.Sprint(g.Index))
	}
	return "GPUs " + strings.Join(idx, ", ")
}

func indices(gs []GPUSummary) []int {
	out := make([]int, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.Index)
	}
	return out
}

func mib(v uint64) string {
	if v >= 1024 {
		return fmt.Sprintf("%.1f GiB", float64(v)/1024)
	}
	return fmt.Sprintf("%d MiB", v)
}

func fmtFloat(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") }
