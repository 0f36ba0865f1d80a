package rules

import (
	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
)

// explainFrameworkFailure is the step of Evaluate after the checks that
// reads the verification ladder's framework rung: when the runtime check
// could only say that the probe failed (a generic cause), the probe's
// standard error is read with explain's log signatures, so a failed
// TensorFlow import is named by the same engine as a pasted log. The
// ladder's own cause stays in the evidence (ladder_cause).
func explainFrameworkFailure(s *host.Snapshot, findings []checks.Finding) {
	if s.Verification == nil {
		return
	}
	r := s.Verification.Rung(host.RungFramework)
	if r == nil || r.Stderr == "" {
		return
	}
	var cause string
	for i := range findings {
		f := &findings[i]
		if f.Check != checks.VerifyFramework.ID || f.Severity != checks.SevError || !checks.GenericRungCause(f.Cause) {
			continue
		}
		if cause == "" {
			rep := ExplainText(r.Stderr)
			if rep == nil || rep.RootCause == nil {
				return
			}
			cause = rep.RootCause.Cause
			if cause == "" || cause == "benign_warning_only" || cause == "healthy" {
				return
			}
		}
		if _, ok := f.Evidence["ladder_cause"]; !ok {
			f.Evidence["ladder_cause"] = f.Cause
		}
		f.Cause = cause
		f.Fixes = checks.RungFixes(s, cause)
	}
}
