package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/report"
	"github.com/tfdoctor/doctor/rules"
)

// TestLogHeadlineUnexplainedFailure: a log whose recognised facts show no
// problem but that fails where nothing recognised explains it leads with
// the open question ("?"), not with a fact read from it ("✓").
func TestLogHeadlineUnexplainedFailure(t *testing.T) {
	r := rules.ExplainText("Python 3.10.12\n$ python app.py\nAttributeError: /opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef\n")
	var b bytes.Buffer
	if err := report.Text(&b, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	if !strings.HasPrefix(first, "? Line 3 shows a failure") {
		t.Errorf("headline %q, want the unexplained failure", first)
	}
}
