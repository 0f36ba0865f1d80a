package report

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/metrics"
	"github.com/tfdoctor/doctor/rules"
)

// The metric families of a report. Every name, help text and label set is
// declared once here; README.md ("Fleets") lists them for operators.
var (
	descStatus = prometheus.NewDesc("doctor_status",
		"Overall status: 0 ok, 1 warning, 2 error.", nil, nil)
	descRootCause = prometheus.NewDesc("doctor_root_cause",
		"The root cause (1) by finding ID and cause label; absent when nothing is wrong.", []string{"id", "cause"}, nil)
	descCause = prometheus.NewDesc("doctor_cause",
		"Every independent cause (1), root=\"true\" for the root cause; absent when nothing is wrong.", []string{"id", "cause", "root"}, nil)
	descFinding = prometheus.NewDesc("doctor_finding",
		"Failing findings (errors and warnings) with these labels; blocked is true when the root cause explains the finding.",
		[]string{"id", "cause", "severity", "link", "blocked"}, nil)
	descGPUInfo = prometheus.NewDesc("doctor_gpu_info",
		"Each GPU NVML reports (1), with its model and compute capability.", []string{"gpu", "name", "compute_capability"}, nil)
	descGPUMemory = prometheus.NewDesc("doctor_gpu_memory_bytes",
		"Total memory of each GPU.", []string{"gpu"}, nil)
	descDriverInfo = prometheus.NewDesc("doctor_driver_info",
		"The NVIDIA driver version and the CUDA version it supports (1); absent when no driver was found.",
		[]string{"driver_version", "cuda_version"}, nil)
	descRungPassed = prometheus.NewDesc("doctor_ladder_rung_passed",
		"1 when the verification ladder's rung passed, 0 when it failed; absent when it was skipped or the ladder did not run (--quick).",
		[]string{"rung"}, nil)
	descRungDuration = prometheus.NewDesc("doctor_ladder_rung_duration_seconds",
		"Wall time of each rung of the verification ladder that ran.", []string{"rung"}, nil)
	descTFLOPS = prometheus.NewDesc("doctor_ladder_tflops",
		"Measured matrix-product throughput in TFLOP/s (median after warm-up), by rung, data type and size (MxNxK).",
		[]string{"rung", "dtype", "size"}, nil)
	descExpectedTFLOPS = prometheus.NewDesc("doctor_ladder_expected_tflops",
		"The GPU model's datasheet dense peak for the same product; absent when the model is not in doctor's table.",
		[]string{"rung", "dtype", "size"}, nil)
	descCorrect = prometheus.NewDesc("doctor_ladder_result_correct",
		"1 when every checked entry of the product matched a float64 CPU reference, else 0.",
		[]string{"rung", "dtype", "size"}, nil)
	descCollector = prometheus.NewDesc("doctor_collector_duration_seconds",
		"Time each collector took to gather its evidence.", []string{"collector"}, nil)
	descLastRun = prometheus.NewDesc("doctor_last_run_timestamp_seconds",
		"Unix time at which the evidence of this report was collected.", nil, nil)
	descBuild = prometheus.NewDesc("doctor_build_info",
		"The doctor that wrote these metrics (1).", []string{"version"}, nil)
)

// PrometheusCollector returns the metrics of r as a prometheus.Collector,
// for a registry of the caller's (doctor watch adds its own beside it).
// The last-run time is the report's collection time, or now when the
// report does not say (a log read by explain).
func PrometheusCollector(r *rules.Report, now time.Time) prometheus.Collector {
	var s metrics.Set
	status := map[string]float64{"ok": 0, "warning": 1, "error": 2}[r.Status]
	s.Gauge(descStatus, status)
	if r.RootCause != nil {
		s.Gauge(descRootCause, 1, r.RootCause.ID, r.RootCause.Cause)
	}
	for i, c := range r.Causes {
		s.Gauge(descCause, 1, c.ID, c.Cause, fmt.Sprint(i == 0))
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if !f.Failing() {
			continue
		}
		s.Count(descFinding, 1, f.ID, f.Cause, string(f.Severity), string(f.Link), fmt.Sprint(f.BlockedBy != nil))
	}
	if sum := r.Summary; sum != nil {
		for _, g := range sum.GPUs {
			idx := fmt.Sprint(g.Index)
			s.Gauge(descGPUInfo, 1, idx, g.Name, g.ComputeCapability)
			s.Gauge(descGPUMemory, float64(g.MemoryMiB)*(1<<20), idx)
		}
		if sum.Driver != "" {
			s.Gauge(descDriverInfo, 1, sum.Driver, sum.CUDADriver)
		}
		if !sum.CollectedAt.IsZero() {
			now = sum.CollectedAt
		}
	}
	if v := r.Verification; v != nil {
		for _, rung := range v.Rungs {
			switch rung.Status {
			case host.RungPass:
				s.Gauge(descRungPassed, 1, rung.Name)
			case host.RungFail:
				s.Gauge(descRungPassed, 0, rung.Name)
			default:
				continue
			}
			s.Gauge(descRungDuration, rung.DurationMS/1000, rung.Name)
			for _, f := range rung.Figures {
				size := fmt.Sprintf("%dx%dx%d", f.M, f.N, f.K)
				s.Gauge(descTFLOPS, f.TFLOPS, rung.Name, f.DType, size)
				if f.ExpectedTFLOPS > 0 {
					s.Gauge(descExpectedTFLOPS, f.ExpectedTFLOPS, rung.Name, f.DType, size)
				}
				s.Gauge(descCorrect, map[bool]float64{true: 1}[f.Correct], rung.Name, f.DType, size)
			}
		}
	}
	names := make([]string, 0, len(r.TimingsMS))
	for n := range r.TimingsMS {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s.Gauge(descCollector, r.TimingsMS[n]/1000, n)
	}
	s.Gauge(descLastRun, float64(now.UnixMilli())/1000)
	s.Gauge(descBuild, 1, r.Tool.Version)
	return &s
}

// Prometheus writes the report in the Prometheus text exposition format,
// for node_exporter's textfile collector on GPU fleets.
func Prometheus(w io.Writer, r *rules.Report) error {
	return metrics.Write(w, PrometheusCollector(r, time.Now()))
}
