package rules

import "github.com/tfdoctor/doctor/checks"

// The verification ladder's framework rung keeps the probe's standard error;
// the runtime checks read it with explain's log signatures, so a failed
// TensorFlow import is named by the same engine as a pasted log.
func init() {
	checks.ExplainFrameworkLog = func(log string) (string, string, bool) {
		r := ExplainText(log)
		if r == nil || r.RootCause == nil {
			return "", "", false
		}
		return r.RootCause.Cause, r.RootCause.Title, true
	}
}
