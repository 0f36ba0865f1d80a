package rules

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/internal/golden"
	"github.com/tfdoctor/doctor/knowledge"
)

// The corpus: testdata/logs/cases.jsonl, real logs from public threads,
// each labelled with the root cause its thread settled on (format:
// testdata/logs/README.md). TestCorpus explains every log, scores the root
// cause and fails when accuracy drops below the committed thresholds; it
// also writes docs/ACCURACY.md (go test ./rules -run TestCorpus -update).

const corpusPath = "../testdata/logs/cases.jsonl"

// accuracyPath is the generated report; it is a recorded file, so a
// change in accuracy shows up as a test failure until it is regenerated.
const accuracyPath = "../docs/ACCURACY.md"

// Committed thresholds: raise them as accuracy improves, never lower them
// to make a change pass. (They were 0.94 / 0.78 on the first 337 cases.
// Four blind batches, 515 logs of the field explain had never seen, joined
// since; the floor sat under what the whole corpus measured with them:
// 0.884 / 0.794 on 855 cases. Batches 5 and 6, 211 more never-seen logs,
// joined with the signatures of d0ab2d9 at 0.855 / 0.800 on 1066 cases:
// the floor follows the harder corpus, not a change to the signatures.
// Batch 7 joined at 0.872 / 0.812 on 1134 cases; batch 8, 157 logs that
// measured 0.586 blind, at 0.852 / 0.798 on 1291 cases, so the floors stay.
// Batch 9, 138 logs that measured 0.435 blind (mostly small and older
// projects the earlier batches had not reached), joined with the
// signatures of dd37194 at 0.842 / 0.801 on 1429 cases; the corpus floor
// follows the harder corpus to 0.84, as it did for batches 5 and 6: the
// 1291 cases before it still measure 0.885 with these signatures.)
//
// minDecidedPrecision guards the answers users act on: of the cases where
// explain says "Root cause:" (decided, usually with a fix), at least this
// share must be right. It was 0.979 at the start of the session that added
// it and 0.989 (627/634) when it was set; on logs never seen before it
// measured lower (blind-7: 18/23), which is why it is a floor here.
const (
	minCorpusAccuracy   = 0.84
	minHeldOutAccuracy  = 0.78
	minDecidedPrecision = 0.98
)

// corpusCase is one line of cases.jsonl or of a blind batch.
type corpusCase struct {
	ID         string   `json:"id"`
	Source     string   `json:"source"`
	Log        string   `json:"log"`
	Context    string   `json:"context"`
	RootCause  string   `json:"root_cause"`
	AlsoAccept []string `json:"also_accept,omitempty"`
	Resolution string   `json:"resolution"`
	Evidence   string   `json:"evidence"`

	// batch names the blind batch the case came in ("" for cases.jsonl).
	batch string
}

// blindRecordPath records the blind batches: logs collected after the
// signatures were written, by people who wrote none, and measured once
// before any signature changed for them. Those first numbers are history
// (what explain did on logs it had never seen); the file keeps them.
const blindRecordPath = "../testdata/logs/blind.json"

type blindRecord struct {
	Note    string       `json:"note"`
	Batches []blindBatch `json:"batches"`
}

type blindBatch struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	Collected string `json:"collected"`
	// Sampling says how the batch's threads were chosen when that differs
	// from the rule in testdata/logs/README.md (every thread with a log and
	// a resolution, in search-result order).
	Sampling string `json:"sampling,omitempty"`
	// Measured: the blind measurements, in order: the signatures at the
	// start of the session that collected the batch, then the signatures
	// when the batch was first measured; never one after a signature was
	// written with the batch in view.
	Measured []blindMeasure `json:"measured"`
}

type blindMeasure struct {
	What   string `json:"what"`
	Commit string `json:"commit"`
	Cases  int    `json:"cases"`
	Right  int    `json:"right"`
}

func readBlindRecord(t testing.TB) blindRecord {
	t.Helper()
	raw, err := os.ReadFile(blindRecordPath)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rec blindRecord
	if err := dec.Decode(&rec); err != nil {
		t.Fatalf("%s: %v", blindRecordPath, err)
	}
	return rec
}

// readCorpus reads cases.jsonl and every blind batch the record lists.
func readCorpus(t testing.TB) []corpusCase {
	t.Helper()
	out := readCases(t, corpusPath, "")
	for _, b := range readBlindRecord(t).Batches {
		out = append(out, readCases(t, filepath.Join(filepath.Dir(blindRecordPath), b.File), b.Name)...)
	}
	return out
}

// readCases reads one JSON-lines file of cases.
func readCases(t testing.TB, path, batch string) []corpusCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var c corpusCase
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		c.batch = batch
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// threadKey names the thread a source URL belongs to, so that every case
// of one thread lands on the same side of the split: scheme, "www.",
// query, fragment (#issuecomment-...) and trailing slashes are dropped,
// the host is lower-cased, and a URL is cut after its thread's number:
// github.com/OWNER/REPO/{issues,pull,discussions}/N,
// */questions/N (Stack Exchange sites), */t/[slug/]N (Discourse forums:
// forums.developer.nvidia.com, discuss.*). Other URLs keep their path.
func threadKey(source string) string {
	u, err := url.Parse(strings.TrimSpace(source))
	if err != nil || u.Host == "" {
		return strings.ToLower(strings.TrimSpace(source))
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	cut := len(parts)
	switch {
	case host == "github.com" && len(parts) >= 4 && (parts[2] == "issues" || parts[2] == "pull" || parts[2] == "discussions"):
		cut = 4
		parts[0], parts[1] = strings.ToLower(parts[0]), strings.ToLower(parts[1])
	default:
		for i := 0; i+1 < len(parts); i++ {
			if parts[i] == "questions" && isDigits(parts[i+1]) {
				cut = i + 2
				break
			}
			if parts[i] == "t" {
				// Discourse: /t/slug/ID[/post] or /t/ID.
				for j := i + 1; j < len(parts) && j <= i+2; j++ {
					if isDigits(parts[j]) {
						parts = append(parts[:i+1], parts[j])
						cut = i + 2
						break
					}
				}
				break
			}
		}
	}
	if cut < len(parts) {
		parts = parts[:cut]
	}
	return host + "/" + strings.Join(parts, "/")
}

// heldOut is the split: a case is held out when the FNV-1a 32-bit hash of
// its thread key is 0 modulo 5 (about a fifth of the threads). Signatures
// are written from the other cases only; the held-out accuracy measures
// how well they carry over to logs they were not written from.
func heldOut(source string) bool {
	h := fnv.New32a()
	h.Write([]byte(threadKey(source)))
	return h.Sum32()%5 == 0
}

var caseIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// TestCorpusWellFormed checks every case against the format: unique IDs,
// a thread URL, a known cause label, evidence, a one-line resolution.
func TestCorpusWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for i, c := range readCorpus(t) {
		where := fmt.Sprintf("case %d (%s)", i+1, c.ID)
		if !caseIDRE.MatchString(c.ID) {
			t.Errorf("%s: id must match %s", where, caseIDRE)
		}
		if seen[c.ID] {
			t.Errorf("%s: duplicate id", where)
		}
		seen[c.ID] = true
		if u, err := url.Parse(c.Source); err != nil || u.Scheme != "https" || u.Host == "" {
			t.Errorf("%s: source %q is not an https URL", where, c.Source)
		}
		if strings.TrimSpace(c.Log) == "" {
			t.Errorf("%s: empty log", where)
		}
		// Any of doctor's labels (doctor rules): a thread's cause is what it
		// is, even where explain has no signature that can name it yet.
		for _, l := range append([]string{c.RootCause}, c.AlsoAccept...) {
			if !knowledge.IsCause(l) {
				t.Errorf("%s: %q is not a cause label (knowledge/causes.go)", where, l)
			}
		}
		switch c.Evidence {
		case "confirmed", "likely", "from_log":
		default:
			t.Errorf("%s: evidence %q, want confirmed, likely or from_log", where, c.Evidence)
		}
		if strings.TrimSpace(c.Resolution) == "" || strings.ContainsAny(c.Resolution, "\r\n") {
			t.Errorf("%s: the resolution must be one non-empty line", where)
		}
		if strings.ContainsAny(c.Context, "\r\n") {
			t.Errorf("%s: the context must be one line", where)
		}
	}
}

func TestThreadKey(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/tensorflow/tensorflow/issues/62075#issuecomment-1":           "github.com/tensorflow/tensorflow/issues/62075",
		"https://github.com/NVIDIA/nvidia-docker/issues/1671/":                           "github.com/nvidia/nvidia-docker/issues/1671",
		"https://www.github.com/pytorch/pytorch/pull/1/files":                            "github.com/pytorch/pytorch/pull/1",
		"https://stackoverflow.com/questions/41402409/tensorflow-doesnt-want-to-use-gpu": "stackoverflow.com/questions/41402409",
		"https://stackoverflow.com/questions/41402409?noredirect=1":                      "stackoverflow.com/questions/41402409",
		"https://askubuntu.com/questions/1234/x/5678#5678":                               "askubuntu.com/questions/1234",
		"https://forums.developer.nvidia.com/t/some-title/123456/7":                      "forums.developer.nvidia.com/t/123456",
		"https://forums.developer.nvidia.com/t/some-title/123456":                        "forums.developer.nvidia.com/t/123456",
		"https://discuss.tensorflow.org/t/123":                                           "discuss.tensorflow.org/t/123",
		"https://example.org/blog/post/":                                                 "example.org/blog/post",
	} {
		if got := threadKey(in); got != want {
			t.Errorf("threadKey(%q) = %q, want %q", in, got, want)
		}
	}
	if heldOut("https://github.com/a/b/issues/1") != heldOut("https://github.com/A/B/issues/1#issuecomment-9") {
		t.Error("two URLs of one thread fall on different sides of the split")
	}
}

// corpusResult is one case's outcome.
type corpusResult struct {
	c       corpusCase
	got     string
	right   bool
	heldOut bool
	// undecided: explain named the root cause as the commonest reading of
	// a symptom ("most likely"), not as what the log settles.
	undecided bool
}

// scoreCase explains one case and scores its root cause.
func scoreCase(c corpusCase) corpusResult {
	r := corpusResult{c: c, got: "error", heldOut: heldOut(c.Source)}
	rep, err := Explain(strings.NewReader(c.Log), ExplainOptions{Version: "corpus"})
	if err == nil {
		r.got = topCause(rep)
		if rep.RootCause != nil {
			for i := range rep.Findings {
				if rep.Findings[i].ID == rep.RootCause.ID {
					r.undecided = Undecided(&rep.Findings[i])
				}
			}
		}
	}
	r.right = r.accepted()[r.got]
	return r
}

func (r corpusResult) accepted() map[string]bool {
	m := map[string]bool{r.c.RootCause: true}
	for _, a := range r.c.AlsoAccept {
		m[a] = true
	}
	return m
}

func runCorpus(t *testing.T) []corpusResult {
	t.Helper()
	var out []corpusResult
	for _, c := range readCorpus(t) {
		out = append(out, scoreCase(c))
	}
	return out
}

func topCause(r *Report) string {
	if r.RootCause == nil {
		return "none"
	}
	return r.RootCause.Cause
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TestCorpus scores doctor explain on the corpus: top-1 accuracy overall
// and on the held-out fifth must stay at or above the committed
// thresholds, and docs/ACCURACY.md must be what this run measures.
func TestCorpus(t *testing.T) {
	res := runCorpus(t)
	if len(res) == 0 {
		t.Fatal("empty corpus")
	}
	var right, held, heldRight int
	for _, r := range res {
		if r.right {
			right++
		}
		if r.heldOut {
			held++
			if r.right {
				heldRight++
			}
		}
		if !r.right {
			t.Logf("miss %s: want %s, got %s", r.c.ID, r.c.RootCause, r.got)
		}
	}
	acc, hacc := ratio(right, len(res)), ratio(heldRight, held)
	t.Logf("corpus: %d/%d right (%.3f); held out: %d/%d (%.3f)", right, len(res), acc, heldRight, held, hacc)
	if acc < minCorpusAccuracy {
		t.Errorf("corpus accuracy %.3f is below the committed %.2f", acc, minCorpusAccuracy)
	}
	if held > 0 && hacc < minHeldOutAccuracy {
		t.Errorf("held-out accuracy %.3f is below the committed %.2f", hacc, minHeldOutAccuracy)
	}
	if c := calibrate(res); ratio(c.decidedRight, c.decided) < minDecidedPrecision {
		t.Errorf("%d of %d decided (\"Root cause:\") answers are right (%.3f), below the committed %.2f: a line several causes share is a symptom (see README, explain)",
			c.decidedRight, c.decided, ratio(c.decidedRight, c.decided), minDecidedPrecision)
	}
	golden.Check(t, accuracyPath, accuracyReport(res, readBlindRecord(t)))
	if t.Failed() && !golden.Update() {
		t.Log("after a change that moves accuracy, regenerate the report: go test ./rules -run TestCorpus -update")
	}
}

// accuracyReport renders docs/ACCURACY.md.
func accuracyReport(res []corpusResult, rec blindRecord) []byte {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	var right, held, heldRight int
	labels := map[string]bool{}
	evidence := map[string]int{}
	threads := map[string]bool{}
	heldThreads := map[string]bool{}
	for _, r := range res {
		labels[r.c.RootCause] = true
		evidence[r.c.Evidence]++
		threads[threadKey(r.c.Source)] = true
		if r.right {
			right++
		}
		if r.heldOut {
			held++
			heldThreads[threadKey(r.c.Source)] = true
			if r.right {
				heldRight++
			}
		}
	}
	p("# doctor explain: accuracy on the corpus\n\n")
	p("Generated by `go test ./rules -run TestCorpus -update` from `testdata/logs/cases.jsonl`\n")
	p("and the blind batches listed in `testdata/logs/blind.json`\n")
	p("(real logs from public threads, each labelled with the root cause its thread settled on).\n")
	p("Do not edit by hand: `go test ./rules` fails when this file differs from what the corpus measures.\n\n")
	p("A case is right when `root_cause.cause` equals its label or one of its `also_accept` labels.\n")
	p("The held-out split: a case is held out when the FNV-1a 32-bit hash of its thread key\n")
	p("(the source URL without scheme, `www.`, query, fragment, cut after the thread's number)\n")
	p("is 0 modulo 5, so every thread is on one side only. Signatures are written from the\n")
	p("training cases; the held-out cases measure how well they carry over.\n\n")
	p("| measure | value |\n| --- | --- |\n")
	p("| cases | %d (%d threads, %d cause labels) |\n", len(res), len(threads), len(labels))
	p("| evidence | confirmed %d, likely %d, from_log %d |\n", evidence["confirmed"], evidence["likely"], evidence["from_log"])
	p("| top-1 accuracy, all cases | **%.3f** (%d/%d) |\n", ratio(right, len(res)), right, len(res))
	p("| top-1 accuracy, training cases | %.3f (%d/%d) |\n", ratio(right-heldRight, len(res)-held), right-heldRight, len(res)-held)
	p("| top-1 accuracy, held-out cases | **%.3f** (%d/%d, %d threads) |\n", ratio(heldRight, held), heldRight, held, len(heldThreads))
	p("| committed minimum (all / held out) | %.2f / %.2f |\n", minCorpusAccuracy, minHeldOutAccuracy)
	p("| committed minimum share of right \"Root cause:\" answers | %.2f |\n\n", minDecidedPrecision)
	writeCalibration(p, res)
	writeCalibrationByBatch(p, res, rec)
	writeBlindSection(p, res, rec)

	// Per label: recall over the cases labelled L; precision over the
	// cases whose scored prediction is L (a right answer counts as the
	// case's label).
	type stat struct{ n, tp, predicted int }
	st := map[string]*stat{}
	get := func(l string) *stat {
		if st[l] == nil {
			st[l] = &stat{}
		}
		return st[l]
	}
	confusion := map[[2]string]int{}
	for _, r := range res {
		get(r.c.RootCause).n++
		pred := r.got
		if r.right {
			pred = r.c.RootCause
			get(r.c.RootCause).tp++
		} else {
			confusion[[2]string{r.c.RootCause, r.got}]++
		}
		get(pred).predicted++
	}
	var names []string
	for l := range st {
		names = append(names, l)
	}
	sort.Strings(names)
	p("## Per label\n\n| label | cases | right | recall | predicted | precision |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, l := range names {
		s := st[l]
		rec, prec := "–", "–"
		if s.n > 0 {
			rec = fmt.Sprintf("%.2f", ratio(s.tp, s.n))
		}
		if s.predicted > 0 {
			prec = fmt.Sprintf("%.2f", ratio(s.tp, s.predicted))
		}
		p("| `%s` | %d | %d | %s | %d | %s |\n", l, s.n, s.tp, rec, s.predicted, prec)
	}
	p("\n`none` is a log where explain names no root cause.\n\n")

	p("## Confusion pairs\n\n")
	if len(confusion) == 0 {
		p("None: every case is right.\n")
	} else {
		type pair struct {
			k [2]string
			n int
		}
		var ps []pair
		for k, n := range confusion {
			ps = append(ps, pair{k, n})
		}
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].n != ps[j].n {
				return ps[i].n > ps[j].n
			}
			return ps[i].k[0]+ps[i].k[1] < ps[j].k[0]+ps[j].k[1]
		})
		p("| label (thread) | explain said | cases |\n| --- | --- | ---: |\n")
		for _, x := range ps {
			p("| `%s` | `%s` | %d |\n", x.k[0], x.k[1], x.n)
		}
		p("\n## Misses\n\n| case | held out | label | explain said |\n| --- | --- | --- | --- |\n")
		for _, r := range res {
			if !r.right {
				h := ""
				if r.heldOut {
					h = "yes"
				}
				p("| %s | %s | `%s` | `%s` |\n", r.c.ID, h, r.c.RootCause, r.got)
			}
		}
	}
	return []byte(b.String())
}

// TestCorpusPasteShapes: the shape a paste arrives in does not change the
// answer. Every corpus log is explained again with CRLF line ends, quoted
// as Markdown ("> " before each line), inside a code fence and with
// terminal colour codes around each line; the root cause must stay what
// the plain log gives. Hard-wrapped at 80 columns (a terminal copy, a
// pager), at most 1% of the cases may change.
func TestCorpusPasteShapes(t *testing.T) {
	shapes := map[string]func(string) string{
		"crlf": func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"quoted": func(s string) string {
			return "> " + strings.ReplaceAll(s, "\n", "\n> ")
		},
		"fenced": func(s string) string { return "```\n" + s + "\n```" },
		"ansi": func(s string) string {
			return "\x1b[0;33m" + strings.ReplaceAll(s, "\n", "\x1b[0m\n\x1b[0;33m") + "\x1b[0m"
		},
	}
	cases := readCorpus(t)
	var wrappedChanged int
	for _, c := range cases {
		want := topCause(ExplainText(c.Log))
		for name, shape := range shapes {
			if got := topCause(ExplainText(shape(c.Log))); got != want {
				t.Errorf("%s shaped %s: root cause %s, plain log %s", c.ID, name, got, want)
			}
		}
		// Wrapping can split a message between two lines so that what a
		// reasoner reads on one line (a stand-down word, a context) lands
		// on another; a few such changes are tolerated, not more.
		if got := topCause(ExplainText(hardWrap(c.Log))); got != want {
			wrappedChanged++
			t.Logf("%s hard-wrapped at 80: root cause %s, plain log %s", c.ID, got, want)
		}
	}
	if limit := len(cases) / 100; wrappedChanged > limit {
		t.Errorf("hard-wrapping at 80 columns changes the root cause of %d cases, more than %d (1%%)", wrappedChanged, limit)
	}
}

// writeBlindSection renders the blind batches: what explain did on each
// batch the first time it saw it (recorded history), and what it does now.
func writeBlindSection(p func(string, ...any), res []corpusResult, rec blindRecord) {
	if len(rec.Batches) == 0 {
		return
	}
	p("## Blind batches: logs never seen before\n\n")
	p("Each batch was collected from public threads not in the corpus, by people who wrote\n")
	p("no signatures and did not run explain on what they collected, then measured once\n")
	p("with the signatures of the day before anyone read it (`testdata/logs/blind.json`\n")
	p("keeps those first numbers; they do not change). After that a batch joins the corpus:\n")
	p("its training-side cases may teach signatures, its held-out-side cases stay held out.\n\n")
	p("| batch | collected | cases | measured blind (signatures at) | top-1 then | top-1 now |\n")
	p("| --- | --- | ---: | --- | ---: | ---: |\n")
	for _, b := range rec.Batches {
		var n, right int
		for _, r := range res {
			if r.c.batch == b.Name {
				n++
				if r.right {
					right++
				}
			}
		}
		for i, m := range b.Measured {
			now := ""
			if i == len(b.Measured)-1 {
				now = fmt.Sprintf("%.3f (%d/%d)", ratio(right, n), right, n)
			}
			p("| %s | %s | %d | %s (`%s`) | %.3f (%d/%d) | %s |\n", b.Name, b.Collected, m.Cases, m.What, m.Commit, ratio(m.Right, m.Cases), m.Right, m.Cases, now)
		}
	}
	p("\n")
	for _, b := range rec.Batches {
		if b.Sampling != "" {
			p("- %s: %s\n", b.Name, b.Sampling)
		}
	}
	p("\n")
}

var blindFileRE = regexp.MustCompile(`^blind-[0-9]+\.jsonl$`)

// TestBlindRecord: the record of blind batches matches the files. Every
// blind-N.jsonl is listed, every measurement counts the batch as it is,
// and no thread of a batch is in cases.jsonl or in another batch (a blind
// case is from a thread the project had not seen).
func TestBlindRecord(t *testing.T) {
	rec := readBlindRecord(t)
	dir := filepath.Dir(blindRecordPath)
	listed := map[string]bool{}
	for _, b := range rec.Batches {
		if !blindFileRE.MatchString(b.File) || strings.TrimSuffix(b.File, ".jsonl") != b.Name {
			t.Errorf("batch %q: file %q must be NAME.jsonl with NAME blind-N", b.Name, b.File)
		}
		listed[b.File] = true
		n := len(readCases(t, filepath.Join(dir, b.File), b.Name))
		if len(b.Measured) == 0 {
			t.Errorf("batch %s: no blind measurement recorded", b.Name)
		}
		for _, m := range b.Measured {
			if m.Cases != n || m.Right < 0 || m.Right > m.Cases || m.Commit == "" || m.What == "" {
				t.Errorf("batch %s: measurement %+v does not fit the batch's %d cases", b.Name, m, n)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if blindFileRE.MatchString(e.Name()) && !listed[e.Name()] {
			t.Errorf("%s is not in %s: a batch joins the corpus with its blind measurement", e.Name(), blindRecordPath)
		}
	}
	owner := map[string]string{}
	for _, c := range readCorpus(t) {
		k := threadKey(c.Source)
		if o, ok := owner[k]; ok && o != c.batch {
			t.Errorf("%s (%s): thread %s is already in %s", c.ID, c.batch, k, batchName(o))
		}
		owner[k] = c.batch
	}
}

func batchName(b string) string {
	if b == "" {
		return "cases.jsonl"
	}
	return b
}

// TestCorpusMeasure scores a file of cases that is not in the corpus yet:
// DOCTOR_CORPUS_MEASURE=/path/batch.jsonl go test ./rules -run TestCorpusMeasure -v
// It is how a blind batch gets its first measurement; without the
// variable it is skipped.
func TestCorpusMeasure(t *testing.T) {
	path := os.Getenv("DOCTOR_CORPUS_MEASURE")
	if path == "" {
		t.Skip("DOCTOR_CORPUS_MEASURE names no file")
	}
	var n, right, held, heldRight, und, undRight int
	var results []corpusResult
	for _, c := range readCases(t, path, "measure") {
		r := scoreCase(c)
		results = append(results, r)
		n++
		if r.undecided {
			und++
			if r.right {
				undRight++
			}
		}
		if r.right {
			right++
		} else {
			t.Logf("miss %s: want %s, got %s (undecided %v)", c.ID, c.RootCause, r.got, r.undecided)
		}
		if r.heldOut {
			held++
			if r.right {
				heldRight++
			}
		}
	}
	t.Logf("MEASURE %s: %d/%d right (%.3f); of them held out %d/%d; \"most likely\" answers %d/%d right", path, right, n, ratio(right, n), heldRight, held, undRight, und)
	var b strings.Builder
	writeCalibration(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, results)
	t.Log("\n" + b.String())
}

// calibration counts how explain put its answers and how often each kind
// was right.
type calibration struct {
	n, right                  int // every case; top-1 right
	decided, decidedRight     int // "Root cause:"
	undecided, undecidedRight int // "Most likely root cause"
	benign, benignRight, none int
}

func calibrate(res []corpusResult) calibration {
	var c calibration
	for _, r := range res {
		c.n++
		if r.right {
			c.right++
		}
		switch {
		case r.got == "none" || r.got == "error":
			c.none++
		case r.got == "benign_warning_only":
			c.benign++
			if r.right {
				c.benignRight++
			}
		case r.undecided:
			c.undecided++
			if r.right {
				c.undecidedRight++
			}
		default:
			c.decided++
			if r.right {
				c.decidedRight++
			}
		}
	}
	return c
}

// writeCalibration: how far to trust the answer by how explain put it. A
// root cause the log settles ("Root cause:") should almost never be wrong;
// one named as the commonest reading of a symptom ("Most likely root
// cause") is right less often, and says so.
func writeCalibration(p func(string, ...any), res []corpusResult) {
	c := calibrate(res)
	p("## How explain put it, and how often it was right\n\n")
	p("| explain said | cases | right |\n| --- | ---: | ---: |\n")
	p("| \"Root cause:\" (the log settles it) | %d | %.3f (%d) |\n", c.decided, ratio(c.decidedRight, c.decided), c.decidedRight)
	p("| \"Most likely root cause\" (a symptom; it asks for what would decide) | %d | %.3f (%d) |\n", c.undecided, ratio(c.undecidedRight, c.undecided), c.undecidedRight)
	p("| only harmless messages (`benign_warning_only`) | %d | %.3f (%d) |\n", c.benign, ratio(c.benignRight, c.benign), c.benignRight)
	p("| nothing recognised (asks what to paste next) | %d | – |\n\n", c.none)
}

// writeCalibrationByBatch: the same calibration per source of cases, so
// that the newest field logs (the latest blind batches) show how far a
// "Root cause:" can be trusted on logs like those the field sends now,
// not only pooled over the whole corpus, most of which the signatures
// were written from.
func writeCalibrationByBatch(p func(string, ...any), res []corpusResult, rec blindRecord) {
	if len(rec.Batches) == 0 {
		return
	}
	p("### The same, per batch (as measured now)\n\n")
	p("`cases.jsonl` is the corpus collected first; each blind batch joined it after its blind measurement.\n")
	p("A batch's numbers here are today's signatures on it, not its blind measurement.\n\n")
	p("| cases from | cases | top-1 | \"Root cause:\" | right | \"Most likely\" | right | harmless | nothing recognised |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(name string, sub []corpusResult) {
		c := calibrate(sub)
		p("| %s | %d | %.3f (%d) | %d | %.3f (%d) | %d | %.3f (%d) | %d | %d |\n", name, c.n, ratio(c.right, c.n), c.right,
			c.decided, ratio(c.decidedRight, c.decided), c.decidedRight,
			c.undecided, ratio(c.undecidedRight, c.undecided), c.undecidedRight, c.benign, c.none)
	}
	pick := func(batch string) []corpusResult {
		var sub []corpusResult
		for _, r := range res {
			if r.c.batch == batch {
				sub = append(sub, r)
			}
		}
		return sub
	}
	row("`cases.jsonl`", pick(""))
	for _, b := range rec.Batches {
		row(b.Name, pick(b.Name))
	}
	row("all", res)
	p("\n")
}

// hardWrap cuts every line longer than 80 bytes into pieces of 80 (on a
// UTF-8 boundary), as a terminal copy or a pager does: no byte is lost.
func hardWrap(s string) string {
	const width = 80
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		for len(line) > width {
			cut := width
			for cut > 0 && line[cut]&0xC0 == 0x80 {
				cut--
			}
			b.WriteString(line[:cut])
			b.WriteByte('\n')
			line = line[cut:]
		}
		b.WriteString(line)
	}
	return b.String()
}
