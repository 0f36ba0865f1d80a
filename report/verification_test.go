package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	goldenpkg "github.com/tfdoctor/doctor/internal/golden"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenpkg.Check(t, filepath.Join("testdata", name), []byte(got))
}

func ladders() map[string]*host.Verification {
	dev := &host.RungDevice{Name: "NVIDIA H200", ComputeCapability: "9.0"}
	pass := &host.Verification{DurationMS: 4123, Rungs: []host.Rung{
		{Name: "driver", Status: "pass", DurationMS: 612, Device: dev,
			Summary: "PTX kernel compiled by the driver ran correctly on NVIDIA H200 (cc 9.0)"},
		{Name: "libraries", Status: "pass", DurationMS: 2210, Device: dev, Library: "/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13",
			Summary: "cuBLAS 13.0.0 8192³: bf16 771 TFLOP/s (of 989), tf32 402 TFLOP/s (of 494), fp32 51.2 TFLOP/s (of 67.0); results checked",
			Figures: []host.Figure{
				{DType: "bf16", M: 8192, N: 8192, K: 8192, TFLOPS: 771.2, ExpectedTFLOPS: 989, MedianMS: 1.426, Runs: 10, Timing: "cuda_events", Checked: 128, Correct: true},
				{DType: "tf32", M: 8192, N: 8192, K: 8192, TFLOPS: 402.3, ExpectedTFLOPS: 494, MedianMS: 2.733, Runs: 10, Timing: "cuda_events", Checked: 128, Correct: true},
				{DType: "fp32", M: 8192, N: 8192, K: 8192, TFLOPS: 51.2, ExpectedTFLOPS: 67, MedianMS: 21.47, Runs: 10, Timing: "cuda_events", Checked: 128, Correct: true},
			}},
		{Name: "framework", Status: "pass", DurationMS: 3980, Framework: "torch", FrameworkVersion: "2.11.0+cu130", Device: dev,
			Summary: "TensorFlow not installed; GPU stack verified with PyTorch 2.11.0+cu130: bf16 matmul 8192³ on cuda:0, 745 TFLOP/s (of 989); result checked",
			Figures: []host.Figure{{DType: "bf16", M: 8192, N: 8192, K: 8192, TFLOPS: 745.3, ExpectedTFLOPS: 989, MedianMS: 1.475, Runs: 10, PerSample: 14, Timing: "forced_completion", Checked: 16, Correct: true}}},
	}}
	fail := &host.Verification{DurationMS: 2310, Rungs: []host.Rung{
		{Name: "driver", Status: "fail", DurationMS: 95, Cause: "cuda_visible_devices_hides_gpu", API: "cuInit", Code: "CUDA_ERROR_NO_DEVICE",
			Summary: "cuInit failed: CUDA_ERROR_NO_DEVICE",
			Error:   "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected): CUDA_VISIBLE_DEVICES=\"-1\" hides every GPU from this process"},
		{Name: "libraries", Status: "fail", DurationMS: 101, Cause: "cuda_visible_devices_hides_gpu", API: "cuInit",
			Summary: "cuInit failed: CUDA_ERROR_NO_DEVICE", Error: "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"},
		{Name: "framework", Status: "fail", DurationMS: 2290, Cause: "cuda_visible_devices_hides_gpu", Framework: "tensorflow", FrameworkVersion: "2.20.0",
			Summary: "TensorFlow 2.20.0 does not see the GPU", Error: "TensorFlow lists no GPU (tf.config.list_physical_devices('GPU') is empty)",
			Stderr: "E0000 00:00:1712.1 cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\nI0000 cuda_diagnostics.cc:135] retrieving CUDA diagnostic information for host: box"},
	}}
	return map[string]*host.Verification{"pass": pass, "fail": fail}
}

func TestVerificationText(t *testing.T) {
	for name, v := range ladders() {
		var b strings.Builder
		writeVerification(&b, newPalette(false), &rules.Report{Verification: v}, 100) // a terminal 100 wide
		golden(t, "verification_"+name+".txt", b.String())
		for _, line := range strings.Split(b.String(), "\n") {
			if n := len([]rune(line)); n > 100+2 {
				t.Errorf("line of %d runes: %q", n, line)
			}
		}
		// Not a terminal: nothing is cut.
		var whole strings.Builder
		writeVerification(&whole, newPalette(false), &rules.Report{Verification: v}, 0)
		for _, g := range v.Rungs {
			if g.Status == host.RungFail && !strings.Contains(whole.String(), rungFirstLine(g.Error)) {
				t.Errorf("without a terminal the error is cut:\n%s", whole.String())
			}
		}
		if strings.Contains(whole.String(), "…") {
			t.Errorf("without a terminal a line is cut:\n%s", whole.String())
		}
	}
	var b strings.Builder
	writeVerification(&b, newPalette(false), &rules.Report{}, 100)
	if b.Len() != 0 {
		t.Errorf("no ladder, yet %q", b.String())
	}
}

func TestVerificationMarkdown(t *testing.T) {
	for name, v := range ladders() {
		var b strings.Builder
		mdVerification(&b, &rules.Report{Verification: v})
		golden(t, "verification_"+name+".md", b.String())
	}
}

// The JSON report carries the whole ladder, stderr included, and redaction
// reaches into it.
func TestVerificationJSON(t *testing.T) {
	v := ladders()["fail"]
	r := &rules.Report{Schema: rules.ReportSchema, Status: "error", Verification: v}
	var buf bytes.Buffer
	if err := JSON(&buf, Redact(r, Identity{Hostname: "box"})); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Verification host.Verification `json:"verification"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	rs := got.Verification.Rungs
	if len(rs) != 3 || rs[0].Code != "CUDA_ERROR_NO_DEVICE" || rs[2].Framework != "tensorflow" || !strings.Contains(rs[2].Stderr, "failed call to cuInit") {
		t.Fatalf("%+v", got.Verification)
	}
	if strings.Contains(rs[2].Stderr, "host: box") || !strings.Contains(rs[2].Stderr, "host: <host>") {
		t.Errorf("stderr not redacted: %q", rs[2].Stderr)
	}
	if !strings.Contains(buf.String(), `"verification": {`) {
		t.Error("no verification object")
	}
	// --quick: null, as the contract says.
	buf.Reset()
	if err := JSON(&buf, &rules.Report{Schema: rules.ReportSchema}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"verification": null`) {
		t.Errorf("%s", buf.String())
	}
}
