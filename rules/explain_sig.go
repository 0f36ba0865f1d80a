package rules

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/knowledge"
)

// Log signatures are data: rules/signatures/*.json, embedded in the binary,
// every pattern compiled when first used, and every file checked by
// TestShippedSignatures. A signature is written from what a message means
// (shared/knowledge/knowledge.md sections 6 and 7), not from one example's
// wording, so it matches the message across TensorFlow versions, log
// prefixes and frameworks.

//go:embed signatures/*.json
var signatureFS embed.FS

// Signature kinds.
const (
	KindFinding = "finding" // a matched line becomes (part of) a finding
	KindFact    = "fact"    // a matched line records values for the reasoners
	KindContext = "context" // a matched line marks where the paste comes from
	KindSuccess = "success" // a matched line shows the GPU working
)

// TierBroad is Signature.Tier for a family-level signature (broad.json).
const TierBroad = "broad"

// Override changes a finding when a value or a context says more.
type Override struct {
	// From limits a context override to findings whose cause is From.
	From     string          `json:"from,omitempty"`
	Cause    string          `json:"cause,omitempty"`
	Severity checks.Severity `json:"severity,omitempty"`
	Link     checks.Link     `json:"link,omitempty"`
	Title    string          `json:"title,omitempty"`
	Benign   bool            `json:"benign,omitempty"`
	// Symptom and NoFix make a value's reading a symptom without a fix
	// (libcuda.so.1 missing reads as driver_missing, which it does not
	// prove). A context that names a cause decides it again.
	Symptom bool `json:"symptom,omitempty"`
	NoFix   bool `json:"no_fix,omitempty"`
	// Detail replaces the finding's detail (before notes).
	Detail string `json:"detail,omitempty"`
	// Note is added to the finding's detail.
	Note string `json:"note,omitempty"`
	// Next replaces what to paste next (a platform without the
	// signature's commands: no lsmod on Windows).
	Next []string `json:"next,omitempty"`
	// Framework is whose message this case is (see Signature.Framework).
	Framework string `json:"framework,omitempty"`
	// NotBenign makes a harmless message a finding in this context (nvcc
	// missing is harmless unless the paste builds CUDA code).
	NotBenign bool `json:"not_benign,omitempty"`
	// Decide makes a context settle the signature's own cause: a symptom
	// named by its commonest reading (error 802 as Fabric Manager) is
	// decided where the paste shows the fact that proves it (an NVSwitch
	// system). A context that names another cause decides it anyway.
	Decide bool `json:"decide,omitempty"`
}

// ByValue picks an override by an extracted value (lower-cased).
type ByValue struct {
	Value   string              `json:"value"`
	Cases   map[string]Override `json:"cases"`
	Default *Override           `json:"default,omitempty"`
}

// Signature is one log message explain knows.
type Signature struct {
	ID      string `json:"id"`
	Kind    string `json:"kind,omitempty"`
	Context string `json:"context,omitempty"` // KindContext: the context it marks
	Title   string `json:"title"`
	Doc     string `json:"doc"`
	// Detail is shown with the finding; Doc when empty.
	Detail   string          `json:"detail,omitempty"`
	Cause    string          `json:"cause,omitempty"`
	Severity checks.Severity `json:"severity,omitempty"`
	// Link places the finding on the chain; the cause's link when empty.
	Link checks.Link `json:"link,omitempty"`
	// Symptom marks a consequence: any other finding of its link that is
	// not a symptom is the more likely cause.
	Symptom bool `json:"symptom,omitempty"`
	// Benign marks a harmless message.
	Benign bool `json:"benign,omitempty"`
	// NoFix marks a symptom whose cause the line alone does not prove
	// (a bare CUDA_ERROR_NO_DEVICE): the finding carries what to paste
	// next and no fix, unless a context or a reasoner names the cause.
	NoFix bool `json:"no_fix,omitempty"`
	// Framework is whose message this is (pytorch, paddle, opencv...;
	// explain_framework.go): another framework's finding gets none of
	// the TensorFlow fixes its cause carries. Empty: read from the
	// matched lines.
	Framework string `json:"framework,omitempty"`
	// FixesForTensorFlowOnly: the cause's fixes fit this message only when
	// it is TensorFlow's (pip's pin conflict: reinstalling TensorFlow
	// restores its pins); another framework's gets none.
	FixesForTensorFlowOnly bool `json:"fixes_for_tensorflow_only,omitempty"`
	// Weight orders findings of the same severity on one link.
	Weight int `json:"weight,omitempty"`
	// Roles are what reasoners treat this signature as ("no_cuda_device",
	// "out_of_memory"): a reasoner names the signatures it reads by role,
	// never by ID, so renaming a signature keeps its behaviour and the
	// JSON shows what depends on it. Each role, its meaning and the
	// reasoner that reads it are listed in explain_roles.go; the library
	// refuses an unknown role, a role on the wrong kind of signature and a
	// one-signature role declared twice.
	Roles []string `json:"roles,omitempty"`
	// Tier "broad" marks a family-level signature (signatures/broad.json):
	// it matches every wording of a failure family by the words each
	// wording must contain ("driver" with "too old|insufficient|update"
	// and a CUDA word on an error line), so it knows what the family
	// means but not which of its causes this log shows. Its finding is
	// always a symptom without a fix (decided false, "Most likely root
	// cause", asking for what would decide; a value case or a context
	// may change its label, never decide it) and it answers only when
	// nothing else does:
	// explainHits sets broad findings aside and keeps them only when no
	// other signature or reasoner reported an error or a warning.
	// Harmless notices do not count (a real error next to them is still
	// the answer), but a line any other finding signature matched, a
	// harmless one too, is never read by a broad one, nor is a run of
	// wrapped lines joined for it (its words must stand on one line).
	// Empty: an ordinary, specific signature.
	Tier string `json:"tier,omitempty"`
	// Keywords pre-filter lines: a line is tried against Patterns only when
	// it contains one of them (lower-case, matched without regard to case).
	Keywords []string `json:"keywords"`
	// Unless skips a line that contains one of these (lower-case).
	Unless []string `json:"unless,omitempty"`
	// Patterns are RE2 regular expressions; named groups are the values
	// the signature extracts.
	Patterns []string `json:"patterns"`
	// Needs lists contexts that must be present elsewhere in the paste.
	Needs []string `json:"needs,omitempty"`
	// After lists contexts one of which must mark one of the two lines
	// just above the matched line: the line answers that question (a
	// bare False answers torch.cuda.is_available() only right below it).
	After []string `json:"after,omitempty"`
	// GroupBy names values whose distinct combinations become distinct
	// findings (one finding per missing library).
	GroupBy  []string            `json:"group_by,omitempty"`
	By       *ByValue            `json:"by,omitempty"`
	Contexts map[string]Override `json:"contexts,omitempty"`
	// Next is what to paste next to decide.
	Next     []string `json:"next,omitempty"`
	Sources  []string `json:"sources,omitempty"`
	Examples []string `json:"examples"`

	File  string           `json:"-"`
	re    []*regexp.Regexp `json:"-"`
	roles []*sigRole       `json:"-"` // Roles, resolved
}

// causeInfo is what explain attaches to a cause: its link, its fixes and
// what to ask for.
type causeInfo struct {
	Link  checks.Link  `json:"link"`
	Fixes []checks.Fix `json:"fixes"`
	Next  []string     `json:"next"`
}

// library is everything explain loads from rules/signatures.
type library struct {
	sigs   []*Signature
	byID   map[string]*Signature
	causes map[string]causeInfo
	m      *matcher
}

var (
	libOnce sync.Once
	libVal  *library
	libErr  error
)

// loadLibrary parses and compiles the embedded signature files once.
func loadLibrary() (*library, error) {
	libOnce.Do(func() { libVal, libErr = parseLibrary(signatureFS) })
	return libVal, libErr
}

func mustLibrary() *library {
	l, err := loadLibrary()
	if err != nil {
		// The shipped files are checked by TestShippedSignatures: this is
		// a build defect, never a user error.
		panic("rules: log signatures: " + err.Error())
	}
	return l
}

type sigFile struct {
	Source     string       `json:"source"`
	Signatures []*Signature `json:"signatures"`
}

type causesFile struct {
	Source string               `json:"source"`
	Causes map[string]causeInfo `json:"causes"`
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// parseLibrary reads signatures/*.json from fsys.
func parseLibrary(fsys fs.FS) (*library, error) {
	entries, err := fs.ReadDir(fsys, "signatures")
	if err != nil {
		return nil, err
	}
	l := &library{byID: map[string]*Signature{}}
	var errs []string
	for _, e := range entries {
		name := path.Join("signatures", e.Name())
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		switch e.Name() {
		case "causes.json":
			var cf causesFile
			if err := decodeStrict(b, &cf); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
			}
			l.causes = cf.Causes
		default:
			var sf sigFile
			if err := decodeStrict(b, &sf); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			for _, s := range sf.Signatures {
				s.File = e.Name()
				l.sigs = append(l.sigs, s)
			}
		}
	}
	if len(errs) == 0 {
		errs = l.validate()
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, fmt.Errorf("invalid signature library:\n  %s", strings.Join(errs, "\n  "))
	}
	return l, nil
}

var sigIDRE = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$`)

var validSeverity = map[checks.Severity]bool{checks.SevError: true, checks.SevWarning: true, checks.SevInfo: true}

// validate checks the library: IDs, kinds, cause labels, links, fix IDs,
// patterns, keywords and that every example matches its own signature.
func (l *library) validate() []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	contexts := map[string]bool{}
	for _, s := range l.sigs {
		if s.Kind == KindContext {
			contexts[s.Context] = true
		}
	}
	checkCause := func(where, c string) {
		if c == "" {
			return
		}
		if !knowledge.IsCause(c) {
			bad("%s: unknown cause label %q", where, c)
		} else if _, ok := l.causes[c]; !ok {
			bad("%s: cause %q has no entry in causes.json", where, c)
		}
	}
	checkOverride := func(where string, o Override) {
		checkCause(where, o.Cause)
		checkCause(where+" from", o.From)
		if o.Severity != "" && !validSeverity[o.Severity] {
			bad("%s: bad severity %q", where, o.Severity)
		}
		if o.Link != "" && o.Link.Order() == len(checks.Links) {
			bad("%s: unknown link %q", where, o.Link)
		}
		if o.Framework != "" && !frameworks[o.Framework] {
			bad("%s: unknown framework %q", where, o.Framework)
		}
	}
	for label, ci := range l.causes {
		if !knowledge.IsCause(label) {
			bad("causes.json: unknown cause label %q", label)
		}
		if ci.Link.Order() == len(checks.Links) {
			bad("causes.json %s: unknown link %q", label, ci.Link)
		}
		for _, fx := range ci.Fixes {
			if err := checks.CheckPrinted(fx); err != nil {
				bad("causes.json %s: %v", label, err)
			}
			if fx.Title == "" || len(fx.Steps) == 0 || (fx.Risk != checks.RiskSafe && fx.Risk != checks.RiskModerate && fx.Risk != checks.RiskDangerous) {
				bad("causes.json %s: fix %s needs a title, steps and a risk", label, fx.ID)
			}
		}
	}
	for _, s := range l.sigs {
		where := s.File + " " + s.ID
		if !sigIDRE.MatchString(s.ID) {
			bad("%s: bad ID (want dotted lower-case)", where)
		}
		if l.byID[s.ID] != nil {
			bad("%s: duplicate ID", where)
		}
		l.byID[s.ID] = s
		if s.Kind == "" {
			s.Kind = KindFinding
		}
		if s.Title == "" || s.Doc == "" {
			bad("%s: needs a title and a doc", where)
		}
		for _, e := range checkRoles(s) {
			bad("%s: %s", where, e)
		}
		switch s.Kind {
		case KindFinding:
			checkCause(where, s.Cause)
			if s.Cause == "" {
				bad("%s: a finding signature needs a cause", where)
			}
			if !validSeverity[s.Severity] {
				bad("%s: bad severity %q", where, s.Severity)
			}
			if s.Link != "" && s.Link.Order() == len(checks.Links) {
				bad("%s: unknown link %q", where, s.Link)
			}
			if s.Framework != "" && !frameworks[s.Framework] {
				bad("%s: unknown framework %q", where, s.Framework)
			}
			if s.Benign && s.Cause != "benign_warning_only" {
				bad("%s: a benign signature must have cause benign_warning_only", where)
			}
		case KindContext:
			if s.Context == "" {
				bad("%s: a context signature needs a context name", where)
			}
		case KindFact, KindSuccess:
		default:
			bad("%s: unknown kind %q", where, s.Kind)
		}
		if s.Kind != KindFinding && (s.Cause != "" || s.By != nil || len(s.Contexts) > 0) {
			bad("%s: only finding signatures carry causes", where)
		}
		if s.By != nil {
			if s.By.Value == "" {
				bad("%s: by needs a value name", where)
			}
			for k, o := range s.By.Cases {
				if k != strings.ToLower(k) {
					bad("%s: by case %q must be lower-case", where, k)
				}
				checkOverride(where+" by "+k, o)
				if o.Decide {
					bad("%s by %s: only a context decides (decide)", where, k)
				}
			}
			if s.By.Default != nil {
				checkOverride(where+" by default", *s.By.Default)
				if s.By.Default.Decide {
					bad("%s by default: only a context decides (decide)", where)
				}
			}
		}
		for name, o := range s.Contexts {
			if !contexts[name] {
				bad("%s: unknown context %q", where, name)
			}
			if isCue(name) && (o.Decide || o.Benign || o.Severity != "") {
				bad("%s context %s: a cue only moves an undecided finding to another label (explain_cues.go)", where, name)
			}
			checkOverride(where+" context "+name, o)
		}
		for _, n := range s.Needs {
			if !contexts[n] {
				bad("%s: needs unknown context %q", where, n)
			}
		}
		for _, n := range s.After {
			if !contexts[n] {
				bad("%s: after unknown context %q", where, n)
			}
		}
		switch s.Tier {
		case "":
		case TierBroad:
			// A broad finding never decides: it is a symptom that says
			// what would decide. A value case (the library a line
			// names) or a context (a container, WSL) may pick its most
			// likely label, never decide it: resolve keeps a broad
			// finding a symptom without a fix whatever overrides it.
			if s.Kind != KindFinding || !s.Symptom || len(s.Next) == 0 || s.Benign {
				bad("%s: a broad signature is a finding, a symptom, not benign, and says what would decide (next)", where)
			}
			overrides := map[string]Override{}
			if s.By != nil {
				for k, o := range s.By.Cases {
					overrides["value case "+k] = o
				}
			}
			for k, o := range s.Contexts {
				overrides["context "+k] = o
			}
			for k, o := range overrides {
				if o.Link != "" || o.Benign || o.Decide || o.Severity != "" {
					bad("%s: a broad signature's %s may only change the cause and the words", where, k)
				}
			}
		default:
			bad("%s: unknown tier %q", where, s.Tier)
		}
		if len(s.Keywords) == 0 || len(s.Patterns) == 0 {
			bad("%s: needs keywords and patterns", where)
		}
		for _, k := range append(append([]string{}, s.Keywords...), s.Unless...) {
			if k == "" || k != strings.ToLower(k) || !isASCII(k) {
				bad("%s: keyword %q must be non-empty lower-case ASCII", where, k)
			}
		}
		s.re = nil
		for _, p := range s.Patterns {
			re, err := regexp.Compile(p)
			if err != nil {
				bad("%s: pattern %q: %v", where, p, err)
				continue
			}
			s.re = append(s.re, re)
		}
		if len(s.Examples) == 0 {
			bad("%s: needs at least one example line", where)
		}
	}
	for _, r := range sigRoles {
		var ids []string
		for _, s := range l.sigs {
			if s.is(r) {
				ids = append(ids, s.ID)
			}
		}
		if r.one && len(ids) > 1 {
			bad("role %q is declared by %s: the reasoner that reads it adds lines under one signature", r.name, strings.Join(ids, ", "))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	// Every example must get through the keyword filter and a pattern.
	l.m = newMatcher(l.sigs)
	sc := l.m.newScanner()
	for _, s := range l.sigs {
		for _, ex := range s.Examples {
			if !sc.lineMatches(s, ex) {
				bad("%s %s: example does not match: %q", s.File, s.ID, ex)
			}
		}
	}
	return errs
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// linkOf is where a cause sits on the chain.
func (l *library) linkOf(cause string) checks.Link {
	if ci, ok := l.causes[cause]; ok {
		return ci.Link
	}
	return checks.LinkRuntime
}

// fixesOf returns a copy of a cause's fixes.
func (l *library) fixesOf(cause string) []checks.Fix {
	ci := l.causes[cause]
	out := make([]checks.Fix, 0, len(ci.Fixes))
	for _, f := range ci.Fixes {
		f.Steps = append([]string(nil), f.Steps...)
		out = append(out, f)
	}
	return out
}

// ExplainFixes returns every fix explain can attach to a cause (from
// causes.json), for the test that ties every emitted fix ID to the
// catalog.
func ExplainFixes() []checks.Fix {
	l := mustLibrary()
	labels := make([]string, 0, len(l.causes))
	for c := range l.causes {
		labels = append(labels, c)
	}
	sort.Strings(labels)
	var out []checks.Fix
	for _, c := range labels {
		out = append(out, l.fixesOf(c)...)
	}
	return out
}

// normalizeValues derives values the signatures key on from raw ones:
// "library" gives "lib" (cudnn, cublas, cuda...) and "lib_version";
// "requirement" gives "requirement_kind" (nvidia-cudnn-cu12 -> cudnn);
// "cuda_tag" gives "required_cuda" (121 -> 12.1), "cuda_major" too (12 -> 12.0).
func normalizeValues(v map[string]string) {
	if lib, ok := v["library"]; ok {
		name, ver := parseLibraryName(lib)
		v["lib"] = name
		if ver != "" {
			v["lib_version"] = ver
		}
	}
	// A wheel's CUDA tag (torch +cu121, paddlepaddle-gpu .post117): the
	// last digit is the minor version.
	if tag := v["cuda_tag"]; len(tag) >= 2 && isDigits(tag) && v["required_cuda"] == "" {
		v["required_cuda"] = tag[:len(tag)-1] + "." + tag[len(tag)-1:]
	}
	// A wheel named for a CUDA major (jaxlib +cuda12, cupy-cuda12x): drivers
	// of one major family run every minor of it, so the major decides.
	if m := v["cuda_major"]; m != "" && isDigits(m) && v["required_cuda"] == "" {
		v["required_cuda"] = m + ".0"
	}
	if req, ok := v["requirement"]; ok {
		k := strings.TrimPrefix(strings.ToLower(req), "nvidia-")
		if i := strings.LastIndex(k, "-cu"); i > 0 {
			k = k[:i]
		}
		v["requirement_kind"] = k
	}
}

// parseLibraryName turns a library file name into the library's short name
// and its version: libcudnn.so.8 -> (cudnn, 8), libcublasLt.so.12 ->
// (cublas, 12), cudart64_110.dll -> (cudart, 11.0), nvcuda.dll -> (cuda, "").
func parseLibraryName(file string) (name, version string) {
	base := file
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	base = strings.ToLower(strings.TrimSpace(base))
	if stem, ok := strings.CutSuffix(base, ".dll"); ok {
		if i := strings.LastIndex(stem, "_"); i > 0 && isDigits(stem[i+1:]) {
			version = stem[i+1:]
			stem = stem[:i]
			switch {
			case len(version) == 3: // cudart64_110 = 11.0, cudart64_101 = 10.1
				version = version[:2] + "." + version[2:]
			case len(version) == 2 && (version[0] == '8' || version[0] == '9'):
				// CUDA 8 and 9 named major and minor: cudart64_90 = 9.0,
				// cublas64_91 = 9.1; from CUDA 10.1 cublas64_10 is major 10.
				version = version[:1] + "." + version[1:]
			}
		}
		stem = strings.TrimSuffix(stem, "64")
		if stem == "nvcuda" {
			stem = "cuda"
		}
		return shortLib(stem), version
	}
	base = strings.TrimPrefix(base, "lib")
	if i := strings.Index(base, ".so"); i >= 0 {
		version = strings.TrimPrefix(base[i+3:], ".")
		base = base[:i]
	}
	return shortLib(base), version
}

func shortLib(stem string) string {
	if i := strings.Index(stem, "_"); i > 0 { // cudnn_cnn_infer, nvinfer_plugin
		stem = stem[:i]
	}
	if stem == "cublaslt" {
		return "cublas"
	}
	return stem
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SignatureDoc describes one log signature or reasoning step for `doctor
// rules`.
type SignatureDoc struct {
	Kind   string   // signature, reasoning
	ID     string   // stable ID, the finding's ID
	Link   string   // the chain link of its main cause
	Title  string   // one line
	Causes []string // every cause it can report
	Doc    string   // what the message means
}

// SignatureDocs lists the log signatures that produce findings and the
// reasoning steps that compare lines, for `doctor rules`.
func SignatureDocs() []SignatureDoc {
	l := mustLibrary()
	var out []SignatureDoc
	for _, s := range l.sigs {
		if s.Kind != KindFinding {
			continue
		}
		link := s.Link
		if link == "" {
			link = l.linkOf(s.Cause)
		}
		causes := []string{s.Cause}
		add := func(c string) {
			for _, x := range causes {
				if x == c {
					return
				}
			}
			causes = append(causes, c)
		}
		if s.By != nil {
			keys := make([]string, 0, len(s.By.Cases))
			for k := range s.By.Cases {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if c := s.By.Cases[k].Cause; c != "" {
					add(c)
				}
			}
			if s.By.Default != nil && s.By.Default.Cause != "" {
				add(s.By.Default.Cause)
			}
		}
		ctxs := make([]string, 0, len(s.Contexts))
		for k := range s.Contexts {
			ctxs = append(ctxs, k)
		}
		sort.Strings(ctxs)
		for _, k := range ctxs {
			if c := s.Contexts[k].Cause; c != "" {
				add(c)
			}
		}
		title := strings.NewReplacer("{", "<", "}", ">").Replace(s.Title)
		out = append(out, SignatureDoc{Kind: "signature", ID: s.ID, Link: string(link), Title: title, Causes: causes, Doc: s.Doc})
	}
	for _, r := range reasoners {
		out = append(out, SignatureDoc{Kind: "reasoning", ID: r.ID, Link: string(r.Link), Title: r.Title, Causes: r.Causes, Doc: r.Doc})
	}
	return out
}
