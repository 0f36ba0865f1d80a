package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// Severity orders how bad a finding is.
type Severity string

const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
	SevInfo    Severity = "info"
	SevOK      Severity = "ok"
)

// Rank orders severities: error first.
func (s Severity) Rank() int {
	switch s {
	case SevError:
		return 0
	case SevWarning:
		return 1
	case SevInfo:
		return 2
	}
	return 3
}

// Link is one link of the chain from the hardware up to TensorFlow.
type Link string

const (
	LinkPlatform    Link = "platform"
	LinkHardware    Link = "hardware"
	LinkKernel      Link = "kernel_module"
	LinkDriver      Link = "driver"
	LinkEnvironment Link = "environment"
	LinkLibraries   Link = "cuda_libraries"
	LinkPython      Link = "python_tensorflow"
	LinkRuntime     Link = "runtime"
	LinkPerformance Link = "performance"
)

// Links lists the chain from the bottom up. A break low in the chain
// explains every failure above it.
var Links = []Link{LinkPlatform, LinkHardware, LinkKernel, LinkDriver, LinkEnvironment, LinkLibraries, LinkPython, LinkRuntime, LinkPerformance}

// Order is a link's position in the chain (0 = lowest).
func (l Link) Order() int {
	for i, x := range Links {
		if x == l {
			return i
		}
	}
	return len(Links)
}

// Name is how the link is shown to people.
func (l Link) Name() string {
	switch l {
	case LinkPlatform:
		return "Platform"
	case LinkHardware:
		return "GPU hardware"
	case LinkKernel:
		return "Kernel module"
	case LinkDriver:
		return "Driver"
	case LinkEnvironment:
		return "Environment"
	case LinkLibraries:
		return "CUDA libraries"
	case LinkPython:
		return "Python & TensorFlow"
	case LinkRuntime:
		return "Runtime"
	case LinkPerformance:
		return "Performance"
	}
	return string(l)
}

// Risk says how careful one must be with a fix.
type Risk string

const (
	RiskSafe      Risk = "safe"
	RiskModerate  Risk = "moderate"
	RiskDangerous Risk = "dangerous"
)

// Fix is a repair for a finding: exact steps for a person, and the ID under
// which package fixes knows how to apply it. Manual fixes (a reboot, the
// Windows side, the BIOS) are only printed.
type Fix struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Risk      Risk     `json:"risk"`
	NeedsRoot bool     `json:"needs_root"`
	Steps     []string `json:"steps"`
	// Manual is true for fixes doctor cannot apply from here.
	Manual bool `json:"manual,omitempty"`
	// Params carries the values the applier needs (the PID to stop, the
	// interpreter to run pip with), so it never re-parses Steps.
	Params map[string]string `json:"params,omitempty"`
}

// Finding is one verdict of one check.
type Finding struct {
	ID       string         `json:"id"`
	Check    string         `json:"check"`
	Cause    string         `json:"cause"`
	Severity Severity       `json:"severity"`
	Link     Link           `json:"link"`
	Title    string         `json:"title"`
	Detail   string         `json:"detail"`
	Evidence map[string]any `json:"evidence"`
	// BlockedBy names the root-cause finding that explains this one.
	BlockedBy *string `json:"blocked_by"`
	Fixes     []Fix   `json:"fixes"`
	// Skipped is true when the check could not work here; Detail says why.
	Skipped bool `json:"skipped,omitempty"`
}

// Failing reports whether the finding is an error or a warning.
func (f *Finding) Failing() bool { return f.Severity == SevError || f.Severity == SevWarning }

// Check is one diagnosis, declared as a value: the registry can list,
// validate and filter checks without running them.
type Check struct {
	// ID is stable: scripts select checks with --check/--skip.
	ID    string
	Link  Link
	Title string
	// Causes are the labels this check may report.
	Causes []string
	// Doc says what the check looks at and why it matters.
	Doc string
	// Requires names what the check's verdict rests on, as go/analysis's
	// Analyzer.Requires does: other checks (by ID) and facts of the
	// snapshot (host.FactNames). A failure of a required check explains
	// this check's failures (the engine sets blocked_by from these
	// declarations, never from position on the chain); a required fact
	// that is unknown (its collector was skipped, failed or ran out of
	// time) makes this check report "not checked" instead of running.
	Requires []string
	// CauseRequires narrows Requires for one label the check may report,
	// where what that label names rests on less than the check's verdict
	// as a whole: a framework that fails to import fails before any GPU
	// call, so a driver fault does not explain it although the matmul
	// that follows the import rests on the driver. It applies to findings
	// that no check of the registry produced (a log signature stands on
	// the lowest check that may report its label): such a finding rests on
	// these checks, and on what they require, instead of on Requires. A
	// label absent here rests on Requires, as before.
	CauseRequires map[string][]string
	Run           func(*Pass)
}

// RequiredChecks returns the check IDs among c.Requires.
func (c *Check) RequiredChecks() []string {
	var out []string
	for _, r := range c.Requires {
		if !host.IsFact(r) {
			out = append(out, r)
		}
	}
	return out
}

// RequiredFacts returns the facts among c.Requires.
func (c *Check) RequiredFacts() []string {
	var out []string
	for _, r := range c.Requires {
		if host.IsFact(r) {
			out = append(out, r)
		}
	}
	return out
}

// Pass is one run of one check over one snapshot.
type Pass struct {
	Snap     *host.Snapshot
	check    *Check
	findings []Finding
}

// Run runs c over s and returns its findings. A check whose required
// facts are not all known does not run: it reports "not checked" with the
// facts that are unknown and why, never a verdict drawn from missing
// evidence.
func Run(c *Check, s *host.Snapshot) []Finding {
	p := &Pass{Snap: s, check: c}
	if why, ev := unknownFacts(c, s); why != "" {
		p.Skip(why).Evidence = ev
		return p.Findings()
	}
	c.Run(p)
	return p.Findings()
}

// NotCheckedKey is the evidence key that lists the unknown facts of a check
// that could not run.
const NotCheckedKey = "unknown_facts"

// unknownFacts says which required facts are unknown ("" when none).
func unknownFacts(c *Check, s *host.Snapshot) (string, Ev) {
	var names, whys []string
	for _, f := range c.RequiredFacts() {
		st := s.Fact(f)
		if st.Known() {
			continue
		}
		names = append(names, f)
		whys = append(whys, fmt.Sprintf("%s unknown (%s)", f, orDefault(st.Why, "no evidence")))
	}
	if len(names) == 0 {
		return "", nil
	}
	return strings.Join(whys, "; "), Ev{NotCheckedKey: names}
}

// NotChecked reports whether a finding says its check could not run for
// want of evidence.
func (f *Finding) NotChecked() bool {
	_, ok := f.Evidence[NotCheckedKey]
	return f.Skipped && ok
}

// Findings returns what the pass reported; a check that reported nothing
// gets one ok finding with its title.
func (p *Pass) Findings() []Finding {
	if len(p.findings) == 0 {
		p.OK(p.check.Title)
	}
	seen := map[string]int{}
	for i := range p.findings {
		f := &p.findings[i]
		if n := seen[f.ID]; n > 0 {
			f.ID = fmt.Sprintf("%s#%d", f.ID, n+1)
		}
		seen[f.ID]++
	}
	return p.findings
}

// Ev is evidence: a small map of facts that led to a finding.
type Ev = map[string]any

func (p *Pass) add(sev Severity, cause, title, detail string, ev Ev, fixes []Fix) *Finding {
	if ev == nil {
		ev = Ev{}
	}
	if fixes == nil {
		fixes = []Fix{}
	}
	for i := range fixes {
		fixes[i] = Normalize(fixes[i])
	}
	p.findings = append(p.findings, Finding{
		ID: p.check.ID, Check: p.check.ID, Cause: cause, Severity: sev, Link: p.check.Link,
		Title: title, Detail: detail, Evidence: ev, Fixes: fixes,
	})
	return &p.findings[len(p.findings)-1]
}

// Error reports a break that stops the GPU from being used.
func (p *Pass) Error(cause, title, detail string, ev Ev, fixes ...Fix) *Finding {
	return p.add(SevError, cause, title, detail, ev, fixes)
}

// Warn reports a problem that degrades or may break GPU use.
func (p *Pass) Warn(cause, title, detail string, ev Ev, fixes ...Fix) *Finding {
	return p.add(SevWarning, cause, title, detail, ev, fixes)
}

// Info reports a fact worth knowing that needs no action.
func (p *Pass) Info(cause, title, detail string, ev Ev) *Finding {
	return p.add(SevInfo, cause, title, detail, ev, nil)
}

// OK reports that this link is fine; title says what was seen.
func (p *Pass) OK(title string) *Finding {
	return p.add(SevOK, "healthy", title, "", nil, nil)
}

// OKf is OK with evidence.
func (p *Pass) OKf(title string, ev Ev) *Finding {
	return p.add(SevOK, "healthy", title, "", ev, nil)
}

// Skip reports that the check cannot work here, and why. A skip is never a
// failure.
func (p *Pass) Skip(reason string) *Finding {
	f := p.add(SevInfo, "healthy", p.check.Title+": not checked", reason, nil, nil)
	f.Skipped = true
	return f
}

// Validate checks a registry: unique IDs, a title, doc, link and run
// function, and cause labels from the knowledge base.
func Validate(all []*Check) error {
	var errs []string
	seen := map[string]bool{}
	for i, c := range all {
		if c == nil {
			errs = append(errs, fmt.Sprintf("check %d is nil", i))
			continue
		}
		if c.ID == "" || strings.ContainsAny(c.ID, " \t,") {
			errs = append(errs, fmt.Sprintf("check %d: bad ID %q", i, c.ID))
		}
		if seen[c.ID] {
			errs = append(errs, fmt.Sprintf("check %s: duplicate ID", c.ID))
		}
		seen[c.ID] = true
		if c.Title == "" || c.Doc == "" || c.Run == nil {
			errs = append(errs, fmt.Sprintf("check %s: needs Title, Doc and Run", c.ID))
		}
		if c.Link.Order() == len(Links) {
			errs = append(errs, fmt.Sprintf("check %s: unknown link %q", c.ID, c.Link))
		}
		if len(c.Causes) == 0 {
			errs = append(errs, fmt.Sprintf("check %s: declares no cause", c.ID))
		}
		for _, l := range c.Causes {
			if !knowledge.IsCause(l) {
				errs = append(errs, fmt.Sprintf("check %s: unknown cause label %q", c.ID, l))
			}
		}
	}
	errs = append(errs, validateRequires(all)...)
	sort.Strings(errs)
	if len(errs) > 0 {
		return fmt.Errorf("invalid check registry:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// Lookup finds a check by ID.
func Lookup(all []*Check, id string) *Check {
	for _, c := range all {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// validateRequires checks the Requires declarations: every name is a check
// of the registry or a fact (never both), no check requires itself or
// twice, and the checks' requirements form no cycle.
func validateRequires(all []*Check) []string {
	var errs []string
	// A registry may be a part of All (a test of one link): names are
	// looked up in both.
	byID := map[string]*Check{}
	for _, c := range append(append([]*Check{}, All...), all...) {
		if c != nil {
			byID[c.ID] = c
		}
	}
	for _, c := range all {
		if c == nil {
			continue
		}
		seen := map[string]bool{}
		for _, r := range c.Requires {
			_, isCheck := byID[r]
			switch {
			case r == c.ID:
				errs = append(errs, fmt.Sprintf("check %s: requires itself", c.ID))
			case seen[r]:
				errs = append(errs, fmt.Sprintf("check %s: requires %s twice", c.ID, r))
			case isCheck && host.IsFact(r):
				errs = append(errs, fmt.Sprintf("check %s: %q is both a check and a fact", c.ID, r))
			case !isCheck && !host.IsFact(r):
				errs = append(errs, fmt.Sprintf("check %s: requires %q, which is neither a check nor a fact (%s)", c.ID, r, strings.Join(host.FactNames(), ", ")))
			}
			seen[r] = true
		}
	}
	// Depth-first search for a cycle among the required checks.
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(id string) bool
	visit = func(id string) bool {
		switch color[id] {
		case grey:
			i := len(stack) - 1
			for i > 0 && stack[i] != id {
				i--
			}
			errs = append(errs, "requirement cycle: "+strings.Join(append(stack[i:], id), " -> "))
			return false
		case black:
			return true
		}
		color[id] = grey
		stack = append(stack, id)
		ok := true
		for _, r := range byID[id].Requires {
			if _, isCheck := byID[r]; isCheck && r != id && ok {
				ok = visit(r)
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return ok
	}
	for _, c := range all {
		if c != nil && color[c.ID] == white {
			visit(c.ID)
		}
	}
	return errs
}
