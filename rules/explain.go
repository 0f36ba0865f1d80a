package rules

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
)

// Explain: the root cause of a pasted log.
//
// A paste (TensorFlow's stderr, a traceback, nvidia-smi, dmesg, pip, conda,
// container runtime errors, often mixed) is read line by line; every line
// is matched against the signature library (rules/signatures/*.json). A
// matched line becomes evidence of a finding, records a fact (versions,
// nvidia-smi rows), marks a context (container, WSL, native Windows,
// Jupyter) or a success. Reasoners then compare the facts across lines
// (the driver's CUDA version against what the build needs, the cuDNN that
// loaded against the one compiled in, a requested soname against the
// versions installed) and the findings go through Assemble like the
// machine diagnosis: ordered along the chain, the lowest broken link is the
// root cause and what it explains is folded under it. Within one link a
// specific finding outranks a symptom (a message that is a consequence,
// such as "Cannot dlopen some GPU libraries"), then the heavier signature,
// then the earlier line.
//
// Outcomes: findings with a root cause (exit 1 when it is an error); only
// harmless messages (root cause benign_warning_only, status ok, with what
// to paste next); recognised output with nothing wrong (root cause null);
// nothing recognised (root cause null, one info finding saying so and
// asking for the output that would decide). Empty and binary input are
// input errors (*InputError), which the CLI turns into exit code 2.

// ExplainOptions tunes Explain.
type ExplainOptions struct {
	// Version is the tool version written into the report.
	Version string
}

// InputError is a log Explain cannot read: empty or binary.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// ErrEmptyLog is returned for an empty (or whitespace-only) log.
var ErrEmptyLog = &InputError{Msg: "the log is empty: paste the output to explain (TensorFlow's stderr, a traceback, nvidia-smi, dmesg...)"}

// ErrBinaryLog is returned for input that is not text.
var ErrBinaryLog = &InputError{Msg: "the input is not a text log (it looks binary): paste the text output, not a core dump, archive or image"}

// Explain reads a pasted log from r to its end, matching every line as it
// streams, and explains it. Memory stays bounded whatever the size of the
// log; the report says how much was read (Report.Input). A read error
// ends the explanation with that error (what was read is not explained).
func Explain(r io.Reader, o ExplainOptions) (*Report, error) {
	start := time.Now()
	cr := &countingReader{r: r}
	text, err := decodedLog(cr)
	if err != nil {
		if _, ok := err.(*InputError); ok {
			return nil, err
		}
		return nil, fmt.Errorf("reading the log: %w", err)
	}
	lib := mustLibrary()
	sc := lib.m.newScanner()
	lines, sawText, err := readSegments(text, sc.segment)
	if err != nil {
		return nil, fmt.Errorf("reading the log: %w", err)
	}
	if !sawText {
		return nil, ErrEmptyLog
	}
	rep := explainHits(lib, sc.hits, sc.extra, o.Version, start)
	rep.Input = &LogInput{Bytes: cr.n, Lines: lines}
	return rep, nil
}

// ExplainText interprets text that a program wrote (the verification
// ladder's framework probe stderr, a captured log) and returns the same
// report as Explain. Empty or binary text gives a report whose only
// finding says nothing was recognised; it never fails.
func ExplainText(text string) *Report {
	if s, err := DecodeLog([]byte(text)); err == nil {
		return explainText(s, "")
	}
	return explainText("", "")
}

// DecodeLog turns raw bytes into text: UTF-16 (what PowerShell's `>`
// writes) is decoded, a UTF-8 byte-order mark dropped. Empty input and
// input that is mostly NUL bytes, control bytes or invalid UTF-8 are
// *InputErrors.
func DecodeLog(data []byte) (string, error) {
	var dec string
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		dec = decodeUTF16(data[2:], false)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		dec = decodeUTF16(data[2:], true)
	case looksUTF16LE(data):
		dec = decodeUTF16(data, false)
	}
	// Logs are mostly ASCII whatever the language around them: a "UTF-16"
	// decoding that is not is binary data that starts like a BOM.
	if dec != "" && mostlyASCII(dec) {
		data = []byte(dec)
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if len(bytes.TrimSpace(data)) == 0 {
		return "", ErrEmptyLog
	}
	if looksBinary(data) {
		return "", ErrBinaryLog
	}
	return string(data), nil
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	return string(utf16.Decode(u))
}

func mostlyASCII(s string) bool {
	ascii, total := 0, 0
	for _, r := range s {
		if r < 0x80 {
			ascii++
		}
		total++
		if total == 4096 {
			break
		}
	}
	return ascii*2 >= total
}

// looksUTF16LE spots BOM-less UTF-16LE ASCII text: a NUL after nearly
// every printable byte.
func looksUTF16LE(b []byte) bool {
	n := min(len(b), 4096) &^ 1
	if n < 8 {
		return false
	}
	pairs := 0
	for i := 0; i < n; i += 2 {
		if b[i] != 0 && b[i+1] == 0 {
			pairs++
		}
	}
	return pairs*10 >= (n/2)*9
}

// looksBinary samples the start of the input: more than 30% NUL bytes,
// control bytes (other than tab, newline, carriage return, form feed,
// escape) or invalid UTF-8 is not a log.
func looksBinary(b []byte) bool {
	n := min(len(b), 64<<10)
	sample := b[:n]
	bad, total := 0, 0
	for len(sample) > 0 {
		r, size := utf8.DecodeRune(sample)
		if r == utf8.RuneError && size <= 1 {
			// A rune cut at the sample's end is not an error.
			if len(sample) < utf8.UTFMax && n < len(b) {
				break
			}
			bad++
		} else if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != 0x1b && r != '\v' {
			bad++
		}
		total++
		sample = sample[size:]
	}
	return total > 0 && bad*10 > total*3
}

// lineRef is a quoted line of the log.
type lineRef struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// DecidedKey is the evidence key, on every finding explain reports that is
// not benign, saying whether the log itself settles the finding's cause
// (true) or the finding is a symptom named by its commonest cause (false):
// a report whose root cause is not decided calls it "most likely".
const DecidedKey = "decided"

// Undecided reports whether f is a log finding whose cause the log does
// not settle.
func Undecided(f *checks.Finding) bool {
	d, ok := f.Evidence[DecidedKey].(bool)
	return ok && !d
}

// maxQuotedLines bounds the lines quoted per finding; maxQuoteBytes the
// length of each.
const (
	maxQuotedLines = 8
	maxQuoteBytes  = 300
)

func quote(h hit) lineRef {
	t := strings.TrimSpace(h.text)
	if len(t) > maxQuoteBytes {
		cut := maxQuoteBytes
		for cut > 0 && t[cut]&0xC0 == 0x80 {
			cut--
		}
		t = t[:cut] + "…"
	}
	return lineRef{Line: h.line, Text: t}
}

// draft is a finding being built.
type draft struct {
	id        string
	sig       *Signature // nil for a reasoner's own finding
	key       string
	cause     string
	severity  checks.Severity
	link      checks.Link
	symptom   bool
	benign    bool
	noFix     bool            // no fix attached: the cause is not proven (Signature.NoFix)
	framework string          // whose message (Signature.Framework); "" read from the lines
	lineFw    map[string]bool // the frameworks its matched lines name
	weight    int
	title     string
	detail    string
	notes     []string
	values    map[string]string
	multi     map[string][]string
	lines     []lineRef
	count     int
	firstLine int
	evidence  map[string]any
	next      []string
	fixes     []checks.Fix   // extra fixes before the cause's
	onlyFixes bool           // d.fixes replace the cause's (a reasoner knows better)
	reasons   []string       // reasoners that changed it
	hits      int            // lines routed to it (count adds the lines past the kept ones)
	valueHits map[string]int // per value name, the lines that extracted it
}

func (d *draft) addHit(h hit, fws func(string) []string) {
	d.count++
	d.hits++
	if d.firstLine == 0 || h.line < d.firstLine {
		d.firstLine = h.line
	}
	if len(d.lines) < maxQuotedLines {
		d.lines = append(d.lines, quote(h))
		// The framework is read from the quoted lines, the evidence the
		// reader sees (running its expressions over every hit of a
		// message repeated thousands of times cost most of explain's
		// time on such a log).
		for _, fw := range fws(h.text) {
			if d.lineFw == nil {
				d.lineFw = map[string]bool{}
			}
			d.lineFw[fw] = true
		}
	}
	if d.values == nil {
		d.values = map[string]string{}
		d.multi = map[string][]string{}
	}
	for k, v := range h.values {
		if v == "" {
			continue
		}
		if d.valueHits == nil {
			d.valueHits = map[string]int{}
		}
		d.valueHits[k]++
		if _, ok := d.values[k]; !ok {
			d.values[k] = v
		}
		if !contains(d.multi[k], v) && len(d.multi[k]) < 10 {
			d.multi[k] = append(d.multi[k], v)
		}
	}
}

func (d *draft) note(format string, a ...any) { d.notes = append(d.notes, fmt.Sprintf(format, a...)) }

func (d *draft) ev(k string, v any) {
	if d.evidence == nil {
		d.evidence = map[string]any{}
	}
	d.evidence[k] = v
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// factHit is a recorded fact.
type factHit = hit

// explainState is what one explanation knows.
type explainState struct {
	lib *library
	// broadOnly: the findings are the broad tier's (explainHits), which
	// gives one answer (oneBroadAnswer).
	broadOnly bool
	drafts    []*draft
	byKey     map[string]*draft
	fwMemo    map[string][]string // lineFrameworks
	facts     []factHit
	contexts  map[string][]lineRef
	success   []hit
	extra     map[*Signature]int
	// openFailures, otherFailures: failure lines no signature explains
	// (markOpenFailures), those a GPU problem can produce and the rest.
	openFailures  []lineRef
	otherFailures []lineRef
}

func (st *explainState) has(ctx string) bool { return len(st.contexts[ctx]) > 0 }

// maxAfterGap is how far below its question an answer may stand: the
// question's own line, then the answer (python -c printing a version line
// first puts it one further).
const maxAfterGap = 2

// justAfter reports whether one of the contexts marks one of the
// maxAfterGap lines above line (Signature.After).
func (st *explainState) justAfter(line int, ctxs []string) bool {
	for _, c := range ctxs {
		for _, l := range st.contexts[c] {
			if gap := line - l.Line; gap >= 1 && gap <= maxAfterGap {
				return true
			}
		}
	}
	return false
}

// factValues returns every recorded value of a fact, in line order.
func (st *explainState) factValues(name string) []hit {
	var out []hit
	for _, f := range st.facts {
		if _, ok := f.values[name]; ok {
			out = append(out, f)
		}
	}
	return out
}

// firstFact returns the first value of a fact.
func (st *explainState) firstFact(name string) (string, hit, bool) {
	for _, f := range st.facts {
		if v, ok := f.values[name]; ok && v != "" {
			return v, f, true
		}
	}
	return "", hit{}, false
}

// draftsOf returns the drafts of the signatures declaring role r.
func (st *explainState) draftsOf(r *sigRole) []*draft {
	var out []*draft
	for _, d := range st.drafts {
		if d.is(r) {
			out = append(out, d)
		}
	}
	return out
}

// draftsWithCause returns the live drafts whose cause is c.
func (st *explainState) draftsWithCause(c string) []*draft {
	var out []*draft
	for _, d := range st.drafts {
		if d.cause == c {
			out = append(out, d)
		}
	}
	return out
}

// failing reports whether any draft is an error or a warning.
func (st *explainState) failing() bool {
	for _, d := range st.drafts {
		if d.severity == checks.SevError || d.severity == checks.SevWarning {
			return true
		}
	}
	return false
}

// addHit routes a finding hit to its draft.
func (st *explainState) addHit(h hit) {
	s := h.sig
	key := s.ID
	for _, g := range s.GroupBy {
		key += "|" + strings.ToLower(h.values[g])
	}
	if s.By != nil {
		key += "|" + strings.ToLower(h.values[s.By.Value])
	}
	d := st.byKey[key]
	if d == nil {
		d = &draft{id: s.ID, sig: s, key: key}
		st.byKey[key] = d
		st.drafts = append(st.drafts, d)
	}
	d.addHit(h, st.lineFrameworks)
}

// lineFrameworks is lineFrameworksOf, once per line text (several
// signatures quote one line).
func (st *explainState) lineFrameworks(text string) []string {
	if fws, ok := st.fwMemo[text]; ok {
		return fws
	}
	if st.fwMemo == nil {
		st.fwMemo = map[string][]string{}
	}
	fws := lineFrameworksOf(text)
	st.fwMemo[text] = fws
	return fws
}

// newDraft adds a reasoner's own finding.
func (st *explainState) newDraft(id, cause string, sev checks.Severity, title, detail string) *draft {
	d := &draft{id: id, key: id, cause: cause, severity: sev, link: st.lib.linkOf(cause), title: title, detail: detail,
		values: map[string]string{}, multi: map[string][]string{}, weight: 12}
	st.drafts = append(st.drafts, d)
	return d
}

// contextOrder is the precedence of contexts when several could change a
// finding: WSL and containers are more specific than Windows paths.
var contextOrder = []string{"wsl", "container", "windows", "jupyter"}

// contextsOf lists the contexts a signature reacts to in precedence
// order: the cues first (explain_cues.go), those of contextOrder next,
// then the signature's own contexts (ld_path_cudnn...) by name.
func contextsOf(s *Signature) []string {
	out := append(append([]string(nil), cueContexts...), contextOrder...)
	var own []string
	for c := range s.Contexts {
		if !slices.Contains(contextOrder, c) && !isCue(c) {
			own = append(own, c)
		}
	}
	sort.Strings(own)
	return append(out, own...)
}

// resolve applies a signature's value cases and contexts to its draft.
func (st *explainState) resolve(d *draft) {
	s := d.sig
	d.cause, d.severity, d.symptom, d.benign, d.weight = s.Cause, s.Severity, s.Symptom, s.Benign, s.Weight
	d.noFix = s.NoFix
	d.framework = s.Framework
	d.link = s.Link
	if d.link == "" {
		d.link = st.lib.linkOf(s.Cause)
	}
	d.title = s.Title
	d.detail = s.Detail
	if d.detail == "" {
		d.detail = s.Doc
	}
	d.next = s.Next
	apply := func(o Override, fromContext bool) {
		if o.Cause != "" && o.Cause != d.cause {
			d.cause = o.Cause
			switch {
			case o.Link != "":
				d.link = o.Link
			case fromContext || s.Link == "":
				d.link = st.lib.linkOf(o.Cause)
			}
			if fromContext {
				d.symptom = false
				d.noFix = false
			}
		} else if o.Link != "" {
			d.link = o.Link
		}
		if o.Severity != "" {
			d.severity = o.Severity
		}
		if o.Benign {
			d.benign = true
		}
		if o.NotBenign {
			d.benign = false
		}
		if o.Symptom {
			d.symptom = true
		}
		if o.NoFix {
			d.noFix = true
		}
		if o.Title != "" {
			d.title = o.Title
		}
		if o.Detail != "" {
			d.detail = o.Detail
		}
		if o.Note != "" {
			d.notes = append(d.notes, o.Note)
		}
		if len(o.Next) > 0 {
			d.next = o.Next
		}
		if o.Framework != "" {
			d.framework = o.Framework
		}
		if o.Decide && fromContext {
			d.symptom = false
			d.noFix = false
		}
	}
	// A broad finding stays a symptom without a fix whatever a value or
	// a context changes (Signature.Tier).
	if s.Tier == TierBroad {
		defer func() { d.symptom, d.noFix = true, true }()
	}
	if s.By != nil {
		v := strings.ToLower(d.values[s.By.Value])
		if o, ok := s.By.Cases[v]; ok {
			apply(o, false)
		} else if s.By.Default != nil {
			apply(*s.By.Default, false)
		}
	}
	for _, c := range contextsOf(s) {
		o, ok := s.Contexts[c]
		if !ok || !st.has(c) || (o.From != "" && o.From != d.cause) {
			continue
		}
		if isCue(c) {
			// A cue moves only an undecided finding, and leaves it
			// undecided without a fix (explain_cues.go). A context of
			// the signature's own (a Ray worker, stubs on the loader
			// path, a Slurm job) says more about this very line, and
			// comes first.
			if !d.symptom || st.ownContextApplies(s, d.cause) {
				continue
			}
			apply(o, true)
			d.symptom, d.noFix = true, true
			d.ev("cue", c)
			d.ev("cue_lines", firstN(st.contexts[c], 2))
			break
		}
		if c == "windows" && o.Cause == "tf_windows_native_gpu_unsupported" {
			// TensorFlow 2.10 was the last release with GPU support on
			// native Windows: the verdict needs a TensorFlow of 2.11 or
			// later shown in the paste.
			switch st.windowsTFVerdict() {
			case windowsTFOld:
				d.noFix = true // pip install tensorflow would bring a CPU-only release there
				d.note("The paste comes from native Windows with TensorFlow 2.10 or older, which still supports the GPU there: it needs the CUDA 11.2 and cuDNN 8.1 DLLs on PATH (TensorFlow's log, TF_CPP_MIN_LOG_LEVEL=0, names the DLL it could not load).")
				d.ev("context", c)
				d.ev("context_lines", firstN(st.contexts[c], 2))
				return
			case windowsTFUnknown:
				noFix := d.noFix
				apply(o, true)
				// No version shown: the likeliest reading, not a verdict.
				d.symptom, d.noFix = true, noFix
				d.ev("context", c)
				d.ev("context_lines", firstN(st.contexts[c], 2))
				return
			}
		}
		apply(o, true)
		d.ev("context", c)
		d.ev("context_lines", firstN(st.contexts[c], 2))
		break
	}
}

// What the paste shows of TensorFlow's version on native Windows.
const (
	windowsTFUnknown = iota // no TensorFlow version shown
	windowsTFOld            // only versions up to 2.10: GPU still supported there
	windowsTFNew            // 2.11 or later (or tensorflow-intel, which only 2.11+ pulls in)
)

func (st *explainState) windowsTFVerdict() int {
	seen := false
	for _, f := range st.factValues("tf_version") {
		v := f.values["tf_version"]
		if v == "" {
			continue
		}
		if strings.HasPrefix(strings.ToLower(f.values["tf_dist"]), "tensorflow-intel") || strings.HasPrefix(strings.ToLower(f.values["tf_dist"]), "tensorflow_intel") {
			return windowsTFNew
		}
		if parseVer(v).cmp(ver{2, 11}) >= 0 {
			return windowsTFNew
		}
		seen = true
	}
	if seen {
		return windowsTFOld
	}
	return windowsTFUnknown
}

func firstN(xs []lineRef, n int) []lineRef {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

// explainText runs the whole explanation over decoded text.
func explainText(text, version string) *Report {
	start := time.Now()
	lib := mustLibrary()
	hits, extra := lib.m.scan(text)
	return explainHits(lib, hits, extra, version, start)
}

// explainHits reasons over the hits of a whole log.
func explainHits(lib *library, hits []hit, extra map[*Signature]int, version string, start time.Time) *Report {
	st := &explainState{lib: lib, byKey: map[string]*draft{}, contexts: map[string][]lineRef{}, extra: extra}
	var findingHits []hit
	for _, h := range hits {
		switch h.sig.Kind {
		case KindContext:
			st.contexts[h.sig.Context] = append(st.contexts[h.sig.Context], quote(h))
		case KindFact:
			st.facts = append(st.facts, h)
		case KindSuccess:
			st.success = append(st.success, h)
		default:
			findingHits = append(findingHits, h)
		}
	}
	// WSL pastes show Windows paths too (/mnt/c, wsl.exe): WSL wins.
	if st.has("wsl") {
		delete(st.contexts, "windows")
	}
	st.dropOutweighedCues()
	// A line a specific signature knows (a harmless notice too) is
	// explained by it: a broad signature does not read it again.
	known := map[int]bool{}
	for _, h := range findingHits {
		if h.sig.Tier != TierBroad {
			known[h.line] = true
		}
	}
	// Nor does it read the source code a traceback quotes (the line
	// below a Python frame line and indented deeper than it; IPython's
	// '---->' line): the words are the program's, not a message. A
	// frame without source ('File "<stdin>"') is followed by the next
	// frame or by the error itself, at the frame's indentation or less.
	frames := map[int]int{}
	for _, h := range hits {
		switch {
		case h.sig.Kind != KindContext:
		case h.sig.Context == "py_frame":
			frames[h.line] = indentOf(h.text)
		case h.sig.Context == "py_source":
			known[h.line] = true
		}
	}
	ipython := st.has("py_ipython_frame")
	for _, h := range findingHits {
		if docQuoteRE.MatchString(h.text) {
			continue
		}
		if h.sig.Tier == TierBroad {
			if in, ok := frames[h.line-1]; known[h.line] || (ok && indentOf(h.text) > in) {
				continue
			}
			if notAMessage(h.text, ipython) {
				continue
			}
		}
		ok := true
		for _, n := range h.sig.Needs {
			ok = ok && st.has(n)
		}
		if ok && len(h.sig.After) > 0 {
			ok = st.justAfter(h.line, h.sig.After)
		}
		if ok {
			st.addHit(h)
		}
	}
	st.markOpenFailures(findingHits, known)
	for _, r := range reasoners {
		if r.Phase == phaseHits {
			r.Run(st)
		}
	}
	for _, d := range st.drafts {
		if d.sig != nil {
			d.count += st.extra[d.sig]
			st.resolve(d)
		}
	}
	// Broad signatures (Signature.Tier) answer only when nothing else
	// does: the reasoners run without them (a reasoner that finds the
	// cause makes its own, decided finding), and they come back only when
	// no other finding is an error or a warning.
	var broad []*draft
	kept := st.drafts[:0]
	for _, d := range st.drafts {
		if d.sig != nil && d.sig.Tier == TierBroad {
			broad = append(broad, d)
		} else {
			kept = append(kept, d)
		}
	}
	st.drafts = kept
	for _, r := range reasoners {
		if r.Phase == phaseFindings {
			r.Run(st)
		}
	}
	if !st.failing() {
		// A paste that shows the GPU working (a device listed, a True
		// answer) contradicts the families that say it cannot work.
		if len(st.success) > 0 {
			keep := broad[:0]
			for _, d := range broad {
				if !d.is(roleContradictedByUse) {
					keep = append(keep, d)
				}
			}
			broad = keep
		}
		st.drafts = append(st.drafts, broad...)
		st.broadOnly = len(broad) > 0
	}
	rep := st.report()
	rep.Tool = host.Tool{Name: "doctor", Version: version}
	rep.Source = "log"
	rep.TimingsMS = map[string]float64{"explain": float64(time.Since(start).Microseconds()) / 1000}
	return rep
}

// indentOf counts a line's leading blanks (a tab as one).
func indentOf(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}

// linuxDriverFixes act on a Linux NVIDIA driver and its kernel modules
// (ubuntu-drivers, modprobe, DKMS, nouveau, /dev/nvidia* nodes, a Linux
// reboot).
var linuxDriverFixes = map[string]bool{
	checks.FixInstallDriver: true, checks.FixLoadNvidiaUVM: true, checks.FixModprobeNvidia: true,
	checks.FixDKMSRebuild: true, checks.FixBlacklistNouveau: true, checks.FixCreateDeviceNodes: true,
	checks.FixSecureBootSign: true, checks.FixReboot: true,
}

// platformFixes: a Linux driver's fix (installing one, loading its
// modules, rebuilding them, a Linux reboot) is never the fix in a paste
// from WSL 2, where the Windows driver serves Linux (no nvidia modules:
// /dev/dxg) and a Linux driver installed inside WSL breaks it
// (wsl_linux_driver_installed_inside_wsl): there it becomes the Windows
// driver's update and a WSL restart (windows-driver). On native Windows it
// is dropped; the finding's words say to install the driver from NVIDIA.
func (st *explainState) platformFixes(fixes []checks.Fix) []checks.Fix {
	wsl, windows := st.has("wsl"), st.has("windows")
	if !wsl && !windows {
		return fixes
	}
	out := fixes[:0:0]
	have := map[string]bool{}
	for _, f := range fixes {
		have[f.ID] = true
	}
	for _, f := range fixes {
		if !linuxDriverFixes[f.ID] {
			out = append(out, f)
			continue
		}
		if !wsl || have[checks.FixWindowsDriver] {
			continue
		}
		for _, w := range st.lib.fixesOf("wsl_libcuda_not_found") {
			if w.ID == checks.FixWindowsDriver {
				out = append(out, w)
				have[w.ID] = true
			}
		}
	}
	return out
}

// rank orders drafts: severity, specific before symptom, weight, line.
func rankDrafts(ds []*draft) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.severity.Rank() != b.severity.Rank() {
			return a.severity.Rank() < b.severity.Rank()
		}
		if a.symptom != b.symptom {
			return !a.symptom
		}
		if a.weight != b.weight {
			return a.weight > b.weight
		}
		return a.firstLine < b.firstLine
	})
}

// report turns the drafts into a Report.
func (st *explainState) report() *Report {
	ds := st.drafts
	rankDrafts(ds)
	var findings []checks.Finding
	seen := map[string]int{}
	hasBenign := false
	symptoms := map[string]bool{}
	ids := make([]string, 0, len(ds))
	for _, d := range ds {
		f := st.finding(d)
		if n := seen[f.ID]; n > 0 {
			f.ID = fmt.Sprintf("%s#%d", f.ID, n+1)
		}
		ids = append(ids, f.ID)
		seen[d.id]++
		if d.symptom {
			symptoms[f.ID] = true
		}
		if d.benign {
			hasBenign = true
		}
		findings = append(findings, f)
	}
	failing := st.failing()
	if len(st.success) > 0 {
		findings = append(findings, st.successFinding())
	}
	if ff := st.factsFinding(); ff != nil {
		findings = append(findings, *ff)
	}
	var benignRoot *checks.Finding
	switch {
	case failing:
	case hasBenign && len(st.openFailures) > 0:
		// First: the headline is what the reader needs first.
		findings = append([]checks.Finding{st.openFailureFinding(st.openFailures, true)}, findings...)
	case hasBenign:
		f := st.benignFinding()
		findings = append(findings, f)
		benignRoot = &f
	case len(st.openFailures)+len(st.otherFailures) > 0 && (len(st.success) > 0 || st.recognisedOutput() || len(ds) > 0):
		// What was recognised shows no problem, but the paste fails
		// where nothing recognised explains it (explain_benign.go).
		findings = append([]checks.Finding{st.openFailureFinding(st.allFailures(), false)}, findings...)
	case len(st.success) == 0 && !st.recognisedOutput() && len(ds) == 0:
		findings = append(findings, st.unrecognisedFinding())
	case len(st.success) == 0:
		findings = append(findings, st.nothingWrongFinding())
	}
	r := Assemble(findings)
	foldSymptoms(r, symptoms)
	if st.broadOnly {
		oneBroadAnswer(r, ds, ids)
	}
	if benignRoot != nil {
		r.RootCause = &RootCause{ID: benignRoot.ID, Cause: benignRoot.Cause, Title: benignRoot.Title}
	}
	if r.RootCause != nil {
		var explained []string
		for i := range r.Findings {
			if b := r.Findings[i].BlockedBy; b != nil && *b == r.RootCause.ID {
				explained = append(explained, r.Findings[i].ID)
			}
		}
		if len(explained) > 0 {
			for i := range r.Findings {
				if r.Findings[i].ID == r.RootCause.ID {
					r.Findings[i].Evidence["explains"] = explained
				}
			}
		}
	}
	return r
}

// foldSymptoms puts under the root cause what a log shows of it without
// being a cause of its own: symptoms (a message that is a consequence of
// whatever broke, such as "Cannot dlopen some GPU libraries") that no
// declaration ties to a cause, and other messages with the root cause's
// own label (Xid 79 and "fallen off the bus" are one problem). They leave
// Causes. A symptom whose label is declared to rest on less than the
// root's (checks.Check.CauseRequires: a failed import does not rest on
// the driver) stays a cause of its own, unless it is seen at run time
// (below).
//
// When the root cause is itself a symptom (undecided), it still explains
// its own label's other messages (a cuDNN handle failure and TensorFlow's
// 'Failed to get convolution algorithm' after it are one failure) and the
// symptoms seen at run time (link runtime: a framework that sees no GPU,
// a library that did not initialise), which rest on every link below:
// is_available() False next to a driver nvidia-smi cannot reach is what
// that driver fault looks like from Python, not a second fault.
func foldSymptoms(r *Report, symptoms map[string]bool) {
	if r.RootCause == nil || r.RootCause.ID == "" {
		return
	}
	root := r.RootCause.ID
	var rf *checks.Finding
	for i := range r.Findings {
		if r.Findings[i].ID == root {
			rf = &r.Findings[i]
		}
	}
	if rf == nil {
		return
	}
	undecidedRoot := symptoms[root]
	folded := map[string]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		if !f.Failing() || f.BlockedBy != nil || f.ID == root {
			continue
		}
		fold := f.Cause == r.RootCause.Cause
		if !fold && symptoms[f.ID] {
			fold = (f.Link == checks.LinkRuntime && rf.Link.Order() <= f.Link.Order()) ||
				(!undecidedRoot && !independentOf(f, rf))
		}
		if fold {
			id := root
			f.BlockedBy = &id
			folded[f.ID] = true
		}
	}
	keep := r.Causes[:0]
	for _, c := range r.Causes {
		if !folded[c.ID] {
			keep = append(keep, c)
		}
	}
	r.Causes = keep
}

// independentOf reports whether the declarations say f does not rest on
// root although f's label names what would: its label is one a check
// narrows (checks.Check.CauseRequires) and root is not among what the
// narrowed label rests on.
func independentOf(f, root *checks.Finding) bool {
	defaultGraphOnce.Do(func() { defaultGraph = newCausalGraph(checks.All) })
	defaultGraphMu.Lock()
	n := defaultGraph.node(f)
	defaultGraphMu.Unlock()
	return strings.Contains(n, "#") && !RestsOn(f, root)
}

// fill replaces {name} in a template with extracted values.
func fill(tmpl string, v map[string]string) string {
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			break
		}
		b.WriteString(tmpl[:i])
		if val := v[tmpl[i+1:i+j]]; val != "" {
			b.WriteString(val)
		} else {
			b.WriteString("unknown")
		}
		tmpl = tmpl[i+j+1:]
	}
	return b.String()
}

// finding builds the checks.Finding of a draft.
func (st *explainState) finding(d *draft) checks.Finding {
	ev := map[string]any{}
	for k, v := range d.evidence {
		ev[k] = v
	}
	if d.sig != nil {
		ev["signature"] = d.sig.ID
	}
	if len(d.lines) > 0 {
		ev["lines"] = d.lines
	}
	if d.count > 0 {
		ev["occurrences"] = d.count
	}
	if len(d.values) > 0 {
		vals := map[string]any{}
		for k, v := range d.values {
			if vs := d.multi[k]; len(vs) > 1 {
				vals[k] = vs
			} else {
				vals[k] = v
			}
		}
		ev["values"] = vals
	}
	if len(d.reasons) > 0 {
		ev["reasoning"] = d.reasons
	}
	detail := fill(d.detail, d.values)
	for _, n := range d.notes {
		detail = strings.TrimSpace(detail + " " + n)
	}
	next := d.next
	if len(next) == 0 {
		next = st.lib.causes[d.cause].Next
	}
	if !d.benign {
		// decided: the log itself settles this finding's cause. A symptom
		// (a consequence several causes share, named by its commonest
		// reading) is not decided: the report says "most likely" and
		// ask_for names what would decide it.
		ev[DecidedKey] = !d.symptom
	}
	if len(next) > 0 && !d.benign {
		ev["ask_for"] = next
		if d.symptom {
			detail = strings.TrimSpace(detail + " To find the cause, paste the output of: " + strings.Join(next, " ; "))
		}
	}
	var fixes []checks.Fix
	if !d.benign && !d.noFix {
		fixes = append(fixes, d.fixes...)
		if !d.onlyFixes {
			fixes = append(fixes, st.lib.fixesOf(d.cause)...)
		}
	}
	if fw := frameworkOf(d); fw != "" {
		ev["framework"] = fw
		fixes = fixesFor(fw, fixes)
		if fw != FrameworkTensorFlow && d.sig != nil && d.sig.FixesForTensorFlowOnly && !d.onlyFixes {
			fixes = nil
		}
	}
	fixes = st.platformFixes(fixes)
	if fixes == nil {
		fixes = []checks.Fix{}
	}
	check := d.id
	if i := strings.IndexByte(check, '/'); i > 0 {
		check = check[:i] // explain.ecc_count/gpu0 comes from explain.ecc_count
	}
	title := fill(d.title, d.values)
	// A failure names whose message it is; a harmless notice needs not
	// (the benign summary joins their titles).
	if fw, _ := ev["framework"].(string); fw != "" && !d.benign {
		title = titleWithFramework(fw, title)
	}
	return checks.Finding{
		ID: d.id, Check: check, Cause: d.cause, Severity: d.severity, Link: d.link,
		Title: title, Detail: detail, Evidence: ev, Fixes: fixes,
	}
}

func (st *explainState) successFinding() checks.Finding {
	var lines []lineRef
	for _, h := range st.success {
		if len(lines) < maxQuotedLines {
			lines = append(lines, quote(h))
		}
	}
	return checks.Finding{
		ID: "explain.gpu_in_use", Check: "explain.gpu_in_use", Cause: "healthy", Severity: checks.SevOK, Link: checks.LinkRuntime,
		Title:    "The log shows the framework using a GPU",
		Evidence: map[string]any{"lines": lines, "occurrences": len(st.success)}, Fixes: []checks.Fix{},
	}
}

// factsFinding reports what the log says about the machine: versions and
// GPUs, for the person reading the report.
func (st *explainState) factsFinding() *checks.Finding {
	names := []struct{ key, label string }{
		{"driver_version", "driver"}, {"kernel_driver", "kernel module"}, {"driver_cuda", "driver's CUDA"},
		{"tf_version", "TensorFlow"}, {"required_cuda", "build's CUDA"}, {"python", "Python"}, {"gpu_name", "GPU"},
	}
	ev := map[string]any{}
	var parts []string
	for _, n := range names {
		var vals []string
		for _, f := range st.factValues(n.key) {
			if v := f.values[n.key]; v != "" && !contains(vals, v) && len(vals) < 8 {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		ev[n.key] = vals
		parts = append(parts, n.label+" "+strings.Join(vals, ", "))
	}
	var ctxs []string
	for _, c := range contextOrder {
		if st.has(c) {
			ctxs = append(ctxs, c)
		}
	}
	if len(ctxs) > 0 {
		ev["contexts"] = ctxs
		parts = append(parts, "from "+strings.Join(ctxs, ", "))
	}
	if len(parts) == 0 {
		return nil
	}
	return &checks.Finding{
		ID: "explain.facts", Check: "explain.facts", Cause: "healthy", Severity: checks.SevInfo, Link: checks.LinkPlatform,
		Title: "Read from the log: " + strings.Join(parts, "; "), Evidence: ev, Fixes: []checks.Fix{},
	}
}

func (st *explainState) benignFinding() checks.Finding {
	// The paste shows no failure (explain_benign.go): if the program does
	// fail, its own output up to the error is what decides, before any
	// framework's device query.
	next := append([]string{benignFailingOutput}, st.benignDeviceQuery()...)
	title := "Only harmless messages: nothing in this log needs fixing"
	if len(st.success) > 0 {
		title = "Only harmless messages, and the GPU is in use"
	}
	seen := "and the log shows no failure"
	ev := map[string]any{"ask_for": next}
	if len(st.otherFailures) > 0 {
		// The program's own error (explain_benign.go): the GPU messages
		// are harmless, and the error is not theirs.
		first := st.otherFailures[0]
		title = "Only harmless GPU messages: the error at line " + strconv.Itoa(first.Line) + " is the program's own, not the GPU setup's"
		seen = "and the error at line " + strconv.Itoa(first.Line) + " ('" + first.Text + "') names nothing of the GPU stack: as far as this log shows, it is the program's own (its code, its arguments, its Python), which the GPU setup does not explain"
		var lines []lineRef
		for _, l := range st.otherFailures {
			if len(lines) < maxQuotedLines {
				lines = append(lines, l)
			}
		}
		ev["lines"] = lines
	}
	return checks.Finding{
		ID: "explain.benign_only", Check: "explain.benign_only", Cause: "benign_warning_only", Severity: checks.SevInfo, Link: checks.LinkRuntime,
		Title: title,
		Detail: "Every recognised message is a known harmless notice (" + st.benignNoticeNames() + "), " + seen + ". " +
			"If the program still fails or does not use the GPU, paste: " + strings.Join(next, " ; "),
		Evidence: ev, Fixes: []checks.Fix{},
	}
}

func (st *explainState) unrecognisedFinding() checks.Finding {
	next := []string{
		"TF_CPP_MAX_VLOG_LEVEL=1 python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\" 2>&1 | tail -80",
		"nvidia-smi",
		"sudo dmesg | grep -i -e nvrm -e xid -e nvidia",
		"python -m pip list | grep -i -e tensorflow -e nvidia",
	}
	return checks.Finding{
		ID: "explain.unrecognised", Check: "explain.unrecognised", Cause: "healthy", Severity: checks.SevInfo, Link: checks.LinkRuntime,
		Title:   "Nothing in the log was recognised",
		Detail:  "No known GPU, driver, CUDA or TensorFlow message was found. To decide, paste the output of: " + strings.Join(next, " ; "),
		Skipped: true, Evidence: map[string]any{"ask_for": next}, Fixes: []checks.Fix{},
	}
}

func (st *explainState) nothingWrongFinding() checks.Finding {
	next := st.lib.causes["benign_warning_only"].Next
	return checks.Finding{
		ID: "explain.no_problem_seen", Check: "explain.no_problem_seen", Cause: "healthy", Severity: checks.SevInfo, Link: checks.LinkRuntime,
		Title:    "No problem in the recognised output",
		Detail:   "The log shows versions and device tables but no error. To decide, paste the failing program's output: " + strings.Join(next, " ; "),
		Evidence: map[string]any{"ask_for": next}, Fixes: []checks.Fix{},
	}
}
