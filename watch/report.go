package watch

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/metrics"
	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
)

// Report turns a watch into a doctor.report/v1 report: the findings of
// Analyze, ordered and with the root cause named by rules.Assemble.
func Report(s *Series, tool host.Tool) *rules.Report {
	r := rules.Assemble(Analyze(s))
	r.Tool = tool
	r.Source = "watch"
	sum := &rules.Summary{Driver: s.Inventory.Driver, CollectedAt: s.Started}
	for _, g := range s.Inventory.GPUs {
		sum.GPUs = append(sum.GPUs, rules.SummaryGPU{Index: g.Index, Name: g.Name, MemoryMiB: g.MemoryTotalMiB, ComputeCapability: g.ComputeCapability, UUID: g.UUID})
	}
	r.Summary = sum
	r.TimingsMS = map[string]float64{"watch_setup": r1(s.SetupMS)}
	if n := len(s.Samples); n > 0 {
		r.TimingsMS["watch"] = r1(1000 * s.Samples[n-1].Elapsed)
	}
	return r
}

// TextOptions are the text report's first lines for a watch: the root
// cause when there is one (report.Text's own first line), else the main
// verdict (busy, partly idle, nothing to blame); then what was watched.
// Each is said once.
func TextOptions(r *rules.Report) report.TextOptions {
	var verdict, summary *checks.Finding
	for i := range r.Findings {
		f := &r.Findings[i]
		switch {
		case f.ID == IDSummary:
			summary = f
		case r.RootCause == nil && verdict == nil && f.Cause != CauseThrottled && f.Check != IDMemory && f.Check != IDCompetition:
			verdict = f
		}
	}
	var o report.TextOptions
	if verdict != nil {
		mark := "✓"
		if verdict.Severity == checks.SevInfo {
			mark = "i"
		}
		o.Headline = fmt.Sprintf("%s %s [%s]", mark, verdict.Title, verdict.Cause)
	}
	if summary != nil {
		o.Lead = summary.Title
	}
	return o
}

// The metric families of a watch, beside the report's.
var (
	descWatchUtil = prometheus.NewDesc("doctor_watch_gpu_utilization_percent",
		"GPU utilisation over the watch (stat: mean, p50, p95).", []string{"gpu", "stat"}, nil)
	descWatchMem = prometheus.NewDesc("doctor_watch_gpu_memory_used_bytes",
		"Peak GPU memory used over the watch.", []string{"gpu"}, nil)
	descWatchJobCPU = prometheus.NewDesc("doctor_watch_job_cpu_percent",
		"The watched job's CPU use, percent of one core (mean).", nil, nil)
	descWatchBusiest = prometheus.NewDesc("doctor_watch_job_busiest_thread_percent",
		"The job's busiest thread, percent of one core (mean).", nil, nil)
	descWatchIOWait = prometheus.NewDesc("doctor_watch_system_iowait_percent",
		"The machine's iowait, percent of all CPUs (mean).", nil, nil)
	descWatchSamples = prometheus.NewDesc("doctor_watch_samples",
		"Samples taken.", nil, nil)
	descWatchSelf = prometheus.NewDesc("doctor_watch_self_cpu_percent",
		"doctor's own CPU use while sampling, percent of one core.", nil, nil)
)

// PrometheusCollector returns the sampled figures as Prometheus metrics,
// to be written beside report.PrometheusCollector's (node_exporter's
// textfile collector).
func PrometheusCollector(s *Series) prometheus.Collector {
	sum := Summarize(s)
	var m metrics.Set
	for _, g := range sum.GPUs {
		if g.Util.N == 0 {
			continue
		}
		idx := fmt.Sprint(g.Index)
		m.Gauge(descWatchUtil, g.Util.Mean, idx, "mean")
		m.Gauge(descWatchUtil, g.Util.P50, idx, "p50")
		m.Gauge(descWatchUtil, g.Util.P95, idx, "p95")
	}
	for _, g := range sum.GPUs {
		if g.MemUsedMiB.N > 0 {
			m.Gauge(descWatchMem, float64(uint64(g.MemUsedMiB.Max)<<20), fmt.Sprint(g.Index))
		}
	}
	if j := sum.Job; j != nil && j.CPUPercent.N > 0 {
		m.Gauge(descWatchJobCPU, j.CPUPercent.Mean)
		m.Gauge(descWatchBusiest, j.BusiestThreadPercent.Mean)
	}
	m.Gauge(descWatchIOWait, sum.System.IOWaitPercent.Mean)
	m.Gauge(descWatchSamples, float64(sum.Samples))
	if sum.SelfCPUPercent != nil {
		m.Gauge(descWatchSelf, *sum.SelfCPUPercent)
	}
	return &m
}
