package rules

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// withoutPrefilters is m with every expression run on every candidate
// line: what the answers must be.
func withoutPrefilters(m *matcher) *matcher {
	c := *m
	c.pre = make([][][][]int32, len(m.pre))
	c.first = make([][]*lineStart, len(m.first))
	c.starts = make([][][]int32, len(m.starts))
	for si := range m.pre {
		c.pre[si] = make([][][]int32, len(m.pre[si]))
		c.first[si] = make([]*lineStart, len(m.first[si]))
		c.starts[si] = make([][]int32, len(m.starts[si]))
	}
	return &c
}

// prefilterLogs are the texts the prefilters are proven on: every corpus
// log and every unit log, as pasted, hard-wrapped at 80 columns (runs of
// wrapped lines are matched joined), upper-cased and lower-cased.
func prefilterLogs(t *testing.T) []string {
	t.Helper()
	var logs []string
	for _, c := range readCorpus(t) {
		logs = append(logs, c.Log)
	}
	paths, _ := filepath.Glob("testdata/explain/logs/*/*.log")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, string(b))
	}
	n := len(logs)
	for _, l := range logs[:n] {
		logs = append(logs, hardWrap(l), strings.ToUpper(l), strings.ToLower(l))
	}
	return logs
}

// TestPrefilterChangesNoHit: over the corpus and unit logs (and their
// wrapped and re-cased forms), the matcher finds exactly the hits, with
// the same values, that it finds running every expression on every
// candidate line.
func TestPrefilterChangesNoHit(t *testing.T) {
	m := mustLibrary().m
	bare := withoutPrefilters(m)
	for i, text := range prefilterLogs(t) {
		got, gotExtra := m.scan(text)
		want, wantExtra := bare.scan(text)
		if !reflect.DeepEqual(hitKeys(got), hitKeys(want)) || !reflect.DeepEqual(gotExtra, wantExtra) {
			t.Errorf("log %d: the prefilters change the hits:\n got %v\nwant %v", i, hitKeys(got), hitKeys(want))
		}
	}
}

func hitKeys(hs []hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s:%d:%q:%v", h.sig.ID, h.line, h.text, h.values)
	}
	return out
}

// TestPrefilterSound: for every expression of every signature, no line
// it matches fails its prefilter: its examples, and random strings built
// from the expression itself (every branch, random case where it ignores
// case, the Kelvin sign and the long s among them) in random context.
// (The corpus and unit logs: TestPrefilterChangesNoHit, FuzzPrefilter.)
func TestPrefilterSound(t *testing.T) {
	l := mustLibrary()
	m := l.m
	memo := newLitMemo(len(m.lits))
	matched := 0
	check := func(si int, i int, line, from string) bool {
		t.Helper()
		view := m.newLineView(line, memo)
		if !l.sigs[si].re[i].MatchString(line) {
			return false
		}
		if !m.admits(int32(si), i, &view) {
			t.Errorf("%s: pattern %q matches %q (%s) but its prefilter %v rejects it",
				l.sigs[si].ID, l.sigs[si].Patterns[i], line, from, prefilterClauses(l.sigs[si].Patterns[i]))
		}
		return true
	}
	rnd := rand.New(rand.NewPCG(15, 8))
	filtered := 0
	for si, s := range l.sigs {
		for i, p := range s.Patterns {
			if len(m.pre[si][i]) == 0 && m.first[si][i] == nil {
				continue
			}
			filtered++
			for _, ex := range s.Examples {
				check(si, i, cleanLine(ex), "example")
			}
			re, err := syntax.Parse(p, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			hit := false
			for range 200 {
				if check(si, i, randomContext(rnd)+randomMatch(rnd, re)+randomContext(rnd), "generated") {
					hit = true
				}
			}
			if hit {
				matched++
			}
		}
	}
	// The generator ignores anchors and word boundaries: most
	// expressions still get matching strings, or the test proves little.
	if matched < filtered*9/10 {
		t.Errorf("random strings matched only %d of %d expressions", matched, filtered)
	}
	t.Logf("%d of %d expressions with a prefilter matched by random strings", matched, filtered)
}

func randomContext(rnd *rand.Rand) string {
	const pool = "ab Z:/\\._-'\"()[]0123456789\t"
	var b strings.Builder
	for range rnd.IntN(6) {
		b.WriteByte(pool[rnd.IntN(len(pool))])
	}
	return b.String()
}

// randomMatch builds a string re (parsed) may match: it ignores anchors
// and word boundaries, so a caller checks with the compiled expression.
func randomMatch(rnd *rand.Rand, re *syntax.Regexp) string {
	var b strings.Builder
	var gen func(*syntax.Regexp)
	rep := func(sub *syntax.Regexp, lo, hi int) {
		if hi < 0 {
			hi = lo + 3
		}
		for range lo + rnd.IntN(hi-lo+1) {
			gen(sub)
		}
	}
	gen = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				if re.Flags&syntax.FoldCase != 0 {
					orbit := []rune{r}
					for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
						orbit = append(orbit, f)
					}
					r = orbit[rnd.IntN(len(orbit))]
				}
				b.WriteRune(r)
			}
		case syntax.OpCharClass:
			k := rnd.IntN(len(re.Rune) / 2)
			lo, hi := re.Rune[2*k], re.Rune[2*k+1]
			if hi-lo > 200 {
				hi = lo + 200
			}
			b.WriteRune(lo + rune(rnd.IntN(int(hi-lo)+1)))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteRune([]rune("x ÿ€\u212a\u017f")[rnd.IntN(5)])
		case syntax.OpCapture:
			gen(re.Sub[0])
		case syntax.OpStar:
			rep(re.Sub[0], 0, 3)
		case syntax.OpPlus:
			rep(re.Sub[0], 1, 3)
		case syntax.OpQuest:
			rep(re.Sub[0], 0, 1)
		case syntax.OpRepeat:
			rep(re.Sub[0], re.Min, min(re.Max, re.Min+3))
		case syntax.OpConcat:
			for _, s := range re.Sub {
				gen(s)
			}
		case syntax.OpAlternate:
			gen(re.Sub[rnd.IntN(len(re.Sub))])
		}
	}
	gen(re)
	return b.String()
}

// TestPrefilterClauses: what the analysis requires of a line, case by
// case.
func TestPrefilterClauses(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		// A literal; case kept where the expression keeps it. Clauses:
		// fewest literals first, then longest. A clause of several gets
		// their shared prefix or suffix before it.
		{`\bpython\.exe\b`, `[[{python.exe false}]]`},
		// (?i): folded; the exact strings of a concatenation multiply.
		{`(?i)\bdrivers?\b`, `[[{driver true}] [{drivers true} {driver true}]]`},
		{`(?:update|upgrade) now`, `[[{e now false}] [{update now false} {upgrade now false}]]`},
		// Apostrophes: a class of a few runes.
		{`couldn[’']t`, `[[{couldn false}] [{couldn't false} {couldn’t false}]]`},
		// A class of both cases of a letter: folded.
		{`[Ee]rror: x`, `[[{error: x true}]]`},
		// An unknown piece cuts the run into clauses.
		{`libcudnn\S*\s+not found`, `[[{not found false}] [{libcudnn false}]]`},
		// An alternation keeps one clause per branch; a branch with none
		// leaves nothing.
		{`(?:CUDA\w+ driver|cuDNN\d+ library)`, `[[{ driver false} { library false}]]`},
		{`CUDA|\d+`, `[]`},
		{`(?i)\w+64_\d+\.dll`, `[[{.dll true}] [{64_ true}]]`},
		// A folded non-ASCII rune with a fold orbit ends the literal.
		{`(?i)Ünïcode x`, `[[{code x true}]]`},
		// Too short to be worth a look.
		{`^\s*\d+:\s*$`, `[]`},
		// A small bounded repeat of exact strings is the set of its
		// repeats: a Windows drive's ':\', ':\\' or ':/'.
		{`(?:^|\s)[A-Za-z]:(?:\\{1,2}|/)\w`, `[[{:\ false} {:\\ false} {:/ false}]]`},
		{`xa{2,3}b`, `[[{xaa false}] [{xaab false} {xaaab false}]]`},
		{`(?i)x{0,2}yz`, `[[{yz true} {xyz true} {xxyz true}]]`},
		// Too many repeats: what the piece holds, once.
		{`(?:ab|cd|ef){1,4}ghi`, `[[{ghi false}] [{ab false} {cd false} {ef false}]]`},
	} {
		got := fmt.Sprint(prefilterClauses(c.pattern))
		if got != c.want {
			t.Errorf("prefilterClauses(%q) = %s, want %s", c.pattern, got, c.want)
		}
		if _, err := regexp.Compile(c.pattern); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPrefilterFoldEscapes: under (?i) an ASCII k or s also matches the
// Kelvin sign and the long s; a line holding one passes every folded
// literal.
func TestPrefilterFoldEscapes(t *testing.T) {
	m := newMatcher([]*Signature{{ID: "x.y", Keywords: []string{"dis"}, Patterns: []string{`(?i)disk full`}}})
	memo := newLitMemo(len(m.lits))
	re := regexp.MustCompile(`(?i)disk full`)
	for _, line := range []string{"DISK FULL", "di\u017fk full", "dis\u212a full"} {
		v := m.newLineView(line, memo)
		if !re.MatchString(line) || !v.passes(m.pre[0][0]) {
			t.Errorf("%q: matches %v, passes %v", line, re.MatchString(line), v.passes(m.pre[0][0]))
		}
	}
	if v := m.newLineView("disc full", memo); v.passes(m.pre[0][0]) {
		t.Error("a line without the literal passes")
	}
}

// FuzzPrefilter: no line an expression matches fails its prefilter.
// Seeds: every example (the corpus and unit logs: TestPrefilterChangesNoHit).
func FuzzPrefilter(f *testing.F) {
	l := mustLibrary()
	for _, s := range l.sigs {
		for _, ex := range s.Examples {
			f.Add(ex)
		}
	}
	memo := newLitMemo(len(l.m.lits))
	f.Fuzz(func(t *testing.T, line string) {
		line = cleanLine(line)
		view := l.m.newLineView(line, memo)
		for si, s := range l.sigs {
			for i, re := range s.re {
				if !l.m.admits(int32(si), i, &view) && re.MatchString(line) {
					t.Fatalf("%s: pattern %q matches %q but its prefilter rejects it", s.ID, s.Patterns[i], line)
				}
			}
		}
	})
}

// TestAnchoredFirst: how a line must start for an anchored expression;
// nothing known for an unanchored one or one that may match nothing.
func TestAnchoredFirst(t *testing.T) {
	for _, c := range []struct {
		pattern string
		yes     []string
		no      []string
	}{
		{`^\s*'?(?P<v>\d+\.\d+\.\d+)\s*$`, []string{"1", " \t'2", "'"}, []string{"a1", "   File", " -1", "", "   "}},
		{`^(?i)k`, []string{"k", "K", "\u212a"}, []string{"j", " k"}},
		{`^\s*(?:>>>\s*)?\[\]\s*$`, []string{" >", "[", "  ["}, []string{"]", " a"}},
		{`^é`, []string{"é", "\xc3"}, []string{"e"}},
		// The run's class meets what follows: only the first byte.
		{`^\s*\s?x`, []string{" y", "x"}, []string{"y"}},
		{`^[^a]*b`, []string{"cccb", "ccc"}, []string{"a"}},
	} {
		f := anchoredFirst(c.pattern)
		if f == nil {
			t.Errorf("%q: nothing known", c.pattern)
			continue
		}
		for _, y := range c.yes {
			if !f.admits(y) {
				t.Errorf("%q: %q rejected", c.pattern, y)
			}
		}
		for _, n := range c.no {
			if f.admits(n) {
				t.Errorf("%q: %q admitted", c.pattern, n)
			}
		}
	}
	for _, p := range []string{`\d+`, `^\s*$`, `^(?:a|)`, `(?:^|\s)x`} {
		if anchoredFirst(p) != nil {
			t.Errorf("%q: first bytes known", p)
		}
	}
}

// TestStartLiterals: the strings every match starts with, past word
// boundaries; and an expression run from the first of them finds what it
// finds in the whole line (one rune before it kept: a \b there still sees
// the letter before).
func TestStartLiterals(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		{`\bNVIDIA (?:RTX|[AB]\d+)`, `[NVIDIA ] false`},
		{`(?i)\bcuInit\b[^\n]*?failed`, `[cuinit] true`},
		{`(?:update|upgrade) now`, `[update now upgrade now] false`},
		// ^ matches nothing: a match at the start starts with --gpu.
		{`(?:^|\t)--gpu`, `[--gpu 	--gpu] false`},
		{`(?:foo)?bar`, `[foobar bar] false`},
		{`\w+\.dll`, `[] false`},
	} {
		strs, fold := startLiterals(c.pattern)
		if got := fmt.Sprint(strs, fold); got != c.want {
			t.Errorf("startLiterals(%q) = %s, want %s", c.pattern, got, c.want)
		}
	}
	sig := &Signature{ID: "x.y", Keywords: []string{"foo"}, Patterns: []string{`\bfoo(?P<n>\d)`}}
	sig.re = []*regexp.Regexp{regexp.MustCompile(sig.Patterns[0])}
	m := newMatcher([]*Signature{sig})
	memo := newLitMemo(len(m.lits))
	for line, want := range map[string]string{
		"zz xfoo1":       "",  // \b sees the x: no match
		"zz xfoo1 foo2":  "2", // the first foo cannot start it
		"foo3":           "3",
		"é foo4":         "4",
		"éfoo5 foo6":     "5", // \b is ASCII: é is no word character
		"\xfffoo7 xfoo8": "7", // an invalid byte is no letter
		// Past maxAnchored places, unanchored from the next one.
		"xfoo xfoo xfoo xfoo1 foo9":  "9",
		"xfoo xfoo xfoo foo8 foo9":   "8",
		"foo xfoo1 xfoo2 xfoo3 foo4": "4",
	} {
		view := m.newLineView(line, memo)
		v, ok := m.match(0, &view, true)
		if got := v["n"]; got != want || ok != (want != "") {
			t.Errorf("%q: n=%q (%v), want %q", line, got, ok, want)
		}
	}
	// Anchored at each start literal's place, an expression finds what
	// it finds run over the whole line: a ^ inside it, case folding, a
	// match at the line's start, the leftmost of several.
	for _, c := range []struct {
		pattern string
		lines   map[string]string
	}{
		{`(?:^|x)foo(?P<n>\d)`, map[string]string{"afoo1": "", "foo2": "2", "xfoo3": "3", "a xfoo4 foo5": "4", "foo6 xfoo7": "6"}},
		{`(?i)\bcuinit(?P<n>\d)`, map[string]string{"CUINIT1": "1", "xcuinit2 cuInit3": "3", "\u212aCUINIT4": "4", "x\u212aCUINIT5": "5", "\u212aCUINIT": "", "é cuinit6": "6"}},
		{`(?:ab|b)(?P<n>c\d|\d)`, map[string]string{"abc1": "c1", "ab2": "2", "zbc3": "c3", "bbab4": "4"}},
	} {
		sig := &Signature{ID: "x.y", Keywords: []string{"foo"}, Patterns: []string{c.pattern}}
		sig.re = []*regexp.Regexp{regexp.MustCompile(c.pattern)}
		m := newMatcher([]*Signature{sig})
		if m.starts[0][0] == nil {
			t.Fatalf("%s: no start literals", c.pattern)
		}
		memo := newLitMemo(len(m.lits))
		for line, want := range c.lines {
			loc := sig.re[0].FindStringSubmatchIndex(line)
			whole := ""
			if loc != nil {
				whole = line[loc[2]:loc[3]]
			}
			view := m.newLineView(line, memo)
			v, ok := m.match(0, &view, true)
			if got := v["n"]; got != want || ok != (want != "") || whole != want {
				t.Errorf("%s on %q: n=%q (%v), the whole line's match %q, want %q", c.pattern, line, got, ok, whole, want)
			}
		}
	}
}

// TestStartLiteralSearchedOnce: a start literal that is also a prefilter
// literal is one literal, and the line is searched for it once: by the
// prefilter, whose answer (where it is) the start then reads. In a run of
// wrapped lines a literal the run already holds is where that is not
// known, and the start searches for it.
func TestStartLiteralSearchedOnce(t *testing.T) {
	sig := &Signature{ID: "x.y", Keywords: []string{"dynamic library"}, Patterns: []string{`\bCould not load dynamic library (?P<lib>\S+)`}}
	sig.re = []*regexp.Regexp{regexp.MustCompile(sig.Patterns[0])}
	m := newMatcher([]*Signature{sig})
	if len(m.starts[0][0]) != 1 || len(m.pre[0][0]) != 1 || m.starts[0][0][0] != m.pre[0][0][0][0] {
		t.Fatalf("starts %v and prefilter %v do not share the literal", m.starts[0][0], m.pre[0][0])
	}
	memo := newLitMemo(len(m.lits))
	line := "2024-01-01 W tensorflow: Could not load dynamic library libcudart.so.11.0"
	view := m.newLineView(line, memo)
	v, ok := m.match(0, &view, true)
	if !ok || v["lib"] != "libcudart.so.11.0" || view.searches != 1 {
		t.Errorf("match %v %v, %d searches of the line, want libcudart.so.11.0 and 1", v, ok, view.searches)
	}
	// Joined to the piece before it: the run holds the literal, so where
	// is searched for, once, and the match is the same.
	run := newRunLits(len(m.lits))
	run.reset([]litResult{{m.pre[0][0][0][0], true}})
	joined := line + " (wrapped)"
	view = m.newLineView(joined, memo)
	view.run, view.cut = run, len(line)
	v, ok = m.match(0, &view, true)
	if !ok || v["lib"] != "libcudart.so.11.0" || view.searches != 1 {
		t.Errorf("joined: match %v %v, %d searches, want libcudart.so.11.0 and 1", v, ok, view.searches)
	}
}

// TestUnlessAskedWhenAdmitted: a signature's Unless strings, asked only
// once an expression may match, veto the line whichever expression
// matches, read in the Unicode-lower-cased line (U+212A is k); a line no
// expression admits is no match either way.
func TestUnlessAskedWhenAdmitted(t *testing.T) {
	sig := &Signature{ID: "x.y", Keywords: []string{"error"}, Unless: []string{"harmless", "k:"},
		Patterns: []string{`cuda error (?P<n>\d+)`, `(?i)failed with error (?P<n>\d+)`}}
	for _, p := range sig.Patterns {
		sig.re = append(sig.re, regexp.MustCompile(p))
	}
	m := newMatcher([]*Signature{sig})
	memo := newLitMemo(len(m.lits))
	for line, want := range map[string]string{
		"cuda error 35":                       "35",
		"cuda error 35 (harmless)":            "",
		"HARMLESS: failed with error 7":       "", // Unless reads the lower-cased line
		"failed with error 8":                 "8",
		"an error, harmless":                  "", // no expression admits it
		"an error":                            "",
		"\u212a: failed with error 9":         "", // lower-cased as Unicode: U+212A is k
		"Failed With Error 10 and cuda error": "10",
	} {
		view := m.newLineView(line, memo)
		v, ok := m.match(0, &view, true)
		if got := v["n"]; got != want || ok != (want != "") {
			t.Errorf("%q: n=%q (%v), want %q", line, got, ok, want)
		}
	}
}

// TestKeywordAutomatonDepth: however deep it is built, the automaton
// finds the same candidates (the rest of a keyword is compared in place),
// and a library too large for the full depth gets a shallower one.
func TestKeywordAutomatonDepth(t *testing.T) {
	m := mustLibrary().m
	lines := []string{}
	for _, s := range m.sigs {
		lines = append(lines, s.Examples...)
	}
	want := map[string][]int32{}
	mark := make([]uint32, len(m.sigs))
	stamp := uint32(0)
	for _, l := range lines {
		stamp++
		want[l] = append([]int32(nil), m.candidates(l, mark, stamp, nil)...)
	}
	for _, depth := range []int{1, 3, 64} {
		c := *m
		if !c.buildAutomaton(depth) {
			t.Fatalf("depth %d: too many states", depth)
		}
		for _, l := range lines {
			stamp++
			if got := c.candidates(l, mark, stamp, nil); !slices.Equal(got, want[l]) {
				t.Fatalf("depth %d: %q: candidates %v, want %v", depth, l, got, want[l])
			}
		}
	}
	// Many long keywords: more states than a transition names.
	var sigs []*Signature
	kw := func(i int) string { return fmt.Sprintf("%08x%08x", uint32(i)*2654435761, i) }
	for i := range 8000 {
		sigs = append(sigs, &Signature{ID: "x.y", Keywords: []string{kw(i)}, Patterns: []string{"x"}})
	}
	if (&matcher{sigs: sigs}).buildAutomaton(keywordDepth) {
		t.Fatal("the test library fits the full depth")
	}
	big := newMatcher(sigs)
	if got := big.candidates("zz "+kw(7999)+" "+kw(5), make([]uint32, len(sigs)), 1, nil); !slices.Equal(got, []int32{5, 7999}) {
		t.Fatalf("candidates %v", got)
	}
}

// TestStartsRecord: the line-start filter changes no answer of
// recordStartRE (the wrapped-line rule's), over every line of the corpus
// and unit logs and their wrapped pieces.
func TestStartsRecord(t *testing.T) {
	n := 0
	for _, text := range prefilterLogs(t) {
		for _, line := range strings.Split(text, "\n") {
			line = cleanLine(line)
			if got, want := startsRecord(line), recordStartRE.MatchString(line); got != want {
				t.Fatalf("%q: startsRecord %v, recordStartRE %v", line, got, want)
			}
			n++
		}
	}
	for _, line := range []string{"  2024-01-02 x", "E0101 12", "[  1.5] x", "Jan  2 03:04:05 h", "Traceback", `  File "x"`, "$ ls", "# ls", ">>> 1", `PS C:\x`} {
		if !startsRecord(line) {
			t.Errorf("%q: no record start", line)
		}
	}
}

// TestPrefilterInvalidUTF8: RE2 reads an invalid byte as U+FFFD, which
// the line does not hold as U+FFFD's three bytes, so a literal or class
// holding U+FFFD must not be required as bytes.
func TestPrefilterInvalidUTF8(t *testing.T) {
	for _, c := range []struct{ pattern, line string }{
		{"\\x{FFFD}abc", "\xffabc"},
		{"(?i)\\x{FFFD}abc", "\xffABC"},
		{"[\\x{FFFD}x]yz", "\xffyz"},
	} {
		m := newMatcher([]*Signature{{ID: "x.y", Keywords: []string{"bc"}, Patterns: []string{c.pattern}}})
		memo := newLitMemo(len(m.lits))
		re := regexp.MustCompile(c.pattern)
		v := m.newLineView(c.line, memo)
		if !re.MatchString(c.line) {
			t.Fatalf("%s does not match %q", c.pattern, c.line)
		}
		for _, cl := range m.pre[0] {
			if !v.passes(cl) {
				t.Errorf("%s on %q: the regexp matches, the prefilter rejects it", c.pattern, c.line)
			}
		}
	}
}

// TestWrapWindowFitsLongestKeyword: a keyword cut in two by a wrap is
// found in the joined text however long it is (the window around the cut
// was 96 bytes, and a longer keyword that began further back was missed),
// and the window is no wider than the longest keyword needs.
func TestWrapWindowFitsLongestKeyword(t *testing.T) {
	kw := strings.Repeat("nvidia driver failure ", 6) // 132 bytes
	sig := &Signature{ID: "x.y", Keywords: []string{kw}, Patterns: []string{`nvidia driver failure (?:nvidia driver failure ){5}`}}
	sig.re = []*regexp.Regexp{regexp.MustCompile(sig.Patterns[0])}
	m := newMatcher([]*Signature{sig})
	if m.longest != len(kw) {
		t.Fatalf("longest %d, want %d", m.longest, len(kw))
	}
	for _, cut := range []int{1, 30, 100, 120, len(kw) - 1} {
		text := "x " + kw[:cut] + "\n" + kw[cut:] + " end\n"
		if cut < wrapMinPiece {
			text = strings.Repeat("y", wrapMinPiece) + text // the piece before the cut is long enough to be wrapped
		}
		hits, _ := m.scan(text)
		if len(hits) != 1 || hits[0].line != 1 {
			t.Errorf("cut at %d: hits %v, want one on line 1", cut, hitKeys(hits))
		}
	}
}

// TestWrapKeywordAcrossEarlierCut: a keyword cut by the first wrap still
// makes its signature a candidate when the message ends two pieces later,
// beyond the window around the second cut.
func TestWrapKeywordAcrossEarlierCut(t *testing.T) {
	sig := &Signature{ID: "x.y", Keywords: []string{"nvidia driver failure"}, Patterns: []string{`nvidia driver failure .* code (?P<n>\d+)`}}
	sig.re = []*regexp.Regexp{regexp.MustCompile(sig.Patterns[0])}
	m := newMatcher([]*Signature{sig})
	text := strings.Repeat("x", wrapMinPiece) + " nvidia dri\n" + "ver failure " + strings.Repeat("y", 120) + "\n" + " code 42\n"
	hits, _ := m.scan(text)
	if len(hits) != 1 || hits[0].line != 1 || hits[0].values["n"] != "42" {
		t.Errorf("hits %v, want code 42 on line 1", hitKeys(hits))
	}
}
