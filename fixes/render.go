package fixes

import (
	"fmt"
	"io"
	"strings"

	"github.com/tfdoctor/doctor/checks"
)

// PlanOptions controls how a plan is shown.
type PlanOptions struct {
	// IsRoot says whether needs-root steps will run (else their sudo
	// line is shown).
	IsRoot bool
	// Self is how to run doctor again, for sudo lines.
	Self string
	// Named are the fix IDs named on the command line.
	Named []string
	// NoLive says why commands and signals will not run ("" when they do).
	NoLive string
	// Grace is shown for signal steps.
	Grace string
}

// WillApply says whether doctor would apply p in this run, given a yes:
// not a refused, done or by-hand fix, not a dangerous fix left unnamed, not
// a command or signal under --root, not a root-only fix without root.
func (o PlanOptions) WillApply(p *Plan) bool {
	if !p.Applicable() || p.Done != "" {
		return false
	}
	if p.Risk == checks.RiskDangerous && !containsID(o.Named, p.ID) {
		return false
	}
	if o.NoLive != "" && !hasFileStep(p) {
		return false
	}
	return !p.NeedsRoot || o.IsRoot
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// WritePlan shows every plan in full: each file edit as the exact lines
// removed and added, each command as argv, each process with its PID, user,
// command and GPU memory, and what is left for a person to do.
func WritePlan(w io.Writer, plans []*Plan, o PlanOptions) {
	if len(plans) == 0 {
		fmt.Fprintln(w, "Nothing to fix: no failing finding carries a fix.")
		return
	}
	apply := 0
	for _, p := range plans {
		if o.WillApply(p) {
			apply++
		}
	}
	fmt.Fprintf(w, "Plan: %s, %d doctor can apply in this run. Nothing changes before you agree.\n", count(len(plans), "fix", "fixes"), apply)
	self := o.Self
	if self == "" {
		self = "doctor"
	}
	for i, p := range plans {
		fmt.Fprintln(w)
		tag := string(p.Risk)
		if p.Manual {
			tag = "by hand"
		}
		if p.NeedsRoot {
			tag += ", needs root"
		}
		fmt.Fprintf(w, "%d. %s  [%s; %s]\n", i+1, sanitize(p.Title), p.ID, tag)
		if p.FindingTitle != "" {
			fmt.Fprintf(w, "   for: %s\n", sanitize(p.FindingTitle))
		}
		switch {
		case p.Refused != "":
			fmt.Fprintf(w, "   not possible here: %s\n", sanitize(p.Refused))
		case p.Done != "":
			fmt.Fprintf(w, "   already done: %s\n", sanitize(p.Done))
		}
		for k, st := range p.Steps {
			writeStep(w, k, st, o)
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "   · %s\n", sanitize(n))
		}
		if !p.Applicable() {
			continue
		}
		if p.Risk == checks.RiskDangerous && !contains(o.Named, p.ID) {
			fmt.Fprintf(w, "   dangerous: applied only when named and confirmed: %s fix %s\n", self, p.ID)
		}
		if !o.IsRoot && needsRootSomewhere(p) {
			fmt.Fprintf(w, "   needs root: doctor changes nothing %sas this user; run: sudo %s\n", map[bool]string{true: "", false: "for the marked steps "}[p.NeedsRoot], displayArgv([]string{self, "fix", p.ID}))
		}
	}
	fmt.Fprintln(w)
}

func needsRootSomewhere(p *Plan) bool {
	for _, st := range p.Steps {
		if st.NeedsRoot {
			return true
		}
	}
	return false
}

func letter(k int) string {
	if k < 26 {
		return string(rune('a' + k))
	}
	return fmt.Sprintf("%d", k+1)
}

func writeStep(w io.Writer, k int, st Step, o PlanOptions) {
	root := ""
	if st.NeedsRoot {
		root = " (root)"
	}
	why := ""
	if st.Why != "" {
		why = ": " + st.Why
	}
	ind := "        "
	switch st.Kind {
	case KindComment:
		fmt.Fprintf(w, "   %s. edit %s, line %d%s%s (backed up first)\n", letter(k), sanitize(st.Path), st.Line, root, sanitize(why))
		fmt.Fprintf(w, "%s- %s\n%s+ %s\n", ind, sanitize(st.Text), ind, sanitize(st.New))
	case KindWrite, KindBlock:
		verb := "rewrite"
		if st.Kind == KindBlock {
			verb = "add doctor's block to"
		}
		if st.Old == nil && st.Kind == KindWrite {
			verb = "create"
		}
		fmt.Fprintf(w, "   %s. %s %s%s%s", letter(k), verb, sanitize(st.Path), root, sanitize(why))
		if st.Old != nil {
			fmt.Fprint(w, " (backed up first)")
		}
		fmt.Fprintln(w)
		writeDiff(w, ind, st.Old, st.Content)
	case KindPreserve:
		fmt.Fprintf(w, "   %s. back up %s%s%s\n", letter(k), sanitize(st.Path), root, sanitize(why))
	case KindRun:
		fmt.Fprintf(w, "   %s. run%s: %s\n", letter(k), root, displayArgv(st.Argv))
		if st.Why != "" {
			fmt.Fprintf(w, "%s(%s)\n", ind, sanitize(st.Why))
		}
		if st.NeedsRoot && !o.IsRoot {
			fmt.Fprintf(w, "%sas root: sudo %s\n", ind, displayArgv(st.Argv))
		}
		if o.NoLive != "" {
			fmt.Fprintf(w, "%snot run: %s\n", ind, o.NoLive)
		}
	case KindSignal:
		pr := st.Proc
		fmt.Fprintf(w, "   %s. stop PID %d: user %s, %s\n", letter(k), pr.PID, sanitize(orUnknown(pr.User)), gpuMem(pr))
		fmt.Fprintf(w, "%scommand: %s\n", ind, sanitize(shorten(pr.Command, 200)))
		g := o.Grace
		if g == "" {
			g = DefaultGrace.String()
		}
		fmt.Fprintf(w, "%sSIGTERM, then SIGKILL if it is still running after %s\n", ind, g)
		if o.NoLive != "" {
			fmt.Fprintf(w, "%snot run: %s\n", ind, o.NoLive)
		}
	}
}

// writeDiff shows the lines that differ between old and new: the common
// head and tail are left out, the rest shown as - and + lines.
func writeDiff(w io.Writer, ind string, old, new []byte) {
	a, b := splitLines(old), splitLines(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if pre > 0 || suf > 0 {
		fmt.Fprintf(w, "%s@ line %d\n", ind, pre+1)
	}
	for _, l := range a[pre : len(a)-suf] {
		t, eol := trimEOL(l)
		fmt.Fprintf(w, "%s- %s%s\n", ind, sanitize(t), noEOL(eol))
	}
	for _, l := range b[pre : len(b)-suf] {
		t, eol := trimEOL(l)
		fmt.Fprintf(w, "%s+ %s%s\n", ind, sanitize(t), noEOL(eol))
	}
}

func noEOL(eol string) string {
	if eol == "" {
		return "  (no newline at end)"
	}
	return ""
}

func count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// WriteOutcomes summarises what a session did.
func WriteOutcomes(w io.Writer, r *Result, self string) {
	if self == "" {
		self = "doctor"
	}
	fmt.Fprintln(w, "Done:")
	for _, o := range r.Outcomes {
		p := o.Plan
		switch o.State {
		case "applied":
			what := []string{}
			if n := len(o.Changed); n > 0 {
				what = append(what, count(n, "file changed", "files changed"))
			}
			if n := len(o.Ran); n > 0 {
				what = append(what, strings.Join(o.Ran, "; "))
			}
			if len(what) == 0 {
				what = append(what, "nothing needed changing")
			}
			fmt.Fprintf(w, "  ✓ %s: %s\n", p.ID, sanitize(strings.Join(what, ", ")))
		case "partial":
			fmt.Fprintf(w, "  ! %s: partly applied: %s\n", p.ID, sanitize(o.Reason))
		case "failed":
			fmt.Fprintf(w, "  ✗ %s: failed: %s\n", p.ID, sanitize(o.Reason))
		case "manual":
			fmt.Fprintf(w, "  · %s: by hand (see the plan)\n", p.ID)
		case "done":
			fmt.Fprintf(w, "  ✓ %s: already done (%s)\n", p.ID, sanitize(o.Reason))
		default:
			fmt.Fprintf(w, "  · %s: not applied (%s)\n", p.ID, sanitize(o.Reason))
		}
	}
	changed := false
	for _, o := range r.Outcomes {
		changed = changed || len(o.Changed) > 0
	}
	if r.Journal != "" {
		fmt.Fprintf(w, "Journal: %s\n", r.Journal)
	}
	if changed {
		fmt.Fprintf(w, "Every changed file was backed up there; undo the file changes: %s fix --undo\n", self)
	}
}
