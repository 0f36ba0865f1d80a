package report

import (
	"fmt"
	"strings"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/rules"
)

// writeVerification renders the runtime ladder's rungs in the text view: one
// line per rung (mark, number, name, time, what it proved or what broke, and
// the cause), with the failing call's error under a failed rung. The
// framework's whole stderr is in the JSON report; the end of it is in a
// failed rung's finding detail (doctor -v).
//
// width is the terminal's (0: not a terminal: nothing is cut).
func writeVerification(b *strings.Builder, p palette, r *rules.Report, width int) {
	v := r.Verification
	if v == nil || len(v.Rungs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", p.bold(fmt.Sprintf("Verification ladder (%s):", rungSeconds(v.DurationMS))))
	clip := func(s string, room int) string {
		if width <= 0 {
			return s
		}
		return rungClip(s, room)
	}
	for i, g := range v.Rungs {
		sev, skipped := rungSeverity(g)
		head := fmt.Sprintf("%d %-9s %6s  ", i+1, g.Name, rungSeconds(g.DurationMS))
		room := width - 6 - len(head)
		cause := ""
		if g.Status == host.RungFail && g.Cause != "" {
			cause = " [" + g.Cause + "]"
			room -= len(cause)
		}
		summary := g.Summary
		if len(g.Figures) > 0 {
			// The figures get a line each below; keep what comes before them.
			if i := strings.Index(summary, ": "); i > 0 {
				summary = summary[:i]
			}
		}
		fmt.Fprintf(b, "  %s %s%s%s\n", p.mark(sev, skipped), head, clip(summary, room), p.faint(cause))
		for _, f := range g.Figures {
			fmt.Fprintf(b, "        %s\n", figureText(p, f))
		}
		if g.Status == host.RungFail && g.Error != "" {
			fmt.Fprintf(b, "        %s\n", p.faint(clip(rungFirstLine(g.Error), width-8)))
		}
	}
}

// figureText is one timed product: "bf16 8192³   771 TFLOP/s of 989 expected · median 1.43 ms of 10 · 128 entries correct".
func figureText(p palette, f host.Figure) string {
	s := fmt.Sprintf("%-4s %d³ %6s TFLOP/s", f.DType, f.M, host.FormatTFLOPS(f.TFLOPS))
	if f.ExpectedTFLOPS > 0 {
		s += fmt.Sprintf(" of %s expected", host.FormatTFLOPS(f.ExpectedTFLOPS))
	}
	s += fmt.Sprintf(" · median %.3g ms of %d", f.MedianMS, f.Runs)
	if f.Correct {
		return s + " · " + p.faint(fmt.Sprintf("%d entries correct", f.Checked))
	}
	return s + " · " + p.red(fmt.Sprintf("WRONG RESULTS (error %.3g)", f.MaxError))
}

// mdVerification renders the runtime ladder in Markdown: a table of the
// rungs, a table of the timed products, and the stderr of a failed rung
// folded in <details>.
func mdVerification(b *strings.Builder, r *rules.Report) {
	v := r.Verification
	if v == nil || len(v.Rungs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n**Verification ladder** (%s)\n\n", rungSeconds(v.DurationMS))
	b.WriteString("| Rung | Result | Time | Outcome |\n|---|---|---|---|\n")
	for i, g := range v.Rungs {
		sev, skipped := rungSeverity(g)
		outcome := mdCell(g.Summary)
		if g.Status == host.RungFail {
			if g.Cause != "" {
				outcome += " (`" + g.Cause + "`)"
			}
			if g.Error != "" {
				outcome += "<br>" + mdCell(rungFirstLine(g.Error))
			}
		}
		word := verdictWord(checks.Finding{Severity: sev, Skipped: skipped})
		fmt.Fprintf(b, "| %d %s | %s | %s | %s |\n", i+1, g.Name, word, rungSeconds(g.DurationMS), outcome)
	}
	var figs []string
	for _, g := range v.Rungs {
		for _, f := range g.Figures {
			figs = append(figs, fmt.Sprintf("| %s | %s | %d×%d×%d | %s | %s | %.3g ms (%s) | %s |", g.Name, f.DType, f.M, f.N, f.K,
				host.FormatTFLOPS(f.TFLOPS), rungOrDash(f.ExpectedTFLOPS), f.MedianMS, f.Timing, rungChecked(f)))
		}
	}
	if len(figs) > 0 {
		b.WriteString("\n| Rung | Type | Size | TFLOP/s | Expected | Median | Result |\n|---|---|---|---|---|---|---|\n")
		b.WriteString(strings.Join(figs, "\n") + "\n")
	}
	for _, g := range v.Rungs {
		if g.Status != host.RungFail || g.Stderr == "" {
			continue
		}
		fmt.Fprintf(b, "\n<details><summary>Standard error of the %s rung</summary>\n\n```\n%s\n```\n</details>\n", g.Name,
			strings.ReplaceAll(rungLastLines(g.Stderr, 40), "```", "'''"))
	}
}

func rungSeverity(g host.Rung) (checks.Severity, bool) {
	switch g.Status {
	case host.RungPass:
		return checks.SevOK, false
	case host.RungFail:
		return checks.SevError, false
	}
	return checks.SevInfo, true
}

func rungSeconds(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}

func rungOrDash(x float64) string {
	if x <= 0 {
		return "–"
	}
	return host.FormatTFLOPS(x)
}

func rungChecked(f host.Figure) string {
	if f.Correct {
		return fmt.Sprintf("%d entries correct", f.Checked)
	}
	return fmt.Sprintf("**wrong** (error %.3g)", f.MaxError)
}

func rungFirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func rungLastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// rungClip shortens s to width runes.
func rungClip(s string, width int) string {
	if width < 20 {
		width = 20
	}
	if r := []rune(s); len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return s
}
