package fixes

import (
	"bytes"
	"regexp"
	"strings"
)

// Reading and writing shell files (rc files, conda activate.d scripts,
// /etc/environment). Only the forms people write to set a variable are
// recognised; a line doctor cannot read with certainty is reported for a
// person to edit, never changed. No library parses shell for this: a full
// parser (mvdan.cc/sh) is outside the allowed dependencies and would still
// not say which lines are safe to disable.

// splitLines splits b into lines, each keeping its terminator ("\n" or
// "\r\n"); the last line may have none.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// trimEOL removes a line's terminator and returns it separately.
func trimEOL(l string) (string, string) {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return l[:len(l)-2], "\r\n"
	case strings.HasSuffix(l, "\n"):
		return l[:len(l)-1], "\n"
	}
	return l, ""
}

// assignment is one line of a file that sets a variable.
type assignment struct {
	Line int    // 1-based
	Text string // the line, without its terminator
	// Value is the value set; Static is false when it depends on an
	// expansion ($VAR, $(cmd), `cmd`) and cannot be known from the file.
	Value  string
	Static bool
	// Sole is true when the line does nothing but set the variable, so
	// disabling it changes nothing else. Lines that are not Sole are
	// reported, never edited.
	Sole bool
}

// syntax is the file format: a POSIX shell file or pam_env's
// /etc/environment (KEY=VALUE, no expansion).
type syntax int

const (
	shSyntax syntax = iota
	pamEnvSyntax
)

var (
	heredocRE = regexp.MustCompile(`<<-?\s*\\?['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
	exportRE  = regexp.MustCompile(`^(?:export|declare\s+-x|typeset\s+-x|declare\s+-gx)\s+`)
)

// findAssignments returns the lines of content that set the variable name.
func findAssignments(content []byte, name string, syn syntax) []assignment {
	mention := regexp.MustCompile(`(^|[\s;&|(]|export\s+)` + regexp.QuoteMeta(name) + `=`)
	var out []assignment
	heredoc := ""
	heredocTabs := false
	continued := false
	for i, raw := range splitLines(content) {
		line, _ := trimEOL(raw)
		if heredoc != "" {
			t := line
			if heredocTabs {
				t = strings.TrimLeft(t, "\t")
			}
			if t == heredoc {
				heredoc = ""
			}
			continue
		}
		prevContinued := continued
		continued = syn == shSyntax && endsWithBackslash(line)
		trim := strings.TrimLeft(line, " \t")
		if trim == "" || strings.HasPrefix(trim, "#") {
			continue
		}
		if syn == shSyntax {
			if m := heredocRE.FindStringSubmatchIndex(line); m != nil && !inComment(line, m[0]) {
				heredoc = line[m[2]:m[3]]
				heredocTabs = strings.HasPrefix(line[m[0]:], "<<-")
			}
		}
		if !mention.MatchString(line) {
			continue
		}
		a := assignment{Line: i + 1, Text: line}
		switch syn {
		case pamEnvSyntax:
			a.Value, a.Static, a.Sole = parsePamEnv(trim, name)
		default:
			var kind assignKind
			a.Value, a.Static, kind = parseShellAssignment(trim, name)
			if kind == assignNone && !prevContinued {
				continue
			}
			a.Sole = kind == assignSole && !prevContinued
			if !a.Sole && !mentionsAsAssignment(trim, name) {
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

func endsWithBackslash(l string) bool {
	n := 0
	for i := len(l) - 1; i >= 0 && l[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// inComment reports whether position i of a line is inside a # comment
// (a rough test: a # preceded by a blank, outside quotes).
func inComment(l string, i int) bool {
	q := byte(0)
	for j := 0; j < i && j < len(l); j++ {
		c := l[j]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (j == 0 || l[j-1] == ' ' || l[j-1] == '\t'):
			return true
		}
	}
	return false
}

// mentionsAsAssignment reports whether name= appears outside a comment,
// i.e. the line may well set the variable in a form doctor does not edit.
func mentionsAsAssignment(trim, name string) bool {
	i := strings.Index(trim, name+"=")
	return i >= 0 && !inComment(trim, i)
}

// assignKind says how a line that mentions NAME= sets it.
type assignKind int

const (
	assignNone  assignKind = iota // sets nothing in the shell (NAME=1 cmd: for one command only)
	assignSole                    // [export] NAME=WORD [;] [# comment]: the line does only that
	assignOther                   // sets it among other things, or in a form not read here
)

// parseShellAssignment reads `[export] NAME=WORD [# comment]`.
func parseShellAssignment(trim, name string) (value string, static bool, kind assignKind) {
	rest := trim
	exported := false
	if m := exportRE.FindString(rest); m != "" {
		rest = rest[len(m):]
		exported = true
	}
	if !strings.HasPrefix(rest, name+"=") {
		return "", false, assignOther
	}
	rest = rest[len(name)+1:]
	value, static, n, ok := shellWord(rest)
	if !ok {
		return "", false, assignOther
	}
	tail := strings.TrimLeft(rest[n:], " \t")
	if strings.HasPrefix(tail, ";") && !strings.HasPrefix(tail, ";;") {
		tail = strings.TrimLeft(tail[1:], " \t")
	} else if !exported && tail != "" && !strings.HasPrefix(tail, "#") && strings.IndexByte(";&|", tail[0]) < 0 {
		return "", false, assignNone // a prefix assignment for one command
	}
	if tail == "" || strings.HasPrefix(tail, "#") {
		return value, static, assignSole
	}
	return value, static, assignOther
}

// shellWord reads one shell word at the start of s: unquoted characters,
// '...' and "..." strings and backslash escapes. It stops at a blank or an
// operator. static is false when the word holds an expansion. ok is false
// when the word is not closed (a string continued on the next line).
func shellWord(s string) (value string, static bool, n int, ok bool) {
	var b strings.Builder
	static = true
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')':
			return b.String(), static, i, true
		case c == '\\':
			if i+1 >= len(s) {
				return "", false, i, false
			}
			b.WriteByte(s[i+1])
			i += 2
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", false, i, false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			i++
			closed := false
			for i < len(s) {
				d := s[i]
				if d == '"' {
					closed = true
					i++
					break
				}
				if d == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if d == '$' || d == '`' {
					static = false
				}
				b.WriteByte(d)
				i++
			}
			if !closed {
				return "", false, i, false
			}
		case c == '$' || c == '`':
			static = false
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), static, i, true
}

// parsePamEnv reads a /etc/environment line: [export ]NAME=VALUE, VALUE
// optionally in matching quotes; pam_env does no expansion there.
func parsePamEnv(trim, name string) (value string, static, sole bool) {
	rest := strings.TrimPrefix(trim, "export ")
	if !strings.HasPrefix(rest, name+"=") {
		return "", false, false
	}
	v := strings.TrimRight(rest[len(name)+1:], " \t")
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return v, true, true
}

// disabledLine is what a disabled line becomes. In a shell file the line
// becomes the no-op command ":" followed by the old text as a comment, so a
// line that was the only command of an if/then block leaves the block valid
// (an empty block is a syntax error). /etc/environment has only comments.
func disabledLine(text string, syn syntax) string {
	trim := strings.TrimLeft(text, " \t")
	indent := text[:len(text)-len(trim)]
	if syn == pamEnvSyntax {
		return "# doctor --fix disabled: " + trim
	}
	return indent + ": # doctor --fix disabled: " + trim
}

// replaceLine returns content with its 1-based line n (which must read old)
// replaced by repl, keeping the line terminator. When line n does not read
// old (the file changed since the plan), the single line that does is used;
// ok is false when there is none or more than one.
func replaceLine(content []byte, n int, old, repl string) ([]byte, bool) {
	lines := splitLines(content)
	idx := -1
	if n >= 1 && n <= len(lines) {
		if l, _ := trimEOL(lines[n-1]); l == old {
			idx = n - 1
		}
	}
	if idx < 0 {
		for i, raw := range lines {
			if l, _ := trimEOL(raw); l == old {
				if idx >= 0 {
					return nil, false
				}
				idx = i
			}
		}
	}
	if idx < 0 {
		return nil, false
	}
	_, eol := trimEOL(lines[idx])
	lines[idx] = repl + eol
	return []byte(strings.Join(lines, "")), true
}

// blockMarkers are the lines around a block doctor adds to a file.
func blockMarkers(id string) (string, string) {
	return "# >>> doctor --fix " + id + " >>>", "# <<< doctor --fix " + id + " <<<"
}

// upsertBlock returns content with doctor's block for id set to body
// (lines without the markers): replaced where it already is, appended
// otherwise.
func upsertBlock(content []byte, id, body string) []byte {
	begin, end := blockMarkers(id)
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	block := begin + "\n" + body + end + "\n"
	lines := splitLines(content)
	start, stop := -1, -1
	for i, raw := range lines {
		l, _ := trimEOL(raw)
		if l == begin && start < 0 {
			start = i
		}
		if l == end && start >= 0 && i > start {
			stop = i
			break
		}
	}
	if start >= 0 && stop >= 0 {
		return []byte(strings.Join(lines[:start], "") + block + strings.Join(lines[stop+1:], ""))
	}
	s := string(content)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s + block)
}

// shQuote quotes s for a POSIX shell: in single quotes, each quote inside
// closed, escaped and reopened.
// Whatever s holds ($(), backquotes, newlines) stays literal.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// displayArgv renders argv for a person to read or paste: plain words as
// they are, others single-quoted, and words with control characters in
// bash's $'...' form so that nothing can move the cursor or end the line.
func displayArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case plainArg.MatchString(a):
			out[i] = a
		case hasControl(a):
			out[i] = ansiCQuote(a)
		default:
			out[i] = shQuote(a)
		}
	}
	return strings.Join(out, " ")
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

func ansiCQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteString("0123456789abcdef"[c>>4 : c>>4+1])
			b.WriteString("0123456789abcdef"[c&15 : c&15+1])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
	return b.String()
}

// sanitize makes machine text safe to print on a terminal: control
// characters (an escape sequence in a process name, say) are shown as \xNN.
func sanitize(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			b.WriteString(`\x`)
			b.WriteString("0123456789abcdef"[r>>4 : r>>4+1])
			b.WriteString("0123456789abcdef"[r&15 : r&15+1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
