package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fatih/color"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

// TextOptions controls the terminal rendering.
type TextOptions struct {
	Color   bool
	Verbose bool
	// Width is the terminal's width: one-line summaries and evidence are
	// cut to fit it. 0 (not a terminal: a file, a pipe, a ticket): nothing
	// is cut.
	Width int
	// Command is the command line that made the report ("doctor",
	// "doctor explain FILE", "doctor verify"): the footer's pointers to -v
	// and to Markdown name it.
	Command string
	// Headline replaces the first line when there is no root cause (doctor
	// watch: its verdict, "GPU 0 busy …"); Lead is one line printed under
	// the first (doctor watch: what was watched). Both are plain text.
	Headline string
	Lead     string
}

type palette struct {
	red, yellow, green, cyan, bold, faint func(a ...any) string
}

func newPalette(on bool) palette {
	mk := func(attrs ...color.Attribute) func(a ...any) string {
		c := color.New(attrs...)
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c.SprintFunc()
	}
	return palette{
		red: mk(color.FgRed, color.Bold), yellow: mk(color.FgYellow), green: mk(color.FgGreen),
		cyan: mk(color.FgCyan), bold: mk(color.Bold), faint: mk(color.Faint),
	}
}

func (p palette) mark(sev checks.Severity, skipped bool) string {
	switch {
	case sev == checks.SevError:
		return p.red("[✗]")
	case sev == checks.SevWarning:
		return p.yellow("[!]")
	case skipped:
		return p.faint("[-]")
	case sev == checks.SevInfo:
		return p.cyan("[i]")
	}
	return p.green("[✓]")
}

// Text renders the report for a terminal in the style of `flutter doctor`:
// the root cause and its fix first, then one line per link of the chain,
// then the other problems. -v adds every finding's detail and evidence.
func Text(w io.Writer, r *rules.Report, o TextOptions) error {
	p := newPalette(o.Color)
	width := o.Width // for cutting; 0: nothing is cut
	wrap := width    // for wrapping paragraphs, which loses nothing
	if wrap <= 0 {
		wrap = 100
	}
	var b strings.Builder
	root := rootFinding(r)

	// 1. The root cause, on the first line.
	first := headline(r, root, p)
	if root == nil && o.Headline != "" {
		first = o.Headline
	}
	b.WriteString(first + "\n")
	if o.Lead != "" {
		b.WriteString("  " + o.Lead + "\n")
	}
	if root != nil {
		if root.Detail != "" {
			writeWrapped(&b, "  ", root.Detail, wrap)
		}
		for _, fx := range root.Fixes {
			writeFix(&b, p, fx, "  ")
		}
	}
	b.WriteString("\n")

	// 2. One line per link.
	fmt.Fprintf(&b, "%s\n", p.bold(header(r)))
	for _, l := range checks.Links {
		fs := byLink(r, l)
		if len(fs) == 0 {
			continue
		}
		room := 0
		if width > 0 {
			room = width - len(l.Name()) - 8
		}
		worst, line := linkVerdict(fs, room, rootID(r))
		fmt.Fprintf(&b, "%s %s: %s\n", p.mark(worst.Severity, worst.Skipped), l.Name(), line)
		if o.Verbose {
			for _, f := range fs {
				writeVerbose(&b, p, f, width, wrap)
			}
		}
	}

	// 3. The other causes ("Also broken": nothing above explains them, and
	// each needs its own fix), then what the causes explain.
	var blocked, independent []checks.Finding
	for _, f := range r.Findings {
		switch {
		case !f.Failing() || root != nil && f.ID == root.ID:
		case f.BlockedBy != nil:
			blocked = append(blocked, f)
		default:
			independent = append(independent, f)
		}
	}
	if len(independent) > 0 {
		fmt.Fprintf(&b, "\n%s\n", p.bold("Also broken (not explained by the root cause):"))
		for _, f := range independent {
			fmt.Fprintf(&b, "%s %s %s\n", p.mark(f.Severity, false), f.Title, p.faint("["+f.Cause+"]"))
			if len(f.Fixes) > 0 && !o.Verbose {
				fx := f.Fixes[0]
				if len(fx.Steps) > 0 {
					fmt.Fprintf(&b, "    fix: %s\n", fx.Steps[0])
				}
			}
		}
	}
	if len(blocked) > 0 && !o.Verbose {
		b.WriteString("\n")
		several := len(r.Causes) > 1
		what := "the root cause"
		if several {
			what = "the causes above"
		}
		fmt.Fprintf(&b, "%s\n", p.faint(fmt.Sprintf("%s explained by %s (doctor -v shows them):", plural(len(blocked), "more problem", "more problems"), what)))
		for _, f := range blocked {
			line := f.Title
			if several {
				line += p.faint(" (by " + *f.BlockedBy + ")")
			}
			fmt.Fprintf(&b, "    %s %s\n", p.faint("·"), line)
		}
	}
	if r.Verification != nil {
		writeVerification(&b, p, r, width)
	}

	// 4. The tally.
	e, wn := count(r, checks.SevError), count(r, checks.SevWarning)
	b.WriteString("\n")
	status := p.green("ok")
	switch r.Status {
	case "error":
		status = p.red("error")
	case "warning":
		status = p.yellow("warning")
	}
	fmt.Fprintf(&b, "Status: %s (%s, %s).", status, plural(e, "error", "errors"), plural(wn, "warning", "warnings"))
	if !o.Verbose {
		b.WriteString(" " + footer(o.Command))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// headline is the report's first line: the root cause, or what was found
// when nothing is wrong. A log (doctor explain) is not a machine: "nothing
// wrong" there means the paste shows no problem, and an info finding (nothing
// recognised, only harmless messages) is what the reader needs first.
func headline(r *rules.Report, root *checks.Finding, p palette) string {
	if root != nil {
		lead := "Root cause:"
		if rules.Undecided(root) {
			lead = "Most likely root cause (the log alone does not decide):"
		}
		switch root.Severity {
		case checks.SevError:
			return fmt.Sprintf("%s %s %s %s", p.red("✗"), lead, p.bold(root.Title), p.faint("["+root.Cause+"]"))
		case checks.SevWarning:
			return fmt.Sprintf("%s %s %s %s", p.yellow("!"), lead, p.bold(root.Title), p.faint("["+root.Cause+"]"))
		}
		return fmt.Sprintf("%s %s %s", p.cyan("i"), root.Title, p.faint("["+root.Cause+"]"))
	}
	if r.Source == "log" {
		// What could not be judged comes first: a fact read from the log
		// is no answer when a failure beside it is not explained.
		for _, f := range r.Findings {
			if f.Severity == checks.SevInfo && f.Skipped {
				return p.yellow("?") + " " + f.Title + "."
			}
		}
		for _, f := range r.Findings {
			if f.Severity == checks.SevInfo {
				return p.green("✓") + " " + f.Title + "."
			}
		}
		return p.green("✓") + " No problem in the log: the framework used the GPU."
	}
	if n, facts := notChecked(r); n > 0 {
		return p.yellow("?") + fmt.Sprintf(" No problem found in what could be checked, but %s could not run: %s unknown (doctor -v says why).",
			plural(n, "check", "checks"), strings.Join(facts, ", "))
	}
	return p.green("✓ No problem found: TensorFlow should see the GPU.")
}

// notChecked counts the checks that could not run for want of evidence
// and names the unknown facts. The ladder left out on purpose (--quick,
// --root, a snapshot without it) is not counted: the other links were
// still examined.
func notChecked(r *rules.Report) (int, []string) {
	n := 0
	seen := map[string]bool{}
	var facts []string
	for i := range r.Findings {
		f := &r.Findings[i]
		if !f.NotChecked() {
			continue
		}
		names, _ := f.Evidence[checks.NotCheckedKey].([]string)
		if raw, ok := f.Evidence[checks.NotCheckedKey].([]any); ok {
			for _, x := range raw {
				if s, ok := x.(string); ok {
					names = append(names, s)
				}
			}
		}
		counted := false
		for _, name := range names {
			if name == host.FactLadder {
				continue
			}
			if !counted {
				n++
				counted = true
			}
			if !seen[name] {
				seen[name] = true
				facts = append(facts, name)
			}
		}
	}
	return n, facts
}

func header(r *rules.Report) string {
	s := r.Summary
	parts := []string{"doctor " + r.Tool.Version}
	if s != nil {
		if s.OS != "" {
			parts = append(parts, s.OS)
		}
		if s.WSL > 0 {
			parts = append(parts, fmt.Sprintf("WSL %d", s.WSL))
		}
		if s.Container != "" {
			parts = append(parts, s.Container+" container")
		}
		if s.Driver != "" {
			d := "driver " + s.Driver
			if s.CUDADriver != "" {
				d += " (CUDA " + s.CUDADriver + ")"
			}
			parts = append(parts, d)
		}
		for _, g := range s.GPUs {
			parts = append(parts, fmt.Sprintf("GPU %d: %s %s", g.Index, g.Name, gibStr(g.MemoryMiB)))
		}
	}
	if r.Source == "snapshot" {
		parts = append(parts, "from a saved snapshot")
	}
	return strings.Join(parts, " · ")
}

func gibStr(mib uint64) string { return fmt.Sprintf("%.0f GiB", float64(mib)/1024) }

func rootID(r *rules.Report) string {
	if r.RootCause == nil {
		return ""
	}
	return r.RootCause.ID
}

func rootFinding(r *rules.Report) *checks.Finding {
	if r.RootCause == nil {
		return nil
	}
	for i := range r.Findings {
		if r.Findings[i].ID == r.RootCause.ID {
			return &r.Findings[i]
		}
	}
	return nil
}

func byLink(r *rules.Report, l checks.Link) []checks.Finding {
	var out []checks.Finding
	for _, f := range r.Findings {
		if f.Link == l {
			out = append(out, f)
		}
	}
	return out
}

// linkVerdict picks the worst finding of a link and a one-line summary.
func linkVerdict(fs []checks.Finding, width int, root string) (checks.Finding, string) {
	// Failing findings first (errors, then warnings); then real verdicts;
	// "not checked" last, so a link shows [-] only when nothing was judged.
	key := func(f checks.Finding) int {
		switch {
		case f.Failing():
			return f.Severity.Rank()
		case !f.Skipped:
			return 2 + f.Severity.Rank() - checks.SevInfo.Rank()
		}
		return 9
	}
	sorted := append([]checks.Finding(nil), fs...)
	sort.SliceStable(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	worst := sorted[0]
	var line string
	if worst.Failing() {
		line = worst.Title
		if n := countFailing(fs) - 1; n > 0 {
			line += fmt.Sprintf(" (+%d more)", n)
		}
		switch {
		case worst.BlockedBy != nil && *worst.BlockedBy == root:
			line += " — explained by the cause above"
		case worst.BlockedBy != nil:
			line += " — explained by " + *worst.BlockedBy
		}
	} else {
		var parts []string
		for _, f := range sorted {
			if !f.Skipped {
				parts = append(parts, f.Title)
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "not checked: "+worst.Detail)
		}
		line = strings.Join(parts, "; ")
	}
	if width <= 0 {
		return worst, line // not a terminal: the whole line
	}
	if width < 30 {
		width = 30
	}
	if r := []rune(line); len(r) > width {
		line = string(r[:width-1]) + "…"
	}
	return worst, line
}

func countFailing(fs []checks.Finding) int {
	n := 0
	for _, f := range fs {
		if f.Failing() {
			n++
		}
	}
	return n
}

func count(r *rules.Report, sev checks.Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == sev {
			n++
		}
	}
	return n
}

func writeFix(b *strings.Builder, p palette, fx checks.Fix, indent string) {
	var tags []string
	tags = append(tags, string(fx.Risk))
	if fx.NeedsRoot {
		tags = append(tags, "needs sudo")
	}
	switch {
	case fx.Manual:
		tags = append(tags, "manual")
	case fx.Risk == checks.RiskDangerous:
		tags = append(tags, "only with: doctor fix "+fx.ID)
	default:
		tags = append(tags, "doctor --fix applies it")
	}
	fmt.Fprintf(b, "%sFix: %s %s\n", indent, fx.Title, p.faint("("+fx.ID+"; "+strings.Join(tags, ", ")+")"))
	for _, s := range fx.Steps {
		fmt.Fprintf(b, "%s    %s\n", indent, p.cyan(s))
	}
}

func writeVerbose(b *strings.Builder, p palette, f checks.Finding, width, wrap int) {
	fmt.Fprintf(b, "    %s %s %s\n", p.mark(f.Severity, f.Skipped), f.Title, p.faint("["+f.ID+" · "+f.Cause+"]"))
	if f.Detail != "" {
		writeWrapped(b, "        ", f.Detail, wrap)
	}
	if f.BlockedBy != nil {
		fmt.Fprintf(b, "        %s\n", p.faint("explained by "+*f.BlockedBy))
	}
	if len(f.Evidence) > 0 {
		keys := make([]string, 0, len(f.Evidence))
		for k := range f.Evidence {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s := EvidenceText(f.Evidence[k])
			// On a terminal a long value (a log's tail) is cut to a few
			// screen lines; elsewhere it is kept whole.
			if r := []rune(s); width > 0 && len(r) > 3*width {
				s = string(r[:3*width]) + "…"
			}
			fmt.Fprintf(b, "        %s %s\n", p.faint(k+":"), s)
		}
	}
	for _, fx := range f.Fixes {
		writeFix(b, p, fx, "        ")
	}
}

// EvidenceText is an evidence value as a person reads it: JSON without
// HTML escaping (a command's "2>&1" stays "2>&1", "GPU-<redacted>" stays
// readable), on one line.
func EvidenceText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// footer points at the verbose and the Markdown form of the same command.
func footer(cmd string) string {
	if cmd == "" {
		cmd = "doctor"
	}
	verbose, md := withFlag(cmd, "-v"), withFlag(cmd, "--format markdown")
	return "Details: " + verbose + ". For a support ticket: " + md + "."
}

// withFlag puts flag after the command's name(s): "doctor explain tf.log"
// → "doctor explain -v tf.log".
func withFlag(cmd, flag string) string {
	fields := strings.Fields(cmd)
	n := 1
	if len(fields) > 1 && (fields[1] == "explain" || fields[1] == "verify" || fields[1] == "watch" || fields[1] == "fix") {
		n = 2
	}
	if n > len(fields) {
		n = len(fields)
	}
	return strings.Join(append(append(append([]string{}, fields[:n]...), flag), fields[n:]...), " ")
}

// writeWrapped writes text wrapped at width with an indent.
func writeWrapped(b *strings.Builder, indent, text string, width int) {
	for _, para := range strings.Split(text, "\n") {
		line := indent
		for _, word := range strings.Fields(para) {
			if len(line)+len(word)+1 > width && strings.TrimSpace(line) != "" {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = indent
			}
			line += word + " "
		}
		if strings.TrimSpace(line) != "" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
