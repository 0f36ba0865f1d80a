package watch

import (
	"fmt"
	"io"
	"strings"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
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

// WritePrometheus writes the sampled figures in the Prometheus text format,
// to follow report.Prometheus (node_exporter's textfile collector).
func WritePrometheus(w io.Writer, s *Series) error {
	sum := Summarize(s)
	var b strings.Builder
	gauge := func(name, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	}
	gauge("doctor_watch_gpu_utilization_percent", "GPU utilisation over the watch (stat: mean, p50, p95).")
	for _, g := range sum.GPUs {
		if g.Util.N == 0 {
			continue
		}
		for _, st := range []struct {
			k string
			v float64
		}{{"mean", g.Util.Mean}, {"p50", g.Util.P50}, {"p95", g.Util.P95}} {
			fmt.Fprintf(&b, "doctor_watch_gpu_utilization_percent{gpu=\"%d\",stat=%q} %g\n", g.Index, st.k, st.v)
		}
	}
	gauge("doctor_watch_gpu_memory_used_bytes", "Peak GPU memory used over the watch.")
	for _, g := range sum.GPUs {
		if g.MemUsedMiB.N > 0 {
			fmt.Fprintf(&b, "doctor_watch_gpu_memory_used_bytes{gpu=\"%d\"} %d\n", g.Index, uint64(g.MemUsedMiB.Max)<<20)
		}
	}
	if j := sum.Job; j != nil && j.CPUPercent.N > 0 {
		gauge("doctor_watch_job_cpu_percent", "The watched job's CPU use, percent of one core (mean).")
		fmt.Fprintf(&b, "doctor_watch_job_cpu_percent %g\n", j.CPUPercent.Mean)
		gauge("doctor_watch_job_busiest_thread_percent", "The job's busiest thread, percent of one core (mean).")
		fmt.Fprintf(&b, "doctor_watch_job_busiest_thread_percent %g\n", j.BusiestThreadPercent.Mean)
	}
	gauge("doctor_watch_system_iowait_percent", "The machine's iowait, percent of all CPUs (mean).")
	fmt.Fprintf(&b, "doctor_watch_system_iowait_percent %g\n", sum.System.IOWaitPercent.Mean)
	gauge("doctor_watch_samples", "Samples taken.")
	fmt.Fprintf(&b, "doctor_watch_samples %d\n", sum.Samples)
	if sum.SelfCPUPercent != nil {
		gauge("doctor_watch_self_cpu_percent", "doctor's own CPU use while sampling, percent of one core.")
		fmt.Fprintf(&b, "doctor_watch_self_cpu_percent %g\n", *sum.SelfCPUPercent)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
