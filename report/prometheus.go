package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/rules"
)

// Prometheus writes the report in the Prometheus text exposition format, for
// node_exporter's textfile collector on GPU fleets.
func Prometheus(w io.Writer, r *rules.Report) error {
	var b strings.Builder
	status := map[string]int{"ok": 0, "warning": 1, "error": 2}[r.Status]
	b.WriteString("# HELP doctor_status Overall status: 0 ok, 1 warning, 2 error.\n# TYPE doctor_status gauge\n")
	fmt.Fprintf(&b, "doctor_status %d\n", status)
	b.WriteString("# HELP doctor_root_cause The root cause (1) by cause label; absent when healthy.\n# TYPE doctor_root_cause gauge\n")
	if r.RootCause != nil {
		fmt.Fprintf(&b, "doctor_root_cause{id=%q,cause=%q} 1\n", r.RootCause.ID, r.RootCause.Cause)
	}
	b.WriteString("# HELP doctor_cause One series per independent cause (root=\"true\" for the root cause); none when healthy.\n# TYPE doctor_cause gauge\n")
	for i, c := range r.Causes {
		fmt.Fprintf(&b, "doctor_cause{id=%q,cause=%q,root=%q} 1\n", c.ID, c.Cause, fmt.Sprint(i == 0))
	}
	b.WriteString("# HELP doctor_finding One series per failing finding.\n# TYPE doctor_finding gauge\n")
	for _, f := range r.Findings {
		if !f.Failing() {
			continue
		}
		blocked := "false"
		if f.BlockedBy != nil {
			blocked = "true"
		}
		fmt.Fprintf(&b, "doctor_finding{id=%q,cause=%q,severity=%q,link=%q,blocked=%q} 1\n", f.ID, f.Cause, f.Severity, f.Link, blocked)
	}
	if r.Summary != nil {
		b.WriteString("# HELP doctor_gpu_memory_bytes Total memory of each GPU.\n# TYPE doctor_gpu_memory_bytes gauge\n")
		for _, g := range r.Summary.GPUs {
			fmt.Fprintf(&b, "doctor_gpu_memory_bytes{gpu=\"%d\",name=%q,compute_capability=%q} %d\n", g.Index, g.Name, g.ComputeCapability, g.MemoryMiB<<20)
		}
	}
	b.WriteString("# HELP doctor_collector_duration_seconds Time each collector took.\n# TYPE doctor_collector_duration_seconds gauge\n")
	names := make([]string, 0, len(r.TimingsMS))
	for n := range r.TimingsMS {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "doctor_collector_duration_seconds{collector=%q} %g\n", n, r.TimingsMS[n]/1000)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
