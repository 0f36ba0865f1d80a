package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/internal/metrics"
	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
)

// parseExposition reads the text exposition back with Prometheus's own
// parser (the one node_exporter's textfile collector uses).
func parseExposition(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, b)
	}
	return mfs
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// HostileGPUNames are GPU names a hostile or broken machine could report;
// the integration test runs promtool over them too.
var hostileGPUNames = []string{
	"NVIDIA\tH200",
	`NVIDIA "H200" \ backslash`,
	"NVIDIA H200\nfake_metric 1",
	"NVIDIA H200\r\n# TYPE doctor_status counter",
	"invalid \xff\xfe UTF-8 \xc3",
	"nul\x00byte",
	"} 1\ndoctor_status{a=\"",
	strings.Repeat("long ", 1000),
	"",
}

func hostileReport() *rules.Report {
	r := rules.Assemble([]checks.Finding{{ID: "driver.nvml", Cause: "driver_missing", Severity: checks.SevError, Link: checks.LinkDriver, Title: "x"}})
	r.Tool = host.Tool{Name: "doctor", Version: "1.0\t\"beta\"\n"}
	r.Summary = &rules.Summary{Driver: "580.1\n", CUDADriver: "13.0", CollectedAt: time.Unix(1700000000, 0)}
	for i, n := range hostileGPUNames {
		r.Summary.GPUs = append(r.Summary.GPUs, rules.SummaryGPU{Index: i, Name: n, MemoryMiB: 1024, ComputeCapability: "9.0\t"})
	}
	// Two GPUs with the same index (a hand-edited snapshot) must not make
	// the registry refuse the exposition.
	r.Summary.GPUs = append(r.Summary.GPUs, rules.SummaryGPU{Index: 0, Name: "duplicate"})
	r.TimingsMS = map[string]float64{"nvml\n": 12}
	return r
}

func TestPrometheusHostileGPUNames(t *testing.T) {
	var b bytes.Buffer
	if err := report.Prometheus(&b, hostileReport()); err != nil {
		t.Fatal(err)
	}
	mfs := parseExposition(t, b.Bytes())
	if mfs["doctor_status"].GetMetric()[0].GetGauge().GetValue() != 2 {
		t.Errorf("doctor_status: got %v, want 2", mfs["doctor_status"])
	}
	got := map[string]string{}
	for _, m := range mfs["doctor_gpu_info"].GetMetric() {
		l := labels(m)
		got[l["gpu"]] = l["name"]
	}
	if len(got) != len(hostileGPUNames) {
		t.Errorf("%d GPUs in doctor_gpu_info, want %d (one per index)", len(got), len(hostileGPUNames))
	}
	for i, n := range hostileGPUNames {
		want := metrics.LabelValue(n)
		if g := got[string(rune('0'+i))]; i < 10 && g != want {
			t.Errorf("GPU %d: name label %q, want %q", i, g, want)
		}
	}
	if n := got["7"]; len([]rune(n)) != metrics.MaxLabelRunes || !strings.HasSuffix(n, "…") {
		t.Errorf("a long name is not cut to %d runes: %d", metrics.MaxLabelRunes, len([]rune(n)))
	}
	if strings.Contains(b.String(), "\nfake_metric") || mfs["fake_metric"] != nil {
		t.Error("a newline in a GPU name started a new sample line")
	}
	for _, name := range []string{"doctor_root_cause", "doctor_cause", "doctor_finding", "doctor_gpu_memory_bytes",
		"doctor_driver_info", "doctor_collector_duration_seconds", "doctor_last_run_timestamp_seconds", "doctor_build_info"} {
		if mfs[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	if v := mfs["doctor_last_run_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue(); v != 1700000000 {
		t.Errorf("doctor_last_run_timestamp_seconds = %v, want the collection time 1700000000", v)
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "plain",
		"a\xffb":     "a\uFFFDb",
		"tab\tquote": "tab\tquote",
	} {
		if got := metrics.LabelValue(in); got != want {
			t.Errorf("LabelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPrometheusLadder: the recorded H200 run with the ladder exports its
// figures by rung and dtype, pass/fail and the datasheet peak.
func TestPrometheusLadder(t *testing.T) {
	s, err := host.LoadSnapshot("../testdata/snapshots/h200-live/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rules.Evaluate(s, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Prometheus(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "h200-live.prom", b.Bytes())
	mfs := parseExposition(t, b.Bytes())
	passed := map[string]float64{}
	for _, m := range mfs["doctor_ladder_rung_passed"].GetMetric() {
		passed[labels(m)["rung"]] = m.GetGauge().GetValue()
	}
	for _, rung := range s.Verification.Rungs {
		want, ok := map[host.RungStatus]float64{host.RungPass: 1, host.RungFail: 0}[rung.Status]
		if got, present := passed[rung.Name]; present != ok || got != want {
			t.Errorf("rung %s (%s): doctor_ladder_rung_passed %v present=%v", rung.Name, rung.Status, got, present)
		}
	}
	tflops := map[string]float64{}
	for _, m := range mfs["doctor_ladder_tflops"].GetMetric() {
		l := labels(m)
		tflops[l["rung"]+"/"+l["dtype"]] = m.GetGauge().GetValue()
	}
	n := 0
	for _, rung := range s.Verification.Rungs {
		for _, fig := range rung.Figures {
			n++
			if got := tflops[rung.Name+"/"+fig.DType]; got != fig.TFLOPS {
				t.Errorf("%s/%s: doctor_ladder_tflops %v, want %v", rung.Name, fig.DType, got, fig.TFLOPS)
			}
		}
	}
	if n == 0 {
		t.Fatal("the recorded H200 run has no figures: the test proves nothing")
	}
	if mfs["doctor_ladder_expected_tflops"] == nil {
		t.Error("doctor_ladder_expected_tflops missing for an H200")
	}
}
