package rules

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// The matcher runs every signature over a log in one pass. A line is tried
// against a signature's regular expressions only when it contains one of
// the signature's keywords, and an expression runs only on a line that
// passes its prefilter (explain_prefilter.go); the keywords of all signatures are found
// together by an Aho-Corasick automaton over ASCII case-folded bytes, so
// each byte of the log is looked at once whatever the number of
// signatures. (No allowed dependency offers a multi-pattern substring
// search; the automaton is small enough to keep here.) Regular expressions
// are RE2 (linear time), run per line on lines capped at maxLineBytes.

// maxLineBytes caps the part of a line that is matched and quoted.
const maxLineBytes = 4096

type matcher struct {
	sigs []*Signature
	// pre[si][i] is the prefilter of sigs[si].re[i]: clauses of literal
	// IDs, indexes into lits.
	pre   [][][][]int32
	named [][]bool // named[si][i]: sigs[si].re[i] has named groups
	// first[si][i]: how a line sigs[si].re[i] matches starts
	// (anchoredFirst); nil: any way.
	first [][]*lineStart
	// starts[si][i]: literals (IDs) one of which every match of
	// sigs[si].re[i] starts with (startLiterals); nil: none known. A
	// start literal that is also a prefilter literal has its ID, so a
	// line is searched for it once (lineView.at).
	starts [][][]int32
	// anchored[si][i]: sigs[si].re[i] anchored at a start literal
	// (anchoredAt), once compiled.
	anchored [][]atomic.Pointer[anchoredRE]
	lits     []literal
	litPairs [][]uint32 // pairsOf each literal
	// Automaton over the keywords' first keywordDepth bytes:
	// delta[state*nclass+class] is the next state (and hasOut); out[state] lists the
	// keywords whose first bytes end here (failure links merged), each
	// with the rest of it, compared in place.
	class  [256]uint8
	nclass int
	// longest is the longest keyword's length: a keyword across the
	// cut of two wrapped pieces lies within longest-1 bytes of it.
	longest int
	delta   []uint16
	out     [][]kwOut
}

// kwOut is a keyword of signature sig whose first bytes the automaton
// found; rest must follow them (ASCII case folded) for it to be there.
type kwOut struct {
	sig  int32
	rest string
}

// keywordDepth bounds the automaton's depth. Keywords are phrases ("this
// does not indicate an error and you can ignore this message"): one
// state per byte made a table of 24,000 states (6 MB) whose misses in
// the processor's caches cost more than comparing, where the first bytes
// of a keyword are found, the rest of it in place.
const keywordDepth = 8

func newMatcher(sigs []*Signature) *matcher {
	m := &matcher{sigs: sigs, pre: make([][][][]int32, len(sigs)), named: make([][]bool, len(sigs)),
		first: make([][]*lineStart, len(sigs)), starts: make([][][]int32, len(sigs)),
		anchored: make([][]atomic.Pointer[anchoredRE], len(sigs))}
	litID := map[literal]int32{}
	idOf := func(l literal) int32 {
		id, ok := litID[l]
		if !ok {
			id = int32(len(m.lits))
			litID[l] = id
			m.lits = append(m.lits, l)
			m.litPairs = append(m.litPairs, pairsOf(l.s))
		}
		return id
	}
	for si, s := range sigs {
		for i, p := range s.Patterns {
			// One parse for the three analyses.
			tree, err := syntax.Parse(p, syntax.Perl)
			if err != nil {
				tree = &syntax.Regexp{Op: syntax.OpAnyChar} // nothing known
			}
			var clauses [][]int32
			for _, c := range prefilterOf(tree) {
				ids := make([]int32, len(c))
				for i, l := range c {
					ids[i] = idOf(l)
				}
				clauses = append(clauses, ids)
			}
			m.pre[si] = append(m.pre[si], clauses)
			named := false
			re := (*regexp.Regexp)(nil)
			if i < len(s.re) {
				re = s.re[i] // compiled by validate
			} else {
				re, _ = regexp.Compile(p)
			}
			if re != nil {
				for _, n := range re.SubexpNames() {
					named = named || n != ""
				}
			}
			m.named[si] = append(m.named[si], named)
			m.first[si] = append(m.first[si], lineStartOf(tree))
			st, fold := startsOf(tree)
			var ids []int32
			for _, s := range st {
				ids = append(ids, idOf(literal{s, fold}))
			}
			m.starts[si] = append(m.starts[si], ids)
			m.anchored[si] = append(m.anchored[si], atomic.Pointer[anchoredRE]{})
		}
	}
	for _, s := range sigs {
		for _, k := range s.Keywords {
			m.longest = max(m.longest, len(k))
		}
	}
	// The automaton, over fewer of the keywords' first bytes should a
	// library ever need more states than a transition can name.
	for depth := keywordDepth; !m.buildAutomaton(depth); depth-- {
	}
	return m
}

// buildAutomaton builds the keyword automaton over the first depth bytes
// of each keyword; false when it would have more than stateMask states.
func (m *matcher) buildAutomaton(depth int) bool {
	sigs := m.sigs
	// Byte classes: each distinct keyword byte (folded to lower case) gets
	// a class; every other byte is class 0.
	m.class = [256]uint8{}
	n := 1
	for _, s := range sigs {
		for _, k := range s.Keywords {
			for i := 0; i < min(len(k), depth); i++ {
				b := k[i]
				if m.class[b] == 0 {
					m.class[b] = uint8(n)
					if 'a' <= b && b <= 'z' {
						m.class[b-'a'+'A'] = uint8(n)
					}
					n++
				}
			}
		}
	}
	m.nclass = n
	// Trie.
	type node struct {
		next map[uint8]int32
		out  []kwOut
	}
	nodes := []node{{next: map[uint8]int32{}}}
	for si, s := range sigs {
		for _, k := range s.Keywords {
			cur := int32(0)
			d := min(len(k), depth)
			for i := 0; i < d; i++ {
				c := m.class[k[i]]
				nx, ok := nodes[cur].next[c]
				if !ok {
					nodes = append(nodes, node{next: map[uint8]int32{}})
					nx = int32(len(nodes) - 1)
					nodes[cur].next[c] = nx
				}
				cur = nx
			}
			if o := (kwOut{int32(si), k[d:]}); !slices.Contains(nodes[cur].out, o) {
				nodes[cur].out = append(nodes[cur].out, o)
			}
		}
	}
	if len(nodes) > stateMask {
		return false
	}
	// Breadth-first: failure links and the full transition table.
	m.delta = make([]uint16, len(nodes)*n)
	m.out = make([][]kwOut, len(nodes))
	fail := make([]int32, len(nodes))
	queue := []int32{}
	for c := 0; c < n; c++ {
		if nx, ok := nodes[0].next[uint8(c)]; ok {
			m.delta[c] = uint16(nx)
			queue = append(queue, nx)
		}
	}
	m.out[0] = nodes[0].out
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.out[s] = append(append([]kwOut(nil), nodes[s].out...), m.out[fail[s]]...)
		for c := 0; c < n; c++ {
			if nx, ok := nodes[s].next[uint8(c)]; ok {
				fail[nx] = int32(m.delta[int(fail[s])*n+c])
				m.delta[int(s)*n+c] = uint16(nx)
				queue = append(queue, nx)
			} else {
				m.delta[int(s)*n+c] = m.delta[int(fail[s])*n+c]
			}
		}
	}
	for i, o := range m.out {
		var d []kwOut
		for _, x := range o {
			if !slices.Contains(d, x) {
				d = append(d, x)
			}
		}
		m.out[i] = d
	}
	// A transition into a state where keywords end carries hasOut, so
	// the scan looks at out only there.
	for k, t := range m.delta {
		if len(m.out[t]) > 0 {
			m.delta[k] = t | hasOut
		}
	}
	return true
}

// A transition is the next state (stateMask) and whether keywords end
// there (hasOut).
const (
	hasOut    = 1 << 15
	stateMask = hasOut - 1
)

// foldedPrefix reports whether s starts with lower (lower-case ASCII),
// ASCII case folded.
func foldedPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if foldByte[s[i]] != lower[i] {
			return false
		}
	}
	return true
}

// candidates marks in mark[] (by stamp) the signatures whose keywords
// occur in line, and returns them in signature order.
func (m *matcher) candidates(line string, mark []uint32, stamp uint32, buf []int32) []int32 {
	buf = buf[:0]
	st := 0
	n := m.nclass
	for i := 0; i < len(line); i++ {
		t := m.delta[st*n+int(m.class[line[i]])]
		st = int(t & stateMask)
		if t&hasOut == 0 {
			continue
		}
		for _, o := range m.out[st] {
			if mark[o.sig] != stamp && foldedPrefix(line[i+1:], o.rest) {
				mark[o.sig] = stamp
				buf = append(buf, o.sig)
			}
		}
	}
	// Signature order keeps the output deterministic.
	for i := 1; i < len(buf); i++ {
		for j := i; j > 0 && buf[j] < buf[j-1]; j-- {
			buf[j], buf[j-1] = buf[j-1], buf[j]
		}
	}
	return buf
}

// match tries signature si on one line; it reports whether it matches
// and, when values is set, returns the values it extracts. An expression
// runs only when the line passes its prefilter, and only finds where its
// groups are when they are wanted (RE2 answers whether it matches in less
// time).
func (m *matcher) match(si int32, line *lineView, values bool) (map[string]string, bool) {
	s := m.sigs[si]
	// Unless is asked once an expression may match: a line none may
	// match is not lower-cased and searched for every Unless string of
	// a signature whose keywords are common words.
	unlessAsked := len(s.Unless) == 0
	for i, re := range s.re {
		if !m.admits(si, i, line) {
			continue
		}
		if !unlessAsked {
			unlessAsked = true
			low := line.lower()
			for _, u := range s.Unless {
				if strings.Contains(low, u) {
					return nil, false
				}
			}
		}
		text := line.text
		if st := m.starts[si][i]; st != nil {
			at, ok := line.firstStart(st)
			if ok && at < 0 {
				continue
			}
			if ok {
				// Tried where each start literal is, anchored (a match
				// starts at one of them), the first few; then from the
				// next one on, one rune before it (what a \b there
				// sees).
				a := m.anchoredAt(si, i)
				for tries := 0; at >= 0 && tries < maxAnchored; tries++ {
					re, sub := a.at0, text
					if at > 0 {
						_, n := utf8.DecodeLastRuneInString(text[:at])
						re, sub = a.atPrev, text[at-n:]
					}
					if v, ok := run(re, sub, values && m.named[si][i]); ok {
						if !values {
							return nil, true
						}
						return v, true
					}
					at = line.nextStart(st, at+1)
				}
				if at < 0 {
					continue
				}
				if at > 0 {
					_, n := utf8.DecodeLastRuneInString(text[:at])
					text = text[at-n:]
				}
			}
		}
		if v, ok := run(re, text, values && m.named[si][i]); ok {
			if !values {
				return nil, true
			}
			return v, true
		}
	}
	return nil, false
}

// run matches re against text; with values, it returns the values of
// re's named groups (normalised), else an empty map.
func run(re *regexp.Regexp, text string, values bool) (map[string]string, bool) {
	if !values {
		if !re.MatchString(text) {
			return nil, false
		}
		return map[string]string{}, true
	}
	loc := re.FindStringSubmatchIndex(text)
	if loc == nil {
		return nil, false
	}
	v := map[string]string{}
	for i, name := range re.SubexpNames() {
		if name == "" || loc[2*i] < 0 {
			continue
		}
		v[name] = strings.TrimSpace(text[loc[2*i]:loc[2*i+1]])
	}
	normalizeValues(v)
	return v, true
}

// Anchored at a start literal. An expression whose every match starts
// with one of a few strings (startLiterals) and that does not match a
// line is, run unanchored, tried at every place of the line from the
// first of them to the end. So it is run anchored where each of them is,
// the first maxAnchored places in the line: as every match starts at one
// of them, the first that matches there is where the unanchored
// expression's leftmost match starts, and what it matches there is the
// same (leftmost-first). The anchored forms keep the rune before the
// place as context (a \b or a ^ at the place reads it as the whole line
// would): atPrev consumes exactly one rune first, at0 is for the start of
// the line.
const maxAnchored = 3

type anchoredRE struct{ at0, atPrev *regexp.Regexp }

// anchoredAt returns expression i of signature si's anchored forms,
// compiled when first asked for (most expressions never are, and the
// library loads before every explain).
func (m *matcher) anchoredAt(si int32, i int) *anchoredRE {
	p := &m.anchored[si][i]
	if a := p.Load(); a != nil {
		return a
	}
	pat := m.sigs[si].Patterns[i]
	a := &anchoredRE{at0: regexp.MustCompile(`^(?:` + pat + `)`), atPrev: regexp.MustCompile(`^(?s:.)(?:` + pat + `)`)}
	p.Store(a)
	return a
}

// admits reports whether expression i of signature si may match line:
// whether the line starts as it must and passes its prefilter.
func (m *matcher) admits(si int32, i int, line *lineView) bool {
	if f := m.first[si][i]; f != nil && !f.admits(line.text) {
		return false
	}
	return line.passes(m.pre[si][i])
}

// lineMatches reports whether sig matches line through the keyword filter
// and its prefilters (validate checks every shipped example with it, with
// one scanner's marks and memo for them all: a memo each made 30 MB of
// garbage at every library load).
func (sc *scanner) lineMatches(sig *Signature, line string) bool {
	m := sc.m
	line = cleanLine(line)
	sc.stamp++
	for _, si := range m.candidates(line, sc.mark, sc.stamp, nil) {
		if m.sigs[si] == sig {
			view := m.newLineView(line, sc.memo)
			_, ok := m.match(si, &view, false)
			return ok
		}
	}
	return false
}

// hit is one signature matching one line.
type hit struct {
	sig    *Signature
	line   int // 1-based
	text   string
	values map[string]string
}

// maxHitsPerSignature bounds memory on huge logs: beyond it a signature's
// hits are only counted.
const maxHitsPerSignature = 200

// scanner runs every signature over the segments of a log, one at a
// time, keeping the hits in line order and, per signature, counting the
// hits beyond those kept.
type scanner struct {
	m     *matcher
	hits  []hit
	extra map[*Signature]int
	kept  []int
	mark  []uint32
	stamp uint32
	buf   []int32
	memo  *litMemo // which literals the line being matched holds
	// checked: the literals looked up in the text being matched;
	// lastLits: those of the last text matched, and whether it held
	// them; segLits: the same for the last segment; runLits: which the
	// run of wrapped pieces holds.
	checked  []int32
	lastLits []litResult
	segLits  []litResult
	runLits  *runLits

	// The run of wrapped pieces the last segment belongs to (see wrap).
	run       string
	runLine   int
	runPieces int
	runLast   int     // bytes in the run's last piece
	runSigs   []int32 // signatures that matched the run so far
	runCand   []int32 // signatures with a keyword in a piece of the run
	alone     []int32 // signatures that matched the current segment
	segCand   []int32 // signatures with a keyword in the current segment
	winBuf    []int32
}

// Wrapped lines. A terminal, journalctl, a pager or a forum may cut a long
// message into several lines ("Loaded runtime CuDNN l" / "ibrary: 7.4.1
// but source was compiled with: 7.6.4"); a signature written for the
// message then sees only pieces. So a segment that follows a long one (a
// piece of wrapMinPiece bytes or more, the width at which something cut
// it) and does not itself start a new record (a timestamp, a log-level
// prefix, a kernel time, a traceback frame, a prompt) is matched again
// joined to the run of pieces before it, up to wrapMaxPieces pieces. A
// signature that matched no piece of the run alone takes the joined text
// as its hit, quoted with the run's first line number. Terminals cut
// without dropping a byte, so the pieces are joined as they are.
const (
	wrapMinPiece  = 60
	wrapMaxPieces = 6
)

var (
	recordStartRE = regexp.MustCompile(`^\s*(?:\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|[EWIFD]\d{4} |\[\s*\d+\.\d+\]|[A-Z][a-z]{2} [ \d]\d \d\d:|Traceback|File "|\$ |# |>>> |PS [A-Z]:)`)
	// recordStart: how a line recordStartRE matches starts (most lines
	// of a log do not, and are told so without running it).
	recordStart = anchoredFirst(recordStartRE.String())
)

// startsRecord reports whether seg starts a new record (recordStartRE).
func startsRecord(seg string) bool {
	return recordStart.admits(seg) && recordStartRE.MatchString(seg)
}

// wrap matches seg joined to the run before it, when seg continues a
// wrapped message, and updates the run.
func (sc *scanner) wrap(lineNo int, seg string) {
	continues := sc.runPieces > 0 && sc.runPieces < wrapMaxPieces && sc.runLast >= wrapMinPiece &&
		len(sc.run)+len(seg) <= maxLineBytes && !startsRecord(seg)
	if !continues {
		sc.run, sc.runLine, sc.runPieces, sc.runLast = seg, lineNo, 1, len(seg)
		sc.runSigs = append(sc.runSigs[:0], sc.alone...)
		sc.runCand = append(sc.runCand[:0], sc.segCand...)
		sc.runLits.reset(sc.segLits)
		return
	}
	m := sc.m
	// The joined text's candidates: every keyword of a piece, plus those
	// that straddle the cut (looked for in the window around it where
	// such a keyword lies, the longest keyword less a byte on each side),
	// so the run is not scanned again.
	window := max(m.longest-1, 1)
	left, right := sc.run, seg
	if len(left) > window {
		left = left[len(left)-window:]
	}
	if len(right) > window {
		right = right[:window]
	}
	sc.stamp++
	sc.winBuf = m.candidates(left+right, sc.mark, sc.stamp, sc.winBuf)
	joined := sc.run + seg
	sc.run, sc.runLast = joined, len(seg)
	sc.runPieces++
	sc.runSigs = append(sc.runSigs, sc.alone...)
	// The run keeps the keywords across this cut too: the next cut's
	// window does not reach back to it.
	sc.runCand = append(append(sc.runCand, sc.segCand...), sc.winBuf...)
	sc.buf = sc.buf[:0]
	for _, si := range sc.runCand {
		// A broad signature's words must stand on one line: joined
		// pieces would pair words of two messages (and rerun its
		// expressions over ever longer text).
		if m.sigs[si].Tier == TierBroad {
			continue
		}
		if !containsIdx(sc.runSigs, si) && !containsIdx(sc.buf, si) {
			sc.buf = append(sc.buf, si)
		}
	}
	// What the run so far holds, and what the new piece was seen to
	// hold, the joined text holds.
	for _, r := range sc.segLits {
		if r.held {
			sc.runLits.set(r.id, true)
		}
	}
	sc.matchAll(joined, sc.runLine, &sc.runSigs, len(joined)-len(seg))
	sc.runLits.join(sc.lastLits)
}

func containsIdx(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (m *matcher) newScanner() *scanner {
	return &scanner{m: m, extra: map[*Signature]int{}, kept: make([]int, len(m.sigs)),
		mark: make([]uint32, len(m.sigs)), memo: newLitMemo(len(m.lits)), runLits: newRunLits(len(m.lits))}
}

// segment matches one non-blank segment of line lineNo.
func (sc *scanner) segment(lineNo int, seg string) {
	m := sc.m
	seg = cleanLine(seg)
	sc.alone = sc.alone[:0]
	sc.segLits = sc.segLits[:0]
	defer func() { sc.wrap(lineNo, seg) }()
	sc.stamp++
	sc.buf = m.candidates(seg, sc.mark, sc.stamp, sc.buf)
	sc.segCand = append(sc.segCand[:0], sc.buf...)
	if len(sc.buf) == 0 {
		return
	}
	seg = sc.matchAll(seg, lineNo, &sc.alone, 0)
}

// matchAll runs the candidate signatures (sc.buf) over text, records a
// hit on line for each that matches (counted only, past
// maxHitsPerSignature) and adds it to *matched. It returns text, cloned
// once a hit keeps it (a kept line does not hold on to the buffer it came
// from).
func (sc *scanner) matchAll(text string, line int, matched *[]int32, cut int) string {
	view := sc.m.newLineView(text, sc.memo)
	view.checked = sc.checked[:0]
	if cut > 0 {
		view.run, view.cut = sc.runLits, cut
	}
	defer func() {
		// What the text was seen to hold, for wrap.
		sc.checked = view.checked
		sc.lastLits = sc.lastLits[:0]
		for _, id := range view.checked {
			sc.lastLits = append(sc.lastLits, litResult{id, view.memo.held(id)})
		}
		if cut == 0 {
			sc.segLits = append(sc.segLits, sc.lastLits...)
		}
	}()
	kept := false
	for _, si := range sc.buf {
		s := sc.m.sigs[si]
		// Past maxHitsPerSignature a hit is only counted: its values
		// are not wanted.
		v, ok := sc.m.match(si, &view, sc.kept[si] < maxHitsPerSignature)
		if !ok {
			continue
		}
		*matched = append(*matched, si)
		if sc.kept[si] >= maxHitsPerSignature {
			sc.extra[s]++
			continue
		}
		if !kept {
			text, kept = strings.Clone(text), true
		}
		sc.kept[si]++
		sc.hits = append(sc.hits, hit{sig: s, line: line, text: text, values: v})
	}
	return text
}

// scan runs every signature over text. It returns the hits in line order
// and, per signature, the number of hits beyond those kept.
func (m *matcher) scan(text string) ([]hit, map[*Signature]int) {
	sc := m.newScanner()
	lineNo := 0
	for len(text) > 0 {
		lineNo++
		var raw string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			raw, text = text[:i], text[i+1:]
		} else {
			raw, text = text, ""
		}
		raw = strings.TrimSuffix(raw, "\r")
		// A carriage return inside a line (progress bars) starts a new
		// segment shown under the same line number.
		for len(raw) > 0 {
			seg := raw
			if j := strings.IndexByte(raw, '\r'); j >= 0 {
				seg, raw = raw[:j], raw[j+1:]
			} else {
				raw = ""
			}
			if strings.TrimSpace(seg) == "" {
				continue
			}
			sc.segment(lineNo, seg)
		}
	}
	return sc.hits, sc.extra
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// cleanLine removes terminal colour codes and NUL bytes and caps the
// length (on a UTF-8 boundary).
func cleanLine(s string) string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiRE.ReplaceAllString(s, "")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	s = stripQuote(s)
	s = stripCollectorPrefix(s)
	if len(s) > maxLineBytes {
		cut := maxLineBytes
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// collectorPrefixRE is what a log collector puts before every line a
// program printed: the container runtime's CRI log format (kubectl logs
// of a node's files, '2024-05-01T10:00:00.123456789Z stderr F '), a
// GitHub Actions job log's timestamp ('2024-05-02T10:11:12.1234567Z '),
// journald/syslog's 'Jan 10 10:00:00 host python3[1234]: '. Anchored
// patterns (an answer line, a package list, nvidia-smi's rows) must see
// the line as the program printed it. The kernel's own lines keep their
// 'kernel:' tag (journalctl -k), which their patterns read.
var collectorPrefixRE = regexp.MustCompile(`^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:(?:stdout|stderr) [FP] )?|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ (?:[\w.@/-]+\[\d+\]|python\d?(?:\.\d+)?): )`)

// stripCollectorPrefix drops a log collector's prefix (collectorPrefixRE).
func stripCollectorPrefix(s string) string {
	if s == "" || !(s[0] >= '0' && s[0] <= '9' || s[0] >= 'A' && s[0] <= 'Z') {
		return s
	}
	if loc := collectorPrefixRE.FindStringIndex(s); loc != nil {
		return s[loc[1]:]
	}
	return s
}

// stripQuote drops a Markdown blockquote prefix ("> ", nested or not) from
// a pasted line: it is not part of the message, and anchored patterns
// (nvidia-smi rows, package lists, prompts) must see the line as the tool
// printed it. A Python prompt (">>> ") goes too; patterns that mention
// it treat it as optional.
func stripQuote(s string) string {
	t := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(t, ">") {
		return s
	}
	for strings.HasPrefix(t, ">") {
		t = strings.TrimLeft(t[1:], " ")
	}
	return t
}
