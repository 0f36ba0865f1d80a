package fixes

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/rules"
)

// StepKind says what a step does.
type StepKind string

const (
	// KindWrite replaces a file with Content (creating it if absent).
	KindWrite StepKind = "write"
	// KindComment disables the line Line of a file, which must read Text.
	KindComment StepKind = "comment"
	// KindBlock sets doctor's marked block Block in a file to Body (added
	// at the end, or replaced where it is), leaving the rest as it is then.
	KindBlock StepKind = "block"
	// KindPreserve backs up a file that a following run step may change,
	// so that undo can restore it.
	KindPreserve StepKind = "preserve"
	// KindRun runs Argv (never through a shell).
	KindRun StepKind = "run"
	// KindSignal stops a process: SIGTERM, then SIGKILL after a grace period.
	KindSignal StepKind = "signal"
)

// Step is one action of a plan, as data.
type Step struct {
	Kind StepKind `json:"kind"`
	// Why says in a few words what the step is for.
	Why string `json:"why,omitempty"`
	// NeedsRoot steps run only as root.
	NeedsRoot bool `json:"needs_root,omitempty"`

	// Path is the file a write, comment or preserve step acts on.
	Path string `json:"path,omitempty"`
	// Content is the full new content of a write step; Old what the file
	// held when planned (nil: it did not exist). Apply refuses to write
	// over a file that changed since.
	Content []byte `json:"-"`
	Old     []byte `json:"-"`
	// Mode is the permission of a file a write step creates.
	Mode os.FileMode `json:"-"`
	// Line (1-based), Text (the exact line) and New (its replacement) of a
	// comment step.
	Line int    `json:"line,omitempty"`
	Text string `json:"-"`
	New  string `json:"-"`

	// Block and Body of a block step.
	Block string `json:"block,omitempty"`
	Body  string `json:"-"`

	// Argv is the command of a run step.
	Argv []string `json:"argv,omitempty"`

	// Proc is the process a signal step stops.
	Proc *Process `json:"process,omitempty"`
}

// Plan is what one fix would do here.
type Plan struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Finding is the finding that asked for the fix, and its title.
	Finding      string      `json:"finding,omitempty"`
	FindingTitle string      `json:"finding_title,omitempty"`
	Risk         checks.Risk `json:"risk"`
	// NeedsRoot is true when every step needs root.
	NeedsRoot bool   `json:"needs_root"`
	Steps     []Step `json:"steps"`
	// Notes are printed instructions: what the user must do by hand (this
	// shell, a reboot, the Windows side).
	Notes []string `json:"notes,omitempty"`
	// Manual plans are printed only; doctor cannot apply them.
	Manual bool `json:"manual,omitempty"`
	// Refused says why this fix must not be applied here ("" when it may).
	Refused string `json:"refused,omitempty"`
	// Done says why nothing needs doing (already fixed).
	Done string `json:"done,omitempty"`
	// Env is how a new shell's environment differs once the plan is
	// applied (nil value: unset). Used to examine the machine again.
	Env map[string]*string `json:"-"`

	fix checks.Fix
}

// Applicable reports whether the plan has steps doctor may run.
func (p *Plan) Applicable() bool {
	return !p.Manual && p.Refused == "" && len(p.Steps) > 0
}

func (p *Plan) refuse(format string, a ...any) *Plan {
	p.Refused = fmt.Sprintf(format, a...)
	p.Steps = nil
	return p
}

func (p *Plan) note(format string, a ...any) { p.Notes = append(p.Notes, fmt.Sprintf(format, a...)) }

func (p *Plan) add(s Step) {
	if p.NeedsRoot {
		s.NeedsRoot = true
	}
	p.Steps = append(p.Steps, s)
}

func (p *Plan) param(k string) string { return p.fix.Params[k] }

// planners maps every fix ID doctor can apply to the function that plans
// it here. What is true of the fix everywhere (its title, least risk,
// needs-root, parameters) is in the one fix catalog, checks.LookupFix.
var planners = map[string]func(m *Machine, p *Plan){
	checks.FixUnsetCUDAVisibleDevices: planUnsetCUDAVisibleDevices,
	checks.FixLDLibraryPath:           planLDLibraryPath,
	checks.FixTFAllowGrowth:           planTFAllowGrowth,
	checks.FixXLACudaDataDir:          planXLACudaDataDir,
	checks.FixPipInstallTensorFlow:    planPipInstall,
	checks.FixPipUninstall:            planPipUninstall,
	checks.FixIpykernelInstall:        planIpykernel,
	checks.FixCondaReinstall:          planCondaReinstall,
	checks.FixStopGPUProcess:          planStopProcess,
	checks.FixBlacklistNouveau:        planBlacklistNouveau,
	checks.FixLoadNvidiaUVM:           planLoadUVM,
	checks.FixCreateDeviceNodes:       planDeviceNodes,
	checks.FixModprobeNvidia:          planModprobeNvidia,
	checks.FixDeviceGroup:             planDeviceGroup,
	checks.FixDKMSRebuild:             planDKMSRebuild,
	checks.FixInstallDriver:           planInstallDriver,
	checks.FixWSLRemoveLinuxDriver:    planWSLRemoveDriver,
	checks.FixWSLLdConf:               planWSLLdConf,
}

// KnownIDs lists every fix ID of the catalog, applicable ones first, each
// sorted.
func KnownIDs() []string {
	var out []string
	for _, s := range checks.FixCatalog() {
		out = append(out, s.ID)
	}
	return out
}

// Known reports whether id is a fix ID.
func Known(id string) bool { _, ok := checks.LookupFix(id); return ok }

// CanApply reports whether doctor can apply id (it is not manual-only).
func CanApply(id string) bool {
	s, ok := checks.LookupFix(id)
	return ok && !s.Manual && planners[id] != nil
}

// UnknownFixError is returned when a fix ID named on the command line is
// not one doctor knows.
type UnknownFixError struct{ ID string }

func (e *UnknownFixError) Error() string {
	return fmt.Sprintf("unknown fix %q; known fixes: %s", e.ID, strings.Join(KnownIDs(), ", "))
}

// Build plans the fixes the report's failing findings carry. Without names
// it plans the fixes of every cause (the root cause and each independent
// cause: findings with no blocked_by), in dependency order; findings a
// cause explains (BlockedBy) are left for a later run, since what they rest
// on is fixed first and they often go away with it. With names, only those
// fix IDs are planned, blocked findings included; unknown names are an
// error, and names no finding asks for are returned in unused.
func Build(m *Machine, r *rules.Report, names []string) (plans []*Plan, unused []string, err error) {
	want := map[string]bool{}
	for _, n := range names {
		if !Known(n) {
			return nil, nil, &UnknownFixError{ID: n}
		}
		want[n] = true
	}
	used := map[string]bool{}
	seen := map[string]bool{}
	var todo []*checks.Finding
	for i := range r.Findings {
		f := &r.Findings[i]
		if !f.Failing() || len(want) == 0 && f.BlockedBy != nil {
			continue
		}
		todo = append(todo, f)
	}
	for _, f := range dependencyOrder(todo) {
		for _, fx := range f.Fixes {
			if len(want) > 0 && !want[fx.ID] {
				continue
			}
			key := fixKey(fx)
			if seen[key] {
				continue
			}
			seen[key] = true
			used[fx.ID] = true
			plans = append(plans, PlanFix(m, fx, f))
		}
	}
	for _, n := range names {
		if !used[n] && !contains(unused, n) {
			unused = append(unused, n)
		}
	}
	return plans, unused, nil
}

// dependencyOrder orders findings so that a finding's fixes come after the
// fixes of every finding it rests on (the driver install before anything
// that assumes a driver), keeping the chain order otherwise.
func dependencyOrder(fs []*checks.Finding) []*checks.Finding {
	out := make([]*checks.Finding, 0, len(fs))
	done := make([]bool, len(fs))
	for len(out) < len(fs) {
		progress := false
		for i, f := range fs {
			if done[i] {
				continue
			}
			ready := true
			for j, g := range fs {
				if !done[j] && j != i && rules.RestsOn(f, g) {
					ready = false
					break
				}
			}
			if ready {
				out, done[i], progress = append(out, f), true, true
				break
			}
		}
		if !progress { // a cycle cannot be declared (checks.Validate); be safe
			for i, f := range fs {
				if !done[i] {
					out, done[i] = append(out, f), true
				}
			}
		}
	}
	return out
}

// Deferred counts the failing findings that Build leaves for a later run
// because a cause explains them.
func Deferred(r *rules.Report) int {
	n := 0
	for _, f := range r.Findings {
		if f.Failing() && f.BlockedBy != nil && len(f.Fixes) > 0 {
			n++
		}
	}
	return n
}

// fixKey identifies a fix with its parameters, so one fix that several
// findings carry is planned once.
func fixKey(fx checks.Fix) string {
	keys := make([]string, 0, len(fx.Params))
	for k := range fx.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(fx.ID)
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", k, fx.Params[k])
	}
	if _, ok := planners[fx.ID]; !ok {
		b.WriteString("\x00" + strings.Join(fx.Steps, "\x00"))
	}
	return b.String()
}

// PlanFix plans one fix for one finding (f may be nil).
func PlanFix(m *Machine, fx checks.Fix, f *checks.Finding) *Plan {
	// The catalog's risk and needs-root are the least a plan carries: a
	// finding (or the planner, on what it sees here) may raise them.
	fx = checks.Normalize(fx)
	p := &Plan{ID: fx.ID, Title: fx.Title, Risk: checks.MaxRisk(fx.Risk, ""), NeedsRoot: fx.NeedsRoot, fix: fx}
	if f != nil {
		p.Finding, p.FindingTitle = f.ID, f.Title
	}
	plan, ok := planners[fx.ID]
	if !ok || fx.Manual {
		p.Manual = true
		p.Notes = append(p.Notes, fx.Steps...)
		return p
	}
	plan(m, p)
	refuseReadOnly(p)
	p.Risk = checks.MaxRisk(p.Risk, fx.Risk) // a planner raises, never lowers
	if p.Refused == "" && p.Done == "" && len(p.Steps) == 0 && !p.Manual {
		if len(p.Notes) > 0 {
			p.Manual = true // only instructions are left
		} else {
			p.Done = "nothing to change"
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func strp(s string) *string { return &s }
