package rules

import (
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
)

// Issue 12, item 13: doctor explain names every catalog Xid (68, 69, 109,
// 121, 140, 143 and 154 were "unknown Xid") and reads Xid 154's recovery
// action.
func TestExplainXidCatalog(t *testing.T) {
	log := strings.Join([]string{
		"[ 100.1] NVRM: Xid (PCI:0000:17:00): 68, pid=1234, name=python, NVDEC0 Exception",
		"[ 100.2] NVRM: Xid (PCI:0000:17:00): 69, pid=1234, name=python, Class Error",
		"[ 100.3] NVRM: Xid (PCI:0000:17:00): 109, pid=1234, name=python, Ctx switch timeout",
		"[ 100.4] NVRM: Xid (PCI:0000:17:00): 121, C2C Error",
		"[ 100.5] NVRM: Xid (PCI:0000:17:00): 140, ECC Unrecovered Error",
		"[ 100.6] NVRM: Xid (PCI:0000:17:00): 143, GPU Initialization Error",
		"[ 100.7] NVRM: Xid (PCI:0000:17:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
	}, "\n") + "\n"
	r, err := Explain(strings.NewReader(log), ExplainOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range r.Findings {
		if !strings.HasPrefix(f.Title, "Xid ") {
			continue
		}
		seen++
		if strings.Contains(f.Title, "unknown") || strings.Contains(f.Detail, "outside NVIDIA's catalog") {
			t.Errorf("%s: %q", f.ID, f.Title)
		}
		if strings.HasPrefix(f.Title, "Xid 154") && (f.Severity != checks.SevError || !strings.Contains(f.Title, "GPU Reset Required")) {
			t.Errorf("154: %s %q", f.Severity, f.Title)
		}
	}
	if seen < 7 {
		var titles []string
		for _, f := range r.Findings {
			titles = append(titles, f.Title)
		}
		t.Errorf("%d Xid findings: %q", seen, titles)
	}
}

// Issue 12, item 2: a Blackwell GPU's missing kernels are a known failure,
// not a slow first start; the fix is what works today (secondary), the
// unverified part is only named.
func TestExplainBlackwell(t *testing.T) {
	r := explainFile(t, "testdata/explain/logs/unsupported_compute_capability/blackwell_invalid_ptx.log")
	if r.RootCause == nil || r.RootCause.Cause != "unsupported_compute_capability" {
		t.Fatalf("root cause %+v", r.RootCause)
	}
	for _, f := range r.Findings {
		if f.Cause != "unsupported_compute_capability" {
			continue
		}
		if f.Severity != checks.SevError || !strings.Contains(f.Detail, "CUDA_ERROR_INVALID_PTX") || !strings.Contains(f.Detail, "Not verified") {
			t.Errorf("%s: %s %q", f.ID, f.Severity, f.Detail)
		}
		for _, fx := range f.Fixes {
			for _, st := range fx.Steps {
				if strings.Contains(st, "nightly") || strings.Contains(st, "newest TensorFlow") {
					t.Errorf("%s: fix step %q (no release or nightly works on Blackwell)", f.ID, st)
				}
			}
		}
	}
}
