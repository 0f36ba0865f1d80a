package report

import (
	"encoding/json"
	"io"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/rules"
)

// JSON writes the report in the doctor.report/v1 shape. Slices and maps are
// never null, so scripts can iterate without checks; blocked_by and
// root_cause are null when empty, as the contract says.
func JSON(w io.Writer, r *rules.Report) error {
	out := *r
	out.Findings = append([]checks.Finding{}, r.Findings...)
	for i := range out.Findings {
		f := &out.Findings[i]
		if f.Evidence == nil {
			f.Evidence = map[string]any{}
		}
		fixes := append([]checks.Fix{}, f.Fixes...)
		for j := range fixes {
			if fixes[j].Steps == nil {
				fixes[j].Steps = []string{}
			}
		}
		f.Fixes = fixes
	}
	if out.TimingsMS == nil {
		out.TimingsMS = map[string]float64{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(&out)
}
