package rules

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tfdoctor/doctor/checks"
)

// A paste whose recognised lines are all harmless notices reads as
// "only harmless messages" (benign_warning_only) only when nothing else
// in it shows a failure the notices could lead to. Unknown is not
// absent: a line that shows a program failing (the context
// failure_line, signatures/benign_notices.json) that no signature
// explains is read in one of two ways.
//
//   - A crash (an abort, "core dumped", a segmentation fault, a fatal
//     check, an uncaught C++ exception, a signal), a non-zero exit (the
//     failure not shown) or an error that names the GPU stack (CUDA,
//     cuDNN, a device, the driver, a library, out of memory) keeps the
//     answer open: no root cause, the line quoted, and
//     a request for the output that would decide. A harmless notice never
//     explains a failure after it; the failure it can lead to (Caffe's
//     cuBLAS handle, then "Aborted (core dumped)") is the question.
//   - Any other error (a SyntaxError, a ValueError about the program's
//     own arguments, a tool's option error) is the program's own: the
//     GPU messages are still only harmless ones, and the finding says
//     that the error at that line lies outside the GPU setup as far as
//     the log shows. That is how the threads such pastes come from end:
//     harmless GPU notices next to an unrelated bug.
//
// Two ways a failure line is explained without a signature of its own:
// a piece of a wrapped message a signature recognised (the pieces above
// or below it, joined), and the traceback a harmless notice prints for
// the import failure it caught, right below itself (stable-diffusion-
// webui's "Cannot import xformers", then the ModuleNotFoundError). A
// traceback's header counts only when no exception line follows it (a
// paste cut short).

// pyTracebackRE is the header of a Python traceback.
var pyTracebackRE = regexp.MustCompile(`Traceback \(most recent call last\)`)

// pyExceptionLineRE is the line that ends a Python traceback: the
// exception's (dotted) class name at the start of the line.
var pyExceptionLineRE = regexp.MustCompile(`^\W{0,3}(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b`)

// pyImportErrorRE is the exception line of a failed import.
var pyImportErrorRE = regexp.MustCompile(`^\W{0,3}(?:[A-Za-z_]\w*\.)*(?:ModuleNotFound|Import)Error\b`)

// gpuFailureRE marks a failure line that a GPU problem can produce: a
// crash, or an error that names the GPU stack, also in a framework's own
// words for it: cuDNN as 'the dnn implementation' (TensorFlow) or 'unable
// to find an engine' (PyTorch's cuDNN v8 API), BLAS/GEMM, a CUBIN or PTX,
// StreamExecutor's Then* calls ('Failed to call ThenRnnForward'),
// TensorFlow 1's 'Failed to create session', and the errors a runtime
// raises for its own failures, never for a program's arguments
// (TensorFlow's errors_impl.InternalError, XLA's 'INTERNAL:').
var gpuFailureRE = regexp.MustCompile(`(?i)\bdnn\b|unable to find an engine|\bcubin\b|\bptx\b|\bblas\b|\bgemm\b|stream ?executor|(?-i:\bThen[A-Z][a-z]\w*)|failed to create session|(?-i:errors_impl\.InternalError\b)|(?-i:XlaRuntimeError: INTERNAL\b)|cuda|cudnn|cublas|curand|cufft|cusolver|cusparse|nccl|nvrtc|nvml|nvidia|nvcc|ptxas|tensorrt|\btrt\b|\bgpus?\b|device|driver|out of memory|\boom\b|\blib\w+\.so|\.dll\b|shared object|core dumped|aborted|segmentation fault|illegal instruction|bus error|\bkilled\b|terminate called|check fail|fatal|signal|floating point exception|exit ?(?:code|status)|exited with|non-zero exit|\bsig[a-z]{3,4}\b`)

// markOpenFailures sorts the failure lines no finding signature explains
// into openFailures (they keep the answer open) and otherFailures (the
// program's own errors). hits are the finding hits of the specific
// signatures (not broad), known their lines and the source lines a
// traceback quotes.
func (st *explainState) markOpenFailures(hits []hit, known map[int]bool) {
	fails := append([]lineRef(nil), st.contexts["failure_line"]...)
	if len(fails) == 0 {
		return
	}
	sort.SliceStable(fails, func(i, j int) bool { return fails[i].Line < fails[j].Line })
	texts := map[int][]string{}
	for _, h := range hits {
		if h.sig.Tier != TierBroad {
			texts[h.line] = append(texts[h.line], h.text)
		}
	}
	noticeTraceback := false
	imports := st.frameworkImportLines()
	tbStart, inImport := 0, false
	for i, f := range fails {
		if pyTracebackRE.MatchString(f.Text) {
			tbStart = f.Line
		}
		if known[f.Line] || wrappedPieceOfKnown(f, texts) {
			continue
		}
		inImport = false
		if pyTracebackRE.MatchString(f.Text) {
			noticeTraceback = known[f.Line-1] && st.benignLine(f.Line-1)
			if noticeTraceback || exceptionAfter(fails[i+1:]) {
				continue
			}
		} else if pyExceptionLineRE.MatchString(f.Text) {
			inNotice := noticeTraceback
			noticeTraceback = false
			if inNotice && pyImportErrorRE.MatchString(f.Text) {
				continue
			}
			inImport = tbStart > 0 && slices.ContainsFunc(imports, func(l int) bool { return l > tbStart && l < f.Line })
			tbStart = 0 // the exception ends its traceback
		}
		if inImport || gpuFailureRE.MatchString(f.Text) {
			st.openFailures = append(st.openFailures, f)
		} else {
			st.otherFailures = append(st.otherFailures, f)
		}
	}
}

// fwImportFrameRE is a traceback frame in a GPU framework's package
// initialisation ('File ".../site-packages/tensorflow/__init__.py"'), and
// fwImportSourceRE the quoted source line that imports one: an exception
// below them in the same traceback was raised while the framework
// loaded (a numpy built for another ABI, a missing module of its own),
// which is the framework failing to import, not the program's own
// error.
var (
	fwImportFrameRE  = regexp.MustCompile(`[/\\](?:tensorflow|tensorflow_core|torch|jax|jaxlib|keras|cupy|paddle|mxnet|onnxruntime|tensorrt)[/\\]__init__\.py["']`)
	fwImportSourceRE = regexp.MustCompile(`^\s*(?:import|from)\s+(?:tensorflow|torch|jax|jaxlib|keras|cupy|paddle|mxnet|onnxruntime|tensorrt)\b`)
)

// frameworkImportLines are the lines of traceback frames and quoted
// source that show a GPU framework being imported.
func (st *explainState) frameworkImportLines() []int {
	var out []int
	for _, l := range st.contexts["py_frame"] {
		if fwImportFrameRE.MatchString(l.Text) {
			out = append(out, l.Line)
		}
	}
	for _, c := range []string{"tensorflow_code", "pytorch_code", "cupy_code"} {
		for _, l := range st.contexts[c] {
			if fwImportSourceRE.MatchString(l.Text) {
				out = append(out, l.Line)
			}
		}
	}
	return out
}

// exceptionAfter reports whether an exception line ends the traceback
// whose header came before fails.
func exceptionAfter(fails []lineRef) bool {
	for _, f := range fails {
		if pyTracebackRE.MatchString(f.Text) {
			return false
		}
		if pyExceptionLineRE.MatchString(f.Text) {
			return true
		}
	}
	return false
}

// wrappedPieceOfKnown reports whether the failure line is a piece of a
// wrapped message a signature recognised: a joined hit that starts a few
// lines above holds it, or it is a long piece (cut at the terminal's
// width) whose continuation right below (continuesAbove) is a recognised
// line.
func wrappedPieceOfKnown(f lineRef, texts map[int][]string) bool {
	// A quoted line longer than maxQuoteBytes ends in "…": match what is
	// left of it.
	piece := strings.TrimSuffix(strings.TrimSpace(f.Text), "…")
	if piece == "" {
		return false
	}
	for k := f.Line - wrapMaxPieces + 1; k < f.Line; k++ {
		for _, t := range texts[k] {
			if strings.Contains(t, piece) {
				return true
			}
		}
	}
	if len(f.Text) >= wrapMinPiece {
		for _, t := range texts[f.Line+1] {
			if continuesAbove(t) {
				return true
			}
		}
	}
	return false
}

// continuesAbove reports whether a line reads as the continuation of the
// one above (indented, or starting mid-sentence in lower case), not as a
// message of its own.
func continuesAbove(t string) bool {
	if t == "" || startsRecord(t) {
		return false
	}
	c := t[0]
	return c == ' ' || c == '\t' || (c >= 'a' && c <= 'z')
}

// benignLine reports whether a harmless notice matched the line (the
// signature's mark: drafts are resolved later).
func (st *explainState) benignLine(line int) bool {
	for _, d := range st.drafts {
		if d.sig == nil || !d.sig.Benign {
			continue
		}
		for _, l := range d.lines {
			if l.Line == line {
				return true
			}
		}
	}
	return false
}

// allFailures is every failure line no signature explains, in line order.
func (st *explainState) allFailures() []lineRef {
	out := append(append([]lineRef(nil), st.openFailures...), st.otherFailures...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// openFailureFinding is the answer when what was recognised is harmless
// (notices: true) or shows no problem (a device table, versions, the
// GPU in use), but the paste shows a failure nothing recognised
// explains: no root cause, the failure quoted, and what would decide.
func (st *explainState) openFailureFinding(fails []lineRef, notices bool) checks.Finding {
	var lines []lineRef
	for _, l := range fails {
		if len(lines) < maxQuotedLines {
			lines = append(lines, l)
		}
	}
	next := []string{
		"the complete output of the failing command, from its start to the error (2>&1)",
		"nvidia-smi",
		"python -m pip list | grep -i -e torch -e tensorflow -e jax -e nvidia",
	}
	first := lines[0]
	n := strconv.Itoa(first.Line)
	title := "Only harmless notices are recognised, but line " + n + " shows a failure they do not explain"
	seen := "Every recognised message is a known harmless notice"
	if !notices {
		title = "Line " + n + " shows a failure that nothing recognised in the log explains"
		seen = "What was recognised (versions, device tables, the GPU in use) shows no problem"
	}
	return checks.Finding{
		ID: "explain.unexplained_failure", Check: "explain.unexplained_failure", Cause: "healthy", Severity: checks.SevInfo, Link: checks.LinkRuntime,
		Title: title,
		Detail: seen + ", but line " + n + " shows a failure no known message explains ('" +
			strings.TrimSpace(first.Text) + "'): what was recognised is not its cause, and the log does not say what is. To decide, paste: " + strings.Join(next, " ; "),
		Skipped:  true,
		Evidence: map[string]any{"lines": lines, "occurrences": len(fails), "ask_for": next},
		Fixes:    []checks.Fix{},
	}
}

func init() {
	reasoners = append(reasoners, &reasoner{
		ID: "explain.survived_warning", Title: "A warning the program ran on past, on the GPU", Link: checks.LinkRuntime, Phase: phaseFindings,
		Causes: []string{"benign_warning_only"},
		Doc: `A framework's warning that an optional part did not load (xFormers: 'xFormers can't
load C++/CUDA extensions. xFormers was built for: PyTorch X with CUDA N (you have Y)')
says what is mismatched, not that the program failed: xFormers goes on without its
kernels, and the program fails only where it then calls one of them ('No operator found
for memory_efficient_attention_forward'). What decides is what the paste shows after
the warning: the GPU in use (a framework's device line, an application's 'Device:
cuda:0 ...') and no failure anywhere makes the warning harmless for this run (the
version pair is still worth aligning for xFormers' speed); any failure, recognised or
not, leaves the mismatch the finding; so does a bare warning with nothing after it, and
a CPU-only PyTorch ('you have 2.1.2+cpu') is a fault whatever follows.`,
		Run: reasonSurvivedWarning,
	})
}

// reasonSurvivedWarning makes the survivable warnings harmless where the
// paste shows the GPU in use after them and nothing failing.
func reasonSurvivedWarning(st *explainState) {
	ws := st.draftsOf(roleSurvivableWarning)
	if len(ws) == 0 || len(st.openFailures) > 0 || len(st.otherFailures) > 0 {
		return
	}
	last := 0
	for _, d := range ws {
		if strings.EqualFold(d.values["have_local"], "cpu") || d.cause != d.sig.Cause {
			return // a CPU-only PyTorch, or a case that named another cause
		}
		for _, l := range d.lines {
			if l.Line > last {
				last = l.Line
			}
		}
	}
	for _, d := range st.drafts {
		if !d.is(roleSurvivableWarning) && (d.severity == checks.SevError || d.severity == checks.SevWarning) {
			return
		}
	}
	var used *hit
	for i := range st.success {
		if st.success[i].line > last {
			used = &st.success[i]
			break
		}
	}
	if used == nil {
		return
	}
	for _, d := range ws {
		d.severity, d.cause, d.benign = checks.SevInfo, "benign_warning_only", true
		d.symptom, d.noFix, d.next, d.fixes, d.onlyFixes = false, true, nil, nil, true
		d.title = "A warning the program ran on past: " + d.title + " (harmless in this run)"
		d.note("Line %d, after it, shows the GPU in use ('%s') and nothing in the paste fails: the program went on without the part that did not load. Align the versions only for its speed; if a later run fails where it calls that part, that failure decides.", used.line, quote(*used).Text)
		d.reasons = append(d.reasons, "explain.survived_warning")
	}
}

// benignFailingOutput is what a paste of harmless notices is asked for
// first: the failing program's own output, when there is a failure.
const benignFailingOutput = "the failing program's complete output, from its start to the error (2>&1), if it fails"

// benignNoticeNames names the harmless notices the paste shows, by their
// titles without the "(harmless...)" tail, in order of first line.
func (st *explainState) benignNoticeNames() string {
	type notice struct {
		line  int
		title string
	}
	var ns []notice
	seen := map[string]bool{}
	for _, d := range st.drafts {
		if !d.benign || d.sig == nil || seen[d.sig.ID] {
			continue
		}
		seen[d.sig.ID] = true
		t := d.sig.Title
		if i := strings.LastIndex(t, " ("); i > 0 && strings.Contains(t[i:], "harmless") {
			t = t[:i]
		}
		ns = append(ns, notice{d.firstLine, t})
	}
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].line < ns[j].line })
	names := make([]string, 0, len(ns))
	for _, n := range ns {
		names = append(names, n.title)
	}
	return strings.Join(names, "; ")
}

// benignDeviceQuery is what a paste of harmless notices asks for after the
// failing output: the device query of the framework whose notices they
// are. TensorFlow's (the cause's own next) when a notice is TensorFlow's
// or none names its framework; PyTorch's or JAX's when theirs are the
// only ones; otherwise nvidia-smi and the installed packages.
func (st *explainState) benignDeviceQuery() []string {
	fws := map[string]bool{}
	for _, d := range st.drafts {
		if d.benign {
			if fw := frameworkOf(d); fw != "" && fw != "other" {
				fws[fw] = true
			}
		}
	}
	if len(fws) == 0 || fws[FrameworkTensorFlow] {
		return st.lib.causes["benign_warning_only"].Next
	}
	if len(fws) == 1 {
		switch {
		case fws["pytorch"]:
			return []string{
				`python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"`,
				"nvidia-smi",
				"python -m pip list | grep -i -e torch -e nvidia",
			}
		case fws["jax"]:
			return []string{
				`python -c "import jax; print(jax.__version__, jax.devices())"`,
				"nvidia-smi",
				"python -m pip list | grep -i -e jax -e nvidia",
			}
		}
	}
	return []string{"nvidia-smi", "python -m pip list | grep -i -e torch -e tensorflow -e jax -e onnxruntime -e nvidia"}
}
