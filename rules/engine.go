// Package rules turns evidence into a report: it runs the check library over
// a snapshot, orders findings along the chain and names the root cause; and
// (explain) it matches log signatures kept as data.
package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
)

// ReportSchema is the JSON contract of a report.
const ReportSchema = "doctor.report/v1"

// Report is what doctor concluded, in the doctor.report/v1 shape.
type Report struct {
	Schema    string           `json:"schema"`
	Tool      host.Tool        `json:"tool"`
	Status    string           `json:"status"` // ok, warning, error
	RootCause *RootCause       `json:"root_cause"`
	Findings  []checks.Finding `json:"findings"`
	// Verification is the runtime ladder's result (null with --quick).
	Verification *host.Verification `json:"verification"`
	TimingsMS    map[string]float64 `json:"timings_ms"`
	// Summary is a short description of the machine (an extension of the
	// contract, for humans reading a pasted report).
	Summary *Summary `json:"summary,omitempty"`
	// Source says where the evidence came from: "live", "snapshot" or "log".
	Source string `json:"source,omitempty"`
	// Input says how much of a log was read (doctor explain).
	Input *LogInput `json:"input,omitempty"`
}

// RootCause names the finding that explains the others.
type RootCause struct {
	ID    string  `json:"id"`
	Cause string  `json:"cause"`
	Title string  `json:"title"`
	Fix   *string `json:"fix"`
}

// Summary describes the machine in a few fields.
type Summary struct {
	OS          string       `json:"os"`
	Kernel      string       `json:"kernel"`
	WSL         int          `json:"wsl,omitempty"`
	Container   string       `json:"container,omitempty"`
	Driver      string       `json:"driver,omitempty"`
	CUDADriver  string       `json:"cuda_driver,omitempty"`
	GPUs        []SummaryGPU `json:"gpus,omitempty"`
	Hostname    string       `json:"hostname,omitempty"`
	User        string       `json:"user,omitempty"`
	CollectedAt time.Time    `json:"collected_at"`
}

// SummaryGPU is one GPU in the summary.
type SummaryGPU struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	MemoryMiB         uint64 `json:"memory_mib"`
	ComputeCapability string `json:"compute_capability"`
	UUID              string `json:"uuid,omitempty"`
}

// Options selects checks.
type Options struct {
	// Only runs just these check IDs (--check); Skip leaves these out
	// (--skip). An ID may name a link ("driver") to select its checks.
	Only, Skip []string
	// Checks is the registry (default checks.All).
	Checks []*checks.Check
}

// UnknownCheckError is returned when --check or --skip names no check.
type UnknownCheckError struct{ ID string }

func (e *UnknownCheckError) Error() string {
	return fmt.Sprintf("unknown check %q (doctor rules lists them)", e.ID)
}

// SelectChecks applies Only and Skip to the registry.
func SelectChecks(o Options) ([]*checks.Check, error) {
	all := o.Checks
	if all == nil {
		all = checks.All
	}
	match := func(c *checks.Check, id string) bool {
		return c.ID == id || string(c.Link) == id || strings.HasPrefix(c.ID, id+".")
	}
	for _, id := range append(append([]string{}, o.Only...), o.Skip...) {
		found := false
		for _, c := range all {
			if match(c, id) {
				found = true
				break
			}
		}
		if !found {
			return nil, &UnknownCheckError{ID: id}
		}
	}
	var out []*checks.Check
	for _, c := range all {
		if len(o.Only) > 0 {
			keep := false
			for _, id := range o.Only {
				keep = keep || match(c, id)
			}
			if !keep {
				continue
			}
		}
		skip := false
		for _, id := range o.Skip {
			skip = skip || match(c, id)
		}
		if !skip {
			out = append(out, c)
		}
	}
	return out, nil
}

// Evaluate runs the selected checks over s and builds the report. Checks
// are pure: a check that panics becomes a finding, never a crash.
func Evaluate(s *host.Snapshot, o Options) (*Report, error) {
	list, err := SelectChecks(o)
	if err != nil {
		return nil, err
	}
	var findings []checks.Finding
	for _, c := range list {
		findings = append(findings, runCheck(c, s)...)
	}
	explainFrameworkFailure(s, findings)
	r := Assemble(findings)
	r.Tool = s.Tool
	r.Verification = s.Verification
	r.Summary = summarize(s)
	r.TimingsMS = map[string]float64{}
	for name, st := range s.Collectors {
		r.TimingsMS[name] = st.DurationMS
	}
	return r, nil
}

func runCheck(c *checks.Check, s *host.Snapshot) (out []checks.Finding) {
	defer func() {
		if p := recover(); p != nil {
			out = []checks.Finding{{
				ID: c.ID, Check: c.ID, Cause: "check_incomplete", Severity: checks.SevWarning, Link: c.Link,
				Title:    c.Title + ": the check crashed",
				Detail:   fmt.Sprintf("internal error: %v (please report it with this output)", p),
				Evidence: map[string]any{}, Fixes: []checks.Fix{},
			}}
		}
	}()
	return checks.Run(c, s)
}

// Assemble orders findings along the chain, names the root cause and folds
// what it explains under it. It is shared by the diagnosis and by explain.
func Assemble(findings []checks.Finding) *Report {
	// Order: by link, then the checks' registry order (stable).
	sort.SliceStable(findings, func(i, j int) bool {
		return findings[i].Link.Order() < findings[j].Link.Order()
	})
	r := &Report{Schema: ReportSchema, Status: "ok", Findings: findings}
	root := -1
	for _, sev := range []checks.Severity{checks.SevError, checks.SevWarning} {
		for i := range findings {
			if findings[i].Severity == sev {
				root = i
				break
			}
		}
		if root >= 0 {
			break
		}
	}
	for i := range findings {
		switch findings[i].Severity {
		case checks.SevError:
			r.Status = "error"
		case checks.SevWarning:
			if r.Status == "ok" {
				r.Status = "warning"
			}
		}
	}
	if root < 0 {
		return r
	}
	rf := findings[root]
	r.RootCause = &RootCause{ID: rf.ID, Cause: rf.Cause, Title: rf.Title}
	if len(rf.Fixes) > 0 {
		id := rf.Fixes[0].ID
		r.RootCause.Fix = &id
	}
	// A broken link explains the failures above it, and the other errors
	// of its own link (a missing module also fails NVML and nvidia-smi):
	// fold them under the root cause. A warning beside the root (a narrow
	// PCIe link next to ECC errors) is its own problem; warnings as root
	// explain nothing.
	if rf.Severity == checks.SevError {
		for i := range findings {
			f := &findings[i]
			if i == root || !f.Failing() || f.Link.Order() < rf.Link.Order() {
				continue
			}
			if f.Link == rf.Link && f.Severity != checks.SevError {
				continue
			}
			id := rf.ID
			f.BlockedBy = &id
		}
	}
	return r
}

func summarize(s *host.Snapshot) *Summary {
	sum := &Summary{
		OS: s.Platform.Distro, Kernel: s.Platform.Kernel, WSL: s.Platform.WSL.Version, Container: s.Platform.Container,
		Driver: s.NVML.DriverVersion, CUDADriver: host.CUDAVersionString(s.NVML.CUDADriverVersion),
		Hostname: s.Platform.Hostname, User: s.Platform.User, CollectedAt: s.CollectedAt,
	}
	if sum.Driver == "" {
		sum.Driver = s.Modules.KernelDriverVersion
	}
	for _, g := range s.NVML.GPUs {
		sum.GPUs = append(sum.GPUs, SummaryGPU{Index: g.Index, Name: g.Name, MemoryMiB: g.MemoryTotalMiB, ComputeCapability: g.ComputeCapability, UUID: g.UUID})
	}
	return sum
}

// ExitCode maps a report to the process exit code: 1 when any error-severity
// finding remains, else 0.
func (r *Report) ExitCode() int {
	if r.Status == "error" {
		return 1
	}
	return 0
}
