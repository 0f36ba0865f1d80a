package rules

import (
	"regexp"
	"strings"
)

// The matcher runs every signature over a log in one pass. A line is tried
// against a signature's regular expressions only when it contains one of
// the signature's keywords; the keywords of all signatures are found
// together by an Aho-Corasick automaton over ASCII case-folded bytes, so
// each byte of the log is looked at once whatever the number of
// signatures. (No allowed dependency offers a multi-pattern substring
// search; the automaton is small enough to keep here.) Regular expressions
// are RE2 (linear time), run per line on lines capped at maxLineBytes.

// maxLineBytes caps the part of a line that is matched and quoted.
const maxLineBytes = 4096

type matcher struct {
	sigs []*Signature
	// Automaton: delta[state*nclass+class] is the next state; out[state]
	// lists the signatures whose keyword ends here (failure links merged).
	class  [256]uint8
	nclass int
	delta  []int32
	out    [][]int32
}

func newMatcher(sigs []*Signature) *matcher {
	m := &matcher{sigs: sigs}
	// Byte classes: each distinct keyword byte (folded to lower case) gets
	// a class; every other byte is class 0.
	n := 1
	for _, s := range sigs {
		for _, k := range s.Keywords {
			for i := 0; i < len(k); i++ {
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
		out  []int32
	}
	nodes := []node{{next: map[uint8]int32{}}}
	for si, s := range sigs {
		for _, k := range s.Keywords {
			cur := int32(0)
			for i := 0; i < len(k); i++ {
				c := m.class[k[i]]
				nx, ok := nodes[cur].next[c]
				if !ok {
					nodes = append(nodes, node{next: map[uint8]int32{}})
					nx = int32(len(nodes) - 1)
					nodes[cur].next[c] = nx
				}
				cur = nx
			}
			nodes[cur].out = appendUnique(nodes[cur].out, int32(si))
		}
	}
	// Breadth-first: failure links and the full transition table.
	m.delta = make([]int32, len(nodes)*n)
	m.out = make([][]int32, len(nodes))
	fail := make([]int32, len(nodes))
	queue := []int32{}
	for c := 0; c < n; c++ {
		if nx, ok := nodes[0].next[uint8(c)]; ok {
			m.delta[c] = nx
			queue = append(queue, nx)
		}
	}
	m.out[0] = nodes[0].out
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.out[s] = append(append([]int32(nil), nodes[s].out...), m.out[fail[s]]...)
		for c := 0; c < n; c++ {
			if nx, ok := nodes[s].next[uint8(c)]; ok {
				fail[nx] = m.delta[int(fail[s])*n+c]
				m.delta[int(s)*n+c] = nx
				queue = append(queue, nx)
			} else {
				m.delta[int(s)*n+c] = m.delta[int(fail[s])*n+c]
			}
		}
	}
	for i := range m.out {
		m.out[i] = dedupe(m.out[i])
	}
	return m
}

func appendUnique(xs []int32, x int32) []int32 {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func dedupe(xs []int32) []int32 {
	var out []int32
	for _, x := range xs {
		out = appendUnique(out, x)
	}
	return out
}

// candidates marks in mark[] (by stamp) the signatures whose keywords
// occur in line, and returns them in signature order.
func (m *matcher) candidates(line string, mark []uint32, stamp uint32, buf []int32) []int32 {
	buf = buf[:0]
	st := int32(0)
	n := m.nclass
	for i := 0; i < len(line); i++ {
		st = m.delta[int(st)*n+int(m.class[line[i]])]
		for _, si := range m.out[st] {
			if mark[si] != stamp {
				mark[si] = stamp
				buf = append(buf, si)
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

// match tries one signature on one line; it returns the extracted values
// (nil when the signature does not match).
func (s *Signature) match(line string, lower func() string) map[string]string {
	if len(s.Unless) > 0 {
		low := lower()
		for _, u := range s.Unless {
			if strings.Contains(low, u) {
				return nil
			}
		}
	}
	for i, re := range s.re {
		if lit := s.lit[i]; lit != "" {
			if s.litFold[i] {
				if !strings.Contains(lower(), lit) {
					continue
				}
			} else if !strings.Contains(line, lit) {
				continue
			}
		}
		loc := re.FindStringSubmatchIndex(line)
		if loc == nil {
			continue
		}
		v := map[string]string{}
		for i, name := range re.SubexpNames() {
			if name == "" || loc[2*i] < 0 {
				continue
			}
			v[name] = strings.TrimSpace(line[loc[2*i]:loc[2*i+1]])
		}
		normalizeValues(v)
		return v
	}
	return nil
}

// lineMatches reports whether sig matches line through the keyword filter
// (the shipped examples are checked with it).
func (m *matcher) lineMatches(sig *Signature, line string) bool {
	line = cleanLine(line)
	mark := make([]uint32, len(m.sigs))
	for _, si := range m.candidates(line, mark, 1, nil) {
		if m.sigs[si] == sig {
			low := ""
			return sig.match(line, func() string {
				if low == "" {
					low = strings.ToLower(line)
				}
				return low
			}) != nil
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

var recordStartRE = regexp.MustCompile(`^\s*(?:\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|[EWIFD]\d{4} |\[\s*\d+\.\d+\]|[A-Z][a-z]{2} [ \d]\d \d\d:|Traceback|File "|\$ |# |>>> |PS [A-Z]:)`)

// wrap matches seg joined to the run before it, when seg continues a
// wrapped message, and updates the run.
func (sc *scanner) wrap(lineNo int, seg string) {
	continues := sc.runPieces > 0 && sc.runPieces < wrapMaxPieces && sc.runLast >= wrapMinPiece &&
		len(sc.run)+len(seg) <= maxLineBytes && !recordStartRE.MatchString(seg)
	if !continues {
		sc.run, sc.runLine, sc.runPieces, sc.runLast = seg, lineNo, 1, len(seg)
		sc.runSigs = append(sc.runSigs[:0], sc.alone...)
		sc.runCand = append(sc.runCand[:0], sc.segCand...)
		return
	}
	m := sc.m
	// The joined text's candidates: every keyword of a piece, plus those
	// that straddle the cut (looked for in a window around it, wider than
	// any keyword), so the run is not scanned again.
	const window = 96
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
	sc.runCand = append(sc.runCand, sc.segCand...)
	sc.buf = sc.buf[:0]
	for _, si := range append(sc.runCand, sc.winBuf...) {
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
	sc.matchAll(joined, sc.runLine, &sc.runSigs)
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
	return &scanner{m: m, extra: map[*Signature]int{}, kept: make([]int, len(m.sigs)), mark: make([]uint32, len(m.sigs))}
}

// segment matches one non-blank segment of line lineNo.
func (sc *scanner) segment(lineNo int, seg string) {
	m := sc.m
	seg = cleanLine(seg)
	sc.alone = sc.alone[:0]
	defer func() { sc.wrap(lineNo, seg) }()
	sc.stamp++
	sc.buf = m.candidates(seg, sc.mark, sc.stamp, sc.buf)
	sc.segCand = append(sc.segCand[:0], sc.buf...)
	if len(sc.buf) == 0 {
		return
	}
	seg = sc.matchAll(seg, lineNo, &sc.alone)
}

// matchAll runs the candidate signatures (sc.buf) over text, records a
// hit on line for each that matches (counted only, past
// maxHitsPerSignature) and adds it to *matched. It returns text, cloned
// once a hit keeps it (a kept line does not hold on to the buffer it came
// from).
func (sc *scanner) matchAll(text string, line int, matched *[]int32) string {
	low := ""
	lower := func() string {
		if low == "" {
			low = strings.ToLower(text)
		}
		return low
	}
	kept := false
	for _, si := range sc.buf {
		s := sc.m.sigs[si]
		v := s.match(text, lower)
		if v == nil {
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
	if len(s) > maxLineBytes {
		cut := maxLineBytes
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut]
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
