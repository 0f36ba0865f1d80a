package rules

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prefilters. A line that holds one of a signature's keywords is tried
// against its regular expressions, and most such lines match none of
// them: the expressions (RE2, linear but a backtracker or an NFA over the
// whole line) then cost more than everything else explain does, the more
// so as the library grows. So each expression gets a prefilter: literals
// every match of it must contain, as an AND of clauses, each clause an OR
// of literals ("driver" AND ("insufficient" OR "too old" OR ...)), and
// an expression runs only on a line where every clause has a literal
// present. A prefilter only ever skips an expression that cannot match,
// so the answers are those of the expressions alone (TestPrefilterSound,
// FuzzPrefilter, TestPrefilterChangesNoHit). The literals are looked for
// in the candidate line, the cheapest clause first, each answer (whether
// and where) remembered for the line (lineView.at), a bitmap of the
// line's byte pairs answering most on a long line, and a run of wrapped
// lines joined (scanner.wrap) looked at only across the cut and in the new
// piece for a literal the run so far lacks (runLits): putting the
// library's ~4,000 literals into the keyword automaton instead made its
// table 20 times larger (22 MB) and the pass over every line slower than
// the expressions it saved. Two more cuts, as sound: an expression
// anchored at the line's start runs only on a line that starts as its
// match must (anchoredFirst), and one whose match starts with one of a
// few strings (startLiterals, literals of the same memo) runs anchored
// where the first few of them are, then from the next (matcher.match).
//
// The literals come from the expression's parsed form (regexp/syntax; the
// regexp package keeps its own literal analysis to itself, and
// google/codesearch's RegexpQuery works in trigrams, which would need a
// trigram set per line): exact sets (the few strings a piece can match:
// `(?:update|upgrade)`, `[’']`, `drivers?`, `\\{1,2}`) are multiplied out
// along a concatenation, a piece that matches too many strings cuts the
// run into clauses, and an alternation keeps one clause from each branch.
//
// Case: a case-sensitive literal is looked for as it is; a case-folded
// one (under (?i), or where a case-sensitive piece joins a folded one) is
// looked for ASCII-lower-cased in the ASCII-lower-cased line. Under (?i)
// an ASCII letter also matches two non-ASCII runes, the Kelvin sign
// (U+212A, for k) and the long s (U+017F, for s); in a line holding
// either, no folded literal rejects anything (lineView.folded). A
// case-folded non-ASCII rune, whose fold orbit is more than itself, ends
// the literal.

const (
	// maxExact bounds an exact set (the strings a piece can match).
	maxExact = 16
	// maxClause bounds the literals of one clause.
	maxClause = 32
	// minLiteral: a clause with a shorter literal is dropped (it would
	// hold on most lines and only cost time).
	minLiteral = 2
)

// literal is a string a line must contain; fold: ASCII-lower-cased, to be
// found in the ASCII-lower-cased line.
type literal struct {
	s    string
	fold bool
}

// Pairs. Most literals looked for are not in the line, and a
// strings.Contains that says so reads the whole line (a joined run of
// wrapped lines is up to maxLineBytes). So a line that has literals looked
// for first gets a bitmap of the byte pairs it holds (ASCII-folded,
// hashed into pairBits bits), and a literal one of whose pairs is missing
// is absent without a look at the line: a literal present in the line has
// every pair of it present, folded or not.
const pairBits = 8192

type pairSet [pairBits / 64]uint64

var foldByte = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

func pairHash(a, b byte) uint32 {
	return (uint32(foldByte[a])<<5 ^ uint32(foldByte[b])) % pairBits
}

// pairsOf returns the hashed pairs of s, each once.
func pairsOf(s string) []uint32 {
	var out []uint32
	for i := 0; i+1 < len(s); i++ {
		h := pairHash(s[i], s[i+1])
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

func (p *pairSet) fill(s string) {
	for i := 0; i+1 < len(s); i++ {
		h := pairHash(s[i], s[i+1])
		p[h/64] |= 1 << (h % 64)
	}
}

func (p *pairSet) hasAll(hs []uint32) bool {
	for _, h := range hs {
		if p[h/64]&(1<<(h%64)) == 0 {
			return false
		}
	}
	return true
}

// clause is satisfied by a line holding any of its literals.
type clause []literal

// litInfo is what every match of a piece of an expression is known to
// hold.
type litInfo struct {
	// exact: every match is one of these strings; nil when not known. A
	// set holding "" matches the empty string.
	exact []string
	// fold: the exact strings are ASCII-lower-cased and match without
	// regard to ASCII case.
	fold bool
	// and: clauses every match satisfies.
	and []clause
}

var anyInfo = litInfo{}

func exactInfo(fold bool, s ...string) litInfo { return litInfo{exact: s, fold: fold} }

// asciiLower lower-cases ASCII letters only.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// prefilterClauses returns the clauses every match of pattern satisfies
// (nil: none known, the expression always runs), the most selective
// first.
func prefilterClauses(pattern string) []clause {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	return prefilterOf(re)
}

// prefilterOf is prefilterClauses of a parsed expression.
func prefilterOf(re *syntax.Regexp) []clause {
	info := analyze(re)
	clauses := info.and
	if c, ok := clauseOf(info); ok {
		clauses = append(clauses, c)
	}
	var out []clause
	seen := map[string]bool{}
	add := func(c clause) {
		key := fmt.Sprint(c)
		if !seen[key] {
			seen[key] = true
			out = append(out, c)
		}
	}
	for _, c := range clauses {
		// A clause of several literals costs one look per literal on a
		// line that has none: the part they all share (`drivers?` ->
		// "driver", `[\\]?["“]nvidia-smi...` -> "nvidia-smi...") is
		// one look that rejects the same lines, mostly.
		if a, ok := c.affix(); ok {
			add(clause{a})
		}
		add(c)
	}
	// The cheapest clause first (fewest literals), of those the most
	// selective (longest shortest literal): a line fails there, mostly.
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) < len(out[j])
		}
		return out[i].shortest() > out[j].shortest()
	})
	return out
}

// affix returns the longest prefix or suffix all of c's literals share
// (folded when any is), when c has several and it is long enough.
func (c clause) affix() (literal, bool) {
	if len(c) < 2 {
		return literal{}, false
	}
	fold := false
	for _, l := range c {
		fold = fold || l.fold
	}
	strs := make([]string, len(c))
	for i, l := range c {
		strs[i] = l.s
		if fold {
			strs[i] = asciiLower(l.s)
		}
	}
	pre, suf := strs[0], strs[0]
	for _, x := range strs[1:] {
		n := 0
		for n < len(pre) && n < len(x) && pre[n] == x[n] {
			n++
		}
		pre = pre[:n]
		n = 0
		for n < len(suf) && n < len(x) && suf[len(suf)-1-n] == x[len(x)-1-n] {
			n++
		}
		suf = suf[len(suf)-n:]
	}
	// Cut on rune boundaries: a piece of a rune would still be found,
	// but reads badly in a test's message.
	for len(pre) > 0 && !utf8.ValidString(pre) {
		pre = pre[:len(pre)-1]
	}
	for len(suf) > 0 && !utf8.ValidString(suf) {
		suf = suf[1:]
	}
	best := pre
	if len(suf) > len(best) {
		best = suf
	}
	if len(best) < 3 {
		return literal{}, false
	}
	return literal{best, fold}, true
}

func (c clause) shortest() int {
	n := len(c[0].s)
	for _, x := range c[1:] {
		n = min(n, len(x.s))
	}
	return n
}

// clauseOf turns an exact set into a clause; false when the set is
// unknown, matches "" or holds a literal shorter than minLiteral.
func clauseOf(info litInfo) (clause, bool) {
	if info.exact == nil {
		return nil, false
	}
	var out clause
	for _, s := range info.exact {
		if len(s) < minLiteral {
			return nil, false
		}
		out = appendLit(out, literal{s, info.fold})
	}
	return out, len(out) > 0 && len(out) <= maxClause
}

func appendLit(c clause, l literal) clause {
	for _, x := range c {
		if x == l {
			return c
		}
	}
	return append(c, l)
}

func analyze(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactInfo(false, "")
	case syntax.OpLiteral:
		return literalInfo(re)
	case syntax.OpCharClass:
		return classInfo(re.Rune)
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpQuest:
		return quest(analyze(re.Sub[0]))
	case syntax.OpPlus:
		return atLeastOnce(analyze(re.Sub[0]))
	case syntax.OpRepeat:
		sub := analyze(re.Sub[0])
		if set, ok := repeatSet(sub, re.Min, re.Max); ok {
			return set
		}
		switch {
		case re.Min >= 1:
			return atLeastOnce(sub)
		case re.Max == 1:
			return quest(sub)
		}
		return anyInfo
	case syntax.OpConcat:
		subs := make([]litInfo, len(re.Sub))
		for i, s := range re.Sub {
			subs[i] = analyze(s)
		}
		return concat(subs)
	case syntax.OpAlternate:
		subs := make([]litInfo, len(re.Sub))
		for i, s := range re.Sub {
			subs[i] = analyze(s)
		}
		return alternate(subs)
	}
	// OpAnyChar, OpAnyCharNotNL, OpStar, OpNoMatch: nothing known.
	return anyInfo
}

// literalInfo: a case-sensitive literal is its own exact set; a
// case-folded one too, lower-cased, where every rune is ASCII or folds to
// nothing else; the runes that do are unknown pieces. So is U+FFFD in
// either: RE2 reads an invalid byte of the line as U+FFFD, which the line
// then does not hold as U+FFFD's three bytes.
func literalInfo(re *syntax.Regexp) litInfo {
	fold := re.Flags&syntax.FoldCase != 0
	piece := func(rs []rune) litInfo {
		if fold {
			return exactInfo(true, asciiLower(string(rs)))
		}
		return exactInfo(false, string(rs))
	}
	var pieces []litInfo
	var cur []rune
	for _, r := range re.Rune {
		if r != utf8.RuneError && (!fold || r < utf8.RuneSelf || unicode.SimpleFold(r) == r) {
			cur = append(cur, r)
			continue
		}
		pieces = append(pieces, piece(cur), anyInfo)
		cur = cur[:0]
	}
	pieces = append(pieces, piece(cur))
	if len(pieces) == 1 {
		return pieces[0]
	}
	return concat(pieces)
}

// classInfo: a small class is the set of its runes; a class that holds
// both cases of each ASCII letter in it ([Ee]) is the lower-cased set,
// folded. A class that holds U+FFFD is unknown.
func classInfo(ranges []rune) litInfo {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= utf8.RuneError && utf8.RuneError <= ranges[i+1] {
			return anyInfo // an invalid byte of the line reads as U+FFFD (literalInfo)
		}
		n += int(ranges[i+1]-ranges[i]) + 1
		if n > 4*maxExact {
			return anyInfo
		}
	}
	var exact, lower []string
	var in []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			in = append(in, r)
			exact = append(exact, string(r))
			if l := asciiLower(string(r)); !contains(lower, l) {
				lower = append(lower, l)
			}
		}
	}
	closed, letters := true, false
	for _, r := range in {
		switch {
		case 'a' <= r && r <= 'z':
			closed, letters = closed && slices.Contains(in, r-'a'+'A'), true
		case 'A' <= r && r <= 'Z':
			closed, letters = closed && slices.Contains(in, r-'A'+'a'), true
		}
	}
	closed = closed && letters
	switch {
	case closed && len(lower) <= maxExact:
		return exactInfo(true, lower...)
	case len(exact) <= maxExact:
		return exactInfo(false, exact...)
	case len(lower) <= maxExact:
		return exactInfo(true, lower...)
	}
	return anyInfo
}

// repeatSet: a piece of exact strings repeated from min to max times
// (`\\{1,2}`: a backslash or two) is the exact set of those repeats,
// when it stays small.
func repeatSet(sub litInfo, min, max int) (litInfo, bool) {
	if sub.exact == nil || max < 0 || max > 4 {
		return anyInfo, false
	}
	pow := exactInfo(sub.fold, "")
	var out []string
	for k := 0; k <= max; k++ {
		if k >= min {
			for _, x := range pow.exact {
				if !contains(out, x) {
					out = append(out, x)
				}
			}
		}
		if k < max {
			if len(pow.exact)*len(sub.exact) > maxExact {
				return anyInfo, false
			}
			pow = product(pow, sub)
		}
	}
	if len(out) > maxExact {
		return anyInfo, false
	}
	return exactInfo(pow.fold, out...), true
}

func quest(sub litInfo) litInfo {
	if sub.exact != nil && len(sub.exact) < maxExact {
		out := append([]string(nil), sub.exact...)
		if !contains(out, "") {
			out = append(out, "")
		}
		return exactInfo(sub.fold, out...)
	}
	return anyInfo
}

// atLeastOnce: a match holds at least one match of sub.
func atLeastOnce(sub litInfo) litInfo {
	out := litInfo{and: append([]clause(nil), sub.and...)}
	if c, ok := clauseOf(sub); ok {
		out.and = append(out.and, c)
	}
	return out
}

// foldSet returns the exact strings of info lower-cased.
func foldSet(info litInfo) []string {
	if info.fold {
		return info.exact
	}
	var out []string
	for _, s := range info.exact {
		if l := asciiLower(s); !contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// concat multiplies out the exact sets of adjacent pieces while the
// product stays small (folded when either side is); where it would not,
// or a piece is unknown, the run so far becomes a clause.
func concat(subs []litInfo) litInfo {
	var out litInfo
	cur := exactInfo(false, "")
	cut := false
	flush := func() {
		if c, ok := clauseOf(cur); ok {
			out.and = append(out.and, c)
		}
		cut = true
	}
	for _, s := range subs {
		out.and = append(out.and, s.and...)
		if s.exact == nil {
			flush()
			cur = anyInfo
			continue
		}
		if cur.exact == nil || len(cur.exact)*len(s.exact) > maxExact {
			if cur.exact != nil {
				flush()
			}
			cur = exactInfo(s.fold, append([]string(nil), s.exact...)...)
			continue
		}
		cur = product(cur, s)
	}
	if !cut && len(out.and) == 0 {
		return cur
	}
	if cur.exact != nil {
		flush()
	}
	return out
}

// product is every string of a followed by one of b (folded when either
// is).
func product(a, b litInfo) litInfo {
	x, y, fold := a.exact, b.exact, a.fold || b.fold
	if fold {
		x, y = foldSet(a), foldSet(b)
	}
	next := make([]string, 0, len(x)*len(y))
	for _, p := range x {
		for _, q := range y {
			if !contains(next, p+q) {
				next = append(next, p+q)
			}
		}
	}
	return exactInfo(fold, next...)
}

// startLiterals returns strings one of which every match of pattern
// starts with (past word boundaries), and whether they are folded; nil
// when there are none. Go's regexp skips to a literal prefix itself, but
// not past a \b or under (?i), where it tries every position of the line
// until the match; so the expression is run from the first of these
// instead (matcher.match), one rune before it, which keeps what a \b
// there sees.
func startLiterals(pattern string) ([]string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, false
	}
	return startsOf(re)
}

// startsOf is startLiterals of a parsed expression.
func startsOf(re *syntax.Regexp) ([]string, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	for len(subs) > 0 && (subs[0].Op == syntax.OpWordBoundary || subs[0].Op == syntax.OpNoWordBoundary) {
		subs = subs[1:]
	}
	cur := exactInfo(false, "")
	for _, sub := range subs {
		info := analyze(sub)
		if info.exact == nil || len(cur.exact)*len(info.exact) > maxExact {
			break
		}
		cur = product(cur, info)
	}
	for _, x := range cur.exact {
		if x == "" {
			return nil, false
		}
	}
	return cur.exact, cur.fold
}

// alternate: the union of the branches' exact sets when small (folded
// when any branch is), else one clause from each branch, joined (a match
// satisfies its branch's).
func alternate(subs []litInfo) litInfo {
	known, fold := true, false
	for _, s := range subs {
		known = known && s.exact != nil
		fold = fold || s.fold
	}
	if known {
		var union []string
		for _, s := range subs {
			set := s.exact
			if fold {
				set = foldSet(s)
			}
			for _, x := range set {
				if !contains(union, x) {
					union = append(union, x)
				}
			}
		}
		if len(union) <= maxExact {
			return exactInfo(fold, union...)
		}
	}
	var out clause
	for _, s := range subs {
		best, ok := bestClause(s)
		if !ok {
			return anyInfo
		}
		for _, x := range best {
			out = appendLit(out, x)
		}
		if len(out) > maxClause {
			return anyInfo
		}
	}
	return litInfo{and: []clause{out}}
}

// bestClause picks the clause of s whose shortest literal is longest (the
// most selective, roughly).
func bestClause(s litInfo) (clause, bool) {
	cands := s.and
	if c, ok := clauseOf(s); ok {
		cands = append(cands[:len(cands):len(cands)], c)
	}
	var best clause
	bestLen := -1
	for _, c := range cands {
		if n := c.shortest(); n > bestLen {
			best, bestLen = c, n
		}
	}
	return best, bestLen >= 0
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (b *byteSet) add(lo, hi int) {
	for c := lo; c <= hi; c++ {
		b[c/64] |= 1 << (c % 64)
	}
}

func (b *byteSet) has(c byte) bool { return b[c/64]&(1<<(c%64)) != 0 }

// lineStart: an expression anchored at the start of the text (`^`, one
// line) matches only a line that starts with one of the bytes its match
// can start with (`^\s*'?\d+\.\d+` needs a space, a quote or a digit
// first), and where it starts with a run of one class (a leading `\s*`)
// that no byte it can go on with belongs to, only a line whose first byte
// past such a run is one of those (a digit or a quote: an indented
// traceback line is not). Such expressions are tried on most lines,
// keyed on "." or "-". It returns nil when the expression is not anchored
// or its match may be empty.
type lineStart struct {
	skip  *byteSet // the leading run's bytes; nil: none
	first byteSet
}

func (ls *lineStart) admits(text string) bool {
	if ls == nil { // no first byte known: every line may start a match
		return true
	}
	i := 0
	if ls.skip != nil {
		for i < len(text) && ls.skip.has(text[i]) {
			i++
		}
	}
	return i < len(text) && ls.first.has(text[i])
}

func anchoredFirst(pattern string) *lineStart {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	return lineStartOf(re)
}

// lineStartOf is anchoredFirst of a parsed expression.
func lineStartOf(re *syntax.Regexp) *lineStart {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText {
		return nil
	}
	subs := re.Sub[1:]
	set, empty := firstOfSeq(subs)
	if empty {
		return nil
	}
	// A leading run of one class: the match starts where the line's run
	// of it ends when what follows cannot start with one of its bytes.
	if lead := subs[0]; len(subs) > 1 && (lead.Op == syntax.OpStar || lead.Op == syntax.OpPlus) && singleChar(lead.Sub[0]) {
		run, _ := firstOf(lead.Sub[0])
		rest, empty := firstOfSeq(subs[1:])
		disjoint := true
		for i := range run {
			disjoint = disjoint && run[i]&rest[i] == 0
		}
		if disjoint && !empty {
			return &lineStart{skip: &run, first: rest}
		}
	}
	return &lineStart{first: set}
}

// singleChar reports whether re matches exactly one character.
func singleChar(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpLiteral:
		return len(re.Rune) == 1
	}
	return false
}

func firstOfSeq(subs []*syntax.Regexp) (byteSet, bool) {
	var acc byteSet
	for _, s := range subs {
		f, empty := firstOf(s)
		for i := range acc {
			acc[i] |= f[i]
		}
		if !empty {
			return acc, false
		}
	}
	return acc, true
}

// firstOf returns the bytes a match of re can start with and whether
// the match can be empty. A rune past ASCII (or an invalid byte, read as
// U+FFFD) can start with any byte from 0x80.
func firstOf(re *syntax.Regexp) (byteSet, bool) {
	var b byteSet
	addRune := func(r rune) {
		if r < utf8.RuneSelf {
			b.add(int(r), int(r))
		} else {
			b.add(0x80, 0xFF)
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return b, true
		}
		r := re.Rune[0]
		addRune(r)
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				addRune(f)
			}
		}
		return b, false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo < utf8.RuneSelf {
				b.add(int(lo), int(min(hi, utf8.RuneSelf-1)))
			}
			if hi >= utf8.RuneSelf {
				b.add(0x80, 0xFF)
			}
		}
		return b, false
	case syntax.OpCapture, syntax.OpPlus:
		return firstOf(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		f, _ := firstOf(re.Sub[0])
		return f, true
	case syntax.OpRepeat:
		f, empty := firstOf(re.Sub[0])
		return f, empty || re.Min == 0
	case syntax.OpConcat:
		return firstOfSeq(re.Sub)
	case syntax.OpAlternate:
		empty := false
		for _, s := range re.Sub {
			f, e := firstOf(s)
			for i := range b {
				b[i] |= f[i]
			}
			empty = empty || e
		}
		return b, empty
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return b, true
	}
	// Any character, or what is not analysed: any byte.
	b.add(0, 0xFF)
	return b, true
}

// foldEscapes are the non-ASCII runes that (?i) matches for an ASCII
// letter: the Kelvin sign for k and the long s for s.
const foldEscapes = "\u212a\u017f"

// lineView is a line being matched, with its case-folded forms made when
// first asked for, and which literals it holds remembered, once for all
// the signatures tried on it.
type lineView struct {
	text          string
	low, fold     string
	lowOK, foldOK bool
	// foldAny: the line holds a foldEscapes rune, so a folded literal
	// proves nothing.
	foldAny bool
	lits    []literal
	pairs   [][]uint32 // pairsOf each literal
	memo    *litMemo
	looks   int // literals looked for in the text so far
	// A run of wrapped lines joined (scanner.wrap): the text is the run
	// so far (its first cut bytes) and the new piece; run knows which
	// literals the run so far holds.
	run *runLits
	cut int
	// checked lists the literals looked up in the text, in order.
	checked []int32
	// searches counts the searches of the text for a literal.
	searches int
}

// runLits remembers which literals a run of wrapped lines holds, by
// stamp: a literal the run holds, the run joined to one more piece holds;
// one it lacks, the joined text holds only where it straddles the cut or
// lies in the new piece, which is all there is to look at.
type runLits struct {
	stamp uint32
	state []uint32 // stamp<<1 | 1 when held
	held  []int32  // the literals held, this stamp
}

// reset starts a run whose text was seen to hold what results say.
func (r *runLits) reset(results []litResult) {
	r.next()
	r.held = r.held[:0]
	for _, x := range results {
		r.set(x.id, x.held)
	}
}

// join makes the run its text joined to a new piece, in which the joined
// text was seen to hold what results say: what the run held it still
// holds; what it lacked is known again only where looked for.
func (r *runLits) join(results []litResult) {
	old := append([]int32(nil), r.held...)
	r.next()
	r.held = r.held[:0]
	for _, id := range old {
		r.set(id, true)
	}
	for _, x := range results {
		r.set(x.id, x.held)
	}
}

// litResult is whether a text held a literal.
type litResult struct {
	id   int32
	held bool
}

func newRunLits(n int) *runLits { return &runLits{state: make([]uint32, n)} }

// next starts a new run.
func (r *runLits) next() {
	r.stamp++
	if r.stamp >= 1<<31 { // wrapped: old marks would read as current
		clear(r.state)
		r.stamp = 1
	}
}

func (r *runLits) set(id int32, held bool) {
	if was, known := r.get(id); known && was {
		return // held stays held
	}
	r.state[id] = r.stamp << 1
	if held {
		r.state[id] |= 1
		r.held = append(r.held, id)
	}
}

// get returns whether the run holds literal id, and whether that is known.
func (r *runLits) get(id int32) (held, known bool) {
	x := r.state[id]
	return x&1 == 1, x>>1 == r.stamp
}

// litMemo remembers, per literal ID, whether the line of stamp holds it
// and where, and the line's pairs once setFor is stamp.
type litMemo struct {
	stamp  uint32
	state  []uint32 // stamp<<1 | 1 when held (one look for both)
	pos    []int32  // where, when state is stamp's (lineView.at)
	set    pairSet
	setFor uint32
}

func newLitMemo(n int) *litMemo {
	return &litMemo{state: make([]uint32, n), pos: make([]int32, n)}
}

// next starts a new line.
func (m *litMemo) next() {
	m.stamp++
	if m.stamp >= 1<<31 { // wrapped: old marks would read as current
		clear(m.state)
		m.stamp, m.setFor = 1, 0
	}
}

// held reports whether the line of stamp holds literal id.
func (m *litMemo) held(id int32) bool { return m.state[id]&1 == 1 }

func (m *matcher) newLineView(text string, memo *litMemo) lineView {
	memo.next()
	return lineView{text: text, lits: m.lits, pairs: m.litPairs, memo: memo}
}

// lower is strings.ToLower(text), what Unless is matched against.
func (v *lineView) lower() string {
	if !v.lowOK {
		v.low, v.lowOK = strings.ToLower(v.text), true
	}
	return v.low
}

// folded is text with its ASCII letters lower-cased, where folded
// literals are looked for.
func (v *lineView) folded() string {
	if v.foldOK {
		return v.fold
	}
	v.foldOK = true
	ascii := true
	for i := 0; i < len(v.text); i++ {
		if v.text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	switch {
	case ascii && v.lowOK:
		v.fold = v.low // the same for ASCII text
	case ascii:
		v.fold = asciiLower(v.text)
		v.low, v.lowOK = v.fold, true
	default:
		v.fold = asciiLower(v.text)
		v.foldAny = strings.ContainsAny(v.text, foldEscapes)
	}
	return v.fold
}

// firstStart returns where the first of the start literals ids (one
// fold) is in the line, or -1; ok false when that is not known (a folded
// literal in a line holding a foldEscapes rune). A literal the prefilter
// looked for is not searched for again (at).
func (v *lineView) firstStart(ids []int32) (at int, ok bool) {
	at = -1
	for _, id := range ids {
		i := v.at(id)
		if i == posUnknown {
			// Held where not known: the run before the cut holds it,
			// or the line a foldEscapes rune.
			l := v.lits[id]
			hay := v.text
			if l.fold {
				hay = v.folded()
				if v.foldAny {
					return 0, false
				}
			}
			v.searches++
			i = strings.Index(hay, l.s)
		}
		if i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at, true
}

// nextStart returns where the first of the start literals ids is in the
// line from from on, or -1 (firstStart said where the first is).
func (v *lineView) nextStart(ids []int32, from int) int {
	at := -1
	for _, id := range ids {
		l := v.lits[id]
		hay := v.text
		if l.fold {
			hay = v.folded()
		}
		if from > len(hay) {
			return -1
		}
		end := len(hay)
		if at >= 0 {
			end = min(len(hay), at+len(l.s)-1)
		}
		v.searches++
		if i := strings.Index(hay[from:end], l.s); i >= 0 && (at < 0 || from+i < at) {
			at = from + i
		}
	}
	return at
}

// posUnknown is where a literal is held when that is not known: the run
// of wrapped lines before the cut holds it, or it is folded and the line
// holds a foldEscapes rune.
const posUnknown = -2

// has reports whether the line holds literal id.
func (v *lineView) has(id int32) bool { return v.at(id) != -1 }

// at returns where the line first holds literal id (in the folded text
// for a folded literal: the same offsets), -1 when it does not hold it,
// posUnknown when it does somewhere not known. The line is searched for
// a literal once, whoever asks (a prefilter, a start).
func (v *lineView) at(id int32) int {
	m := v.memo
	if x := m.state[id]; x>>1 == m.stamp {
		return int(m.pos[id])
	}
	at := v.look(id)
	m.state[id] = m.stamp << 1
	if at != -1 {
		m.state[id] |= 1
	}
	m.pos[id] = int32(at)
	v.checked = append(v.checked, id)
	return at
}

// look finds literal id in the text (at).
func (v *lineView) look(id int32) int {
	m := v.memo
	l := v.lits[id]
	hay := v.text
	if l.fold {
		hay = v.folded()
		if v.foldAny {
			return posUnknown
		}
	}
	if v.run != nil {
		if held, known := v.run.get(id); known {
			// Held by the run so far, or else to be found across the
			// cut or in the new piece, where its first place is.
			if held {
				return posUnknown
			}
			from := max(0, v.cut-len(l.s)+1)
			v.searches++
			if i := strings.Index(hay[from:], l.s); i >= 0 {
				return from + i
			}
			return -1
		}
	}
	// The pairs pay for themselves on a long text or one that many
	// literals are looked for in.
	v.looks++
	if m.setFor == m.stamp || v.looks > pairLooks || len(v.text) > pairText {
		if m.setFor != m.stamp {
			m.set = pairSet{}
			m.set.fill(v.text)
			m.setFor = m.stamp
		}
		if !m.set.hasAll(v.pairs[id]) {
			return -1
		}
	}
	v.searches++
	return strings.Index(hay, l.s)
}

const (
	pairLooks = 8
	pairText  = 512
)

// passes reports whether the line holds a literal of every clause (of
// literal IDs).
func (v *lineView) passes(clauses [][]int32) bool {
	for _, c := range clauses {
		ok := false
		for _, id := range c {
			if v.has(id) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
