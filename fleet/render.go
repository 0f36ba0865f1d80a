package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSON writes the summary as doctor.fleet/v1.
func JSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// TextOptions shape the text and Markdown views.
type TextOptions struct {
	// MaxHosts is how many hosts a group lists before "and N more"
	// (0: all of them).
	MaxHosts int
}

// clean makes text read from a report safe to print on a terminal or in
// Markdown: control characters and invalid UTF-8 are written as Go
// escapes, so a host name cannot move the cursor or start a new line.
func clean(s string) string {
	ok := utf8.ValidString(s)
	if ok {
		for _, r := range s {
			if unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' {
				ok = false
				break
			}
		}
	}
	if ok {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func orUnknown(v string) string {
	if v == "" {
		return "not reported"
	}
	return v
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Headline is the summary's first line.
func Headline(s *Summary) string {
	c := s.Machines
	if c.Total == 0 {
		return "doctor fleet: no readable report"
	}
	if c.Broken == 0 {
		return fmt.Sprintf("doctor fleet: no broken machine among %s (%d with warnings)", plural(c.Total, "machine", "machines"), c.Warning)
	}
	return fmt.Sprintf("doctor fleet: %d of %s broken, %d with warnings, %d healthy",
		c.Broken, plural(c.Total, "machine", "machines"), c.Warning, c.Healthy)
}

// notes are the lines that say how the reports were counted.
func notes(s *Summary) []string {
	var out []string
	read := plural(s.Reports, "report", "reports") + " read"
	if s.Superseded > 0 {
		read += fmt.Sprintf("; %s of a host with a newer one left out", plural(s.Superseded, "older report", "older reports"))
	}
	if len(s.Unreadable) > 0 {
		read += "; " + plural(len(s.Unreadable), "file", "files") + " unreadable (below)"
	}
	out = append(out, read+".")
	if s.Redacted > 0 {
		out = append(out, fmt.Sprintf("%s redacted: each counts as a machine of its own, named %s (redacted reports cannot be told apart or matched to a host; collect them with --format json and without --redact to group by host).",
			plural(s.Redacted, "report is", "reports are"), RedactedHost))
	}
	if s.NoHost > 0 {
		out = append(out, fmt.Sprintf("%s no host (a log explained, or a report from before host names): each counts as a machine, named by its file.",
			plural(s.NoHost, "report names", "reports name")))
	}
	return out
}

func hostList(hosts []string, max int) string {
	shown := hosts
	if max > 0 && len(hosts) > max {
		shown = hosts[:max]
	}
	parts := make([]string, len(shown))
	for i, h := range shown {
		parts[i] = clean(h)
	}
	out := strings.Join(parts, ", ")
	if len(shown) < len(hosts) {
		out += fmt.Sprintf(" and %d more", len(hosts)-len(shown))
	}
	return out
}

func valueList(d Difference, f func(string) string) string {
	parts := make([]string, len(d.Values))
	for i, v := range d.Values {
		parts[i] = fmt.Sprintf("%s (%d healthy, %d broken)", f(orUnknown(v.Value)), v.Healthy, v.Broken)
	}
	return strings.Join(parts, "; ")
}

// Text writes the summary for people.
func Text(w io.Writer, s *Summary, o TextOptions) error {
	var b strings.Builder
	b.WriteString(Headline(s) + "\n")
	for _, n := range notes(s) {
		b.WriteString("  " + n + "\n")
	}
	for _, sec := range []struct {
		title  string
		status string
	}{{"Broken machines by root cause", StatusError}, {"Machines with warnings by root cause", StatusWarning}} {
		var rows []Group
		for _, g := range s.ByRootCause {
			if (g.Status == StatusError) == (sec.status == StatusError) {
				rows = append(rows, g)
			}
		}
		if len(rows) == 0 {
			continue
		}
		width := 0
		for _, g := range rows {
			width = max(width, len(clean(g.Cause)))
		}
		fmt.Fprintf(&b, "\n%s:\n", sec.title)
		for _, g := range rows {
			fmt.Fprintf(&b, "  %4d  %-*s  %s\n", g.Count, width, clean(g.Cause), hostList(g.Hosts, o.MaxHosts))
		}
	}
	if len(s.Differences) > 0 {
		b.WriteString("\nWhat differs between healthy and broken machines:\n")
		for _, d := range s.Differences {
			fmt.Fprintf(&b, "  %-10s  %s\n", d.Fact, valueList(d, clean))
		}
	} else if s.Machines.Broken > 0 && s.Machines.Broken < s.Machines.Total {
		b.WriteString("\nHealthy and broken machines do not differ in driver, CUDA, TensorFlow, Python or GPU model.\n")
	}
	if len(s.Unreadable) > 0 {
		fmt.Fprintf(&b, "\nUnreadable (%d):\n", len(s.Unreadable))
		for _, u := range s.Unreadable {
			fmt.Fprintf(&b, "  %s: %s\n", clean(u.File), clean(u.Error))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// code puts text from a report in a Markdown code span inside a table.
func code(s string) string {
	s = strings.ReplaceAll(clean(s), "`", "'")
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// Markdown writes the summary for a ticket or a wiki page.
func Markdown(w io.Writer, s *Summary, o TextOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", strings.TrimPrefix(Headline(s), "doctor fleet: "))
	for _, n := range notes(s) {
		b.WriteString(strings.ReplaceAll(n, RedactedHost, "`"+RedactedHost+"`") + "\n")
	}
	if len(s.ByRootCause) > 0 {
		b.WriteString("\n| machines | root cause | status | hosts |\n| ---: | --- | --- | --- |\n")
		for _, g := range s.ByRootCause {
			hosts := g.Hosts
			more := ""
			if o.MaxHosts > 0 && len(hosts) > o.MaxHosts {
				more = fmt.Sprintf(" and %d more", len(hosts)-o.MaxHosts)
				hosts = hosts[:o.MaxHosts]
			}
			parts := make([]string, len(hosts))
			for i, h := range hosts {
				parts[i] = code(h)
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s%s |\n", g.Count, code(g.Cause), g.Status, strings.Join(parts, ", "), more)
		}
	}
	if len(s.Differences) > 0 {
		b.WriteString("\n**What differs between healthy and broken machines**\n\n| fact | value | healthy | broken |\n| --- | --- | ---: | ---: |\n")
		for _, d := range s.Differences {
			for _, v := range d.Values {
				fmt.Fprintf(&b, "| %s | %s | %d | %d |\n", d.Fact, code(orUnknown(v.Value)), v.Healthy, v.Broken)
			}
		}
	}
	if len(s.Unreadable) > 0 {
		fmt.Fprintf(&b, "\n**Unreadable (%d)**\n\n", len(s.Unreadable))
		for _, u := range s.Unreadable {
			fmt.Fprintf(&b, "- %s: %s\n", code(u.File), strings.ReplaceAll(clean(u.Error), "`", "'"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
