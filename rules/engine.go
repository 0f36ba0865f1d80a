// Package rules turns evidence into a report: it runs the check library over
// a snapshot, orders findings along the chain and names the root cause; and
// (explain) it matches log signatures kept as data.
package rules

import (
	"fmt"
	"sort"
	"strings"
	"sync"
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
	// Causes are the independent causes: every failing finding that no
	// other explains (blocked_by null), the root cause first, then in chain
	// order; empty when nothing is wrong. An extension of v1.
	Causes []RootCause `json:"causes"`
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

// RootCause names a cause: the finding that explains the others (the root
// cause), or one of the independent causes.
type RootCause struct {
	ID    string  `json:"id"`
	Cause string  `json:"cause"`
	Title string  `json:"title"`
	Fix   *string `json:"fix"`
}

// Summary describes the machine in a few fields.
type Summary struct {
	OS         string       `json:"os"`
	Kernel     string       `json:"kernel"`
	WSL        int          `json:"wsl,omitempty"`
	Container  string       `json:"container,omitempty"`
	Driver     string       `json:"driver,omitempty"`
	CUDADriver string       `json:"cuda_driver,omitempty"`
	GPUs       []SummaryGPU `json:"gpus,omitempty"`
	// Python is the examined interpreter's version; TensorFlow the
	// TensorFlow that import would load ("2.16.1", or "tensorflow-cpu
	// 2.16.1" for another distribution); "" when not found or not examined.
	Python      string    `json:"python,omitempty"`
	TensorFlow  string    `json:"tensorflow,omitempty"`
	Hostname    string    `json:"hostname,omitempty"`
	User        string    `json:"user,omitempty"`
	CollectedAt time.Time `json:"collected_at"`
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
	registry := o.Checks
	if registry == nil {
		registry = checks.All
	}
	r := AssembleWith(findings, registry)
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

// Assemble orders findings along the chain, derives what explains what
// from the checks' Requires declarations (checks.All), names the root cause
// and lists every independent cause. It is shared by the diagnosis, explain
// and watch.
func Assemble(findings []checks.Finding) *Report {
	return AssembleWith(findings, checks.All)
}

// AssembleWith is Assemble with the registry whose declarations say what
// each finding rests on.
//
// A finding rests on what its check requires. A finding that no check of
// the registry produced (a log signature, a watch verdict) rests on what
// the lowest check that may report its cause label requires: "no NVML"
// from a log rests on what driver.nvml rests on; where that check narrows
// what the label rests on (checks.Check.CauseRequires: a failed import
// rests on the Python checks, not on the driver), on that. A failing finding is
// explained (blocked_by) by an error-severity finding lower on the chain
// (or earlier on the same link) of a check it requires, directly or
// through others; blocked_by then names the cause at
// the bottom of that explanation, so every explained finding points at one
// of the causes. Findings that nothing explains are causes: the root cause
// is the lowest on the chain (errors before warnings), and Causes lists
// them all, the root cause first, then in chain order. A warning explains
// nothing: a narrow PCIe link does not break what rests on the GPU.
func AssembleWith(findings []checks.Finding, registry []*checks.Check) *Report {
	// Order: by link, then the checks' registry order (stable).
	sort.SliceStable(findings, func(i, j int) bool {
		return findings[i].Link.Order() < findings[j].Link.Order()
	})
	r := &Report{Schema: ReportSchema, Status: "ok", Findings: findings, Causes: []RootCause{}}
	for i := range findings {
		findings[i].BlockedBy = nil
		switch findings[i].Severity {
		case checks.SevError:
			r.Status = "error"
		case checks.SevWarning:
			if r.Status == "ok" {
				r.Status = "warning"
			}
		}
	}
	g := newCausalGraph(registry)
	// explainers[i] are the error findings that finding i rests on.
	node := make([]string, len(findings))
	for i := range findings {
		node[i] = g.node(&findings[i])
	}
	explainer := make([]int, len(findings))
	for i := range findings {
		explainer[i] = -1
		if !findings[i].Failing() || node[i] == "" {
			continue
		}
		req := g.closure(node[i])
		for j := 0; j < i; j++ {
			if findings[j].Severity != checks.SevError || node[j] == "" || node[j] == node[i] || !req[baseNode(node[j])] {
				continue
			}
			explainer[i] = j // the first, i.e. lowest on the chain
			break
		}
	}
	// The bottom of each explanation. Requires is acyclic, so following
	// explainers ends; the step bound guards against a registry that is not.
	bottom := func(i int) int {
		for steps := 0; explainer[i] >= 0 && steps < len(findings); steps++ {
			i = explainer[i]
		}
		return i
	}
	for i := range findings {
		if explainer[i] >= 0 {
			id := findings[bottom(i)].ID
			findings[i].BlockedBy = &id
		}
	}
	root := -1
	for _, sev := range []checks.Severity{checks.SevError, checks.SevWarning} {
		for i := range findings {
			if findings[i].Severity == sev && findings[i].BlockedBy == nil {
				root = i
				break
			}
		}
		if root >= 0 {
			break
		}
	}
	if root < 0 {
		return r
	}
	r.RootCause = causeOf(&findings[root])
	r.Causes = append(r.Causes, *r.RootCause)
	for i := range findings {
		if i != root && findings[i].Failing() && findings[i].BlockedBy == nil {
			r.Causes = append(r.Causes, *causeOf(&findings[i]))
		}
	}
	return r
}

// walk returns every check that id requires, directly or through the
// checks it requires (not id itself).
func (g *causalGraph) walk(id string) map[string]bool {
	out := map[string]bool{}
	var visit func(c *checks.Check)
	visit = func(c *checks.Check) {
		for _, r := range c.Requires {
			if y := g.byID[r]; y != nil && !out[r] && r != id {
				out[r] = true
				visit(y)
			}
		}
	}
	if c := g.byID[id]; c != nil {
		visit(c)
	}
	return out
}

// RestsOn reports whether finding a rests on finding b: b's check (or the
// check that stands for b's cause label) is among what a's check requires,
// directly or through others, in checks.All.
func RestsOn(a, b *checks.Finding) bool {
	defaultGraphOnce.Do(func() { defaultGraph = newCausalGraph(checks.All) })
	na, nb := defaultGraph.node(a), defaultGraph.node(b)
	if na == "" || nb == "" || na == nb {
		return false
	}
	defaultGraphMu.Lock()
	defer defaultGraphMu.Unlock()
	return defaultGraph.closure(na)[baseNode(nb)]
}

var (
	defaultGraphOnce sync.Once
	defaultGraphMu   sync.Mutex
	defaultGraph     *causalGraph
)

func causeOf(f *checks.Finding) *RootCause {
	c := &RootCause{ID: f.ID, Cause: f.Cause, Title: f.Title}
	if len(f.Fixes) > 0 {
		id := f.Fixes[0].ID
		c.Fix = &id
	}
	return c
}

// causalGraph is the registry's Requires declarations, ready for lookups.
type causalGraph struct {
	byID    map[string]*checks.Check
	byCause map[string]string // cause label -> the lowest check that reports it
	closed  map[string]map[string]bool
	all     []*checks.Check
}

func newCausalGraph(registry []*checks.Check) *causalGraph {
	g := &causalGraph{byID: map[string]*checks.Check{}, byCause: map[string]string{}, closed: map[string]map[string]bool{}, all: registry}
	for _, c := range registry {
		g.byID[c.ID] = c
	}
	// The lowest check on the chain that may report a label stands for it
	// (registry order breaks ties: within a link, earlier is lower).
	ordered := append([]*checks.Check(nil), registry...)
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].Link.Order() < ordered[j].Link.Order() })
	for _, c := range ordered {
		for _, l := range c.Causes {
			if _, ok := g.byCause[l]; !ok && l != "healthy" {
				g.byCause[l] = c.ID
			}
		}
	}
	return g
}

// node is the check a finding rests on like: its own check, else the
// check that stands for its cause label; "" when neither is known. Where
// that check narrows what the label rests on (CauseRequires), the node is
// "<check>#<label>": it stands where the check stands (baseNode) and
// rests on the narrowed list only.
func (g *causalGraph) node(f *checks.Finding) string {
	if _, ok := g.byID[f.Check]; ok {
		return f.Check
	}
	id := g.byCause[f.Cause]
	if c := g.byID[id]; c != nil {
		if _, ok := c.CauseRequires[f.Cause]; ok {
			return id + "#" + f.Cause
		}
	}
	return id
}

// baseNode is the check a node stands for ("runtime.framework_matmul" for
// "runtime.framework_matmul#framework_import_failed").
func baseNode(n string) string {
	if i := strings.IndexByte(n, '#'); i >= 0 {
		return n[:i]
	}
	return n
}

func (g *causalGraph) closure(id string) map[string]bool {
	if c, ok := g.closed[id]; ok {
		return c
	}
	var c map[string]bool
	if i := strings.IndexByte(id, '#'); i >= 0 {
		// A narrowed label: what its list names, and what they require.
		c = map[string]bool{}
		if chk := g.byID[id[:i]]; chk != nil {
			for _, r := range chk.CauseRequires[id[i+1:]] {
				if g.byID[r] != nil && r != id[:i] {
					c[r] = true
					for x := range g.walk(r) {
						c[x] = true
					}
				}
			}
		}
	} else {
		c = g.walk(id)
	}
	g.closed[id] = c
	return c
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
	if py := s.Python; py != nil {
		sum.Python = py.Version
		if tf := py.TensorFlow; tf != nil && tf.Version != "" {
			sum.TensorFlow = tf.Version
			if tf.Dist != "" && tf.Dist != "tensorflow" {
				sum.TensorFlow = tf.Dist + " " + tf.Version
			}
		}
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
