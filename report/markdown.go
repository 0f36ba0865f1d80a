package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/rules"
)

// Markdown renders the report for a support ticket or a GitHub issue: the
// cause and fix first, a table of the chain, then every finding with its
// evidence folded in <details>. Callers redact first (Redact).
func Markdown(w io.Writer, r *rules.Report) error {
	var b strings.Builder
	root := rootFinding(r)
	if root == nil {
		b.WriteString("### doctor: no problem found\n\n")
	} else {
		fmt.Fprintf(&b, "### doctor: %s — %s (`%s`)\n\n", r.Status, mdEscape(root.Title), root.Cause)
		if rules.Undecided(root) {
			b.WriteString("Most likely root cause: the log alone does not decide it (see what to paste next below).\n\n")
		}
		if root.Detail != "" {
			b.WriteString(mdEscape(root.Detail) + "\n\n")
		}
		for _, fx := range root.Fixes {
			mdFix(&b, fx)
		}
		if len(r.Causes) > 1 {
			b.WriteString("**Also broken** (not explained by the root cause; each needs its own fix):\n\n")
			for _, c := range r.Causes[1:] {
				fix := ""
				if c.Fix != nil {
					fix = " — fix `" + *c.Fix + "`"
				}
				fmt.Fprintf(&b, "- %s (`%s`, `%s`)%s\n", mdEscape(c.Title), c.Cause, c.ID, fix)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "**Machine:** %s\n\n", mdEscape(header(r)))

	b.WriteString("| Link | Verdict | Finding |\n|---|---|---|\n")
	for _, l := range checks.Links {
		fs := byLink(r, l)
		if len(fs) == 0 {
			continue
		}
		worst, line := linkVerdict(fs, 200, rootID(r))
		fmt.Fprintf(&b, "| %s | %s | %s |\n", l.Name(), verdictWord(worst), mdCell(line))
	}
	b.WriteString("\n")

	var failing []checks.Finding
	for _, f := range r.Findings {
		if f.Failing() {
			failing = append(failing, f)
		}
	}
	if len(failing) > 0 {
		b.WriteString("**Problems** (the cause first):\n\n")
		for _, f := range failing {
			extra := ""
			if f.BlockedBy != nil {
				extra = " — explained by `" + *f.BlockedBy + "`"
			}
			fmt.Fprintf(&b, "- **%s** %s (`%s`, `%s`)%s\n", f.Severity, mdEscape(f.Title), f.Cause, f.ID, extra)
		}
		b.WriteString("\n")
	}

	fmt.Fprintf(&b, "<details><summary>All %d findings with evidence</summary>\n\n", len(r.Findings))
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "#### %s `%s`\n\n", verdictWord(f), f.ID)
		fmt.Fprintf(&b, "%s", mdEscape(f.Title))
		if f.Detail != "" {
			fmt.Fprintf(&b, ": %s", mdEscape(f.Detail))
		}
		b.WriteString("\n\n")
		if len(f.Evidence) > 0 {
			keys := make([]string, 0, len(f.Evidence))
			for k := range f.Evidence {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString("```\n")
			for _, k := range keys {
				fmt.Fprintf(&b, "%s: %s\n", k, strings.ReplaceAll(EvidenceText(f.Evidence[k]), "```", "'''"))
			}
			b.WriteString("```\n\n")
		}
	}
	b.WriteString("</details>\n")
	if r.Verification != nil {
		mdVerification(&b, r)
	}
	fmt.Fprintf(&b, "\n<sub>doctor %s · report %s · personal data redacted</sub>\n", r.Tool.Version, r.Schema)
	_, err := io.WriteString(w, b.String())
	return err
}

func mdFix(b *strings.Builder, fx checks.Fix) {
	var tags []string
	tags = append(tags, string(fx.Risk))
	if fx.NeedsRoot {
		tags = append(tags, "needs sudo")
	}
	if fx.Manual {
		tags = append(tags, "manual")
	}
	fmt.Fprintf(b, "**Fix** — %s (`%s`, %s):\n\n```sh\n", mdEscape(fx.Title), fx.ID, strings.Join(tags, ", "))
	for _, s := range fx.Steps {
		b.WriteString(strings.ReplaceAll(s, "```", "'''") + "\n")
	}
	b.WriteString("```\n\n")
}

func verdictWord(f checks.Finding) string {
	switch {
	case f.Severity == checks.SevError:
		return "❌ error"
	case f.Severity == checks.SevWarning:
		return "⚠️ warning"
	case f.Skipped:
		return "➖ not checked"
	case f.Severity == checks.SevInfo:
		return "ℹ️ info"
	}
	return "✅ ok"
}

// mdEscape keeps text from turning into Markdown or HTML.
func mdEscape(s string) string {
	r := strings.NewReplacer("<", "&lt;", ">", "&gt;", "`", "'", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

func mdCell(s string) string {
	return strings.ReplaceAll(mdEscape(s), "|", `\|`)
}
