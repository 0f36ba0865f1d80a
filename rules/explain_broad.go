package rules

import (
	"regexp"

	"github.com/tfdoctor/doctor/checks"
)

// The broad tier (Signature.Tier) reads words, not the shape of a message,
// so it must not read what a paste holds besides messages: the commands
// the user typed, the source code a traceback quotes, a program's --help,
// the user's own sentences, a README's requirements, and a file tool
// saying a path does not exist (a probe, not a failure). notAMessage says
// a line is one of these.
var (
	// A command line: a shell prompt ('$ ', '# ', 'user@host:~$ ',
	// '(env) ... $ ', 'PS C:\>', 'C:\Users\x>'), Python's '>>> ' and
	// '... ', IPython's 'In [3]: '.
	promptLineRE = regexp.MustCompile(`^\s*(?:[$#%]\s|>>>|\.\.\.\s|In \[\d*\]:|PS [A-Za-z]:\\[^>]*>|[A-Za-z]:\\[^>]*>\s*\S|(?:\([\w.-]+\)\s*)?[\w.-]+@[\w.-]+(?::[^\s$#%]*)?\s*[$#%]\s|\([\w.-]+\)\s*[$#%]\s)`)
	// IPython 8's numbered source lines ('     31         raise ...',
	// '---> 32     batch = ...'), read only when the paste has IPython's
	// frame header (ctx.py_ipython_frame).
	numberedSourceRE = regexp.MustCompile(`^\s*(?:-*>\s*)?\d+\s`)
	// An option's help text ('  --gpu ID   GPU index ...') or usage line.
	optionHelpRE = regexp.MustCompile(`^(?:\s+-{1,2}[A-Za-z][\w-]*\b|usage: )`)
	// The user's own words: 'I already tried ...', 'Hi, ...'.
	proseRE = regexp.MustCompile(`(?:^|[^\w'])I(?:'ve|'m|'d| have| had| already| also| then| tried| try| updated| installed| reinstalled| upgraded| did| do| am| was| got| get| see| ran| run| checked| can| cannot| think| followed)\b|(?i)^\s*(?:hi|hello|hey|thanks|thank you)\b`)
	// A README's or a requirements list's bullet: '- NVIDIA driver >= 525'.
	requirementRE = regexp.MustCompile(`(?i)^\s*(?:[-*+•]|\d+\.)\s.*(?:>=|≥|\bor (?:newer|later|higher|above)\b|\bat least\b|\bminimum\b|\brequire)`)
	failureWordRE = regexp.MustCompile(`(?i)error|fail|cannot|can't|unable|not found`)
	// A file tool's own complaint ('ls: cannot access ...: No such file').
	fileToolRE = regexp.MustCompile(`^\s*(?:ls|find|stat|du|readlink|realpath|file|which|cat|head|tail|grep|cp|mv|ln|rm|tree):\s`)
)

// docQuoteRE is a line that quotes a message to explain it, the way a
// README, a FAQ or a forum answer pasted along does: '"Could not load
// dynamic library 'libcudart.so.11.0'" means CUDA 11 is not installed',
// 'If you see "Failed to initialize NVML", reboot'. The message is
// quoted, not printed by this machine: no signature reads the line.
var docQuoteRE = regexp.MustCompile(`(?i)(?:"[^"]{8,}"|“[^”]{8,}”|'[^']{8,}'|` + "`[^`]{8,}`" + `)\s*(?:\)\s*)?(?:[,:]\s*)?(?:(?:usually|often|typically|simply|just) )?(?:means|indicates|is caused by|is due to|happens when|occurs when|can be (?:safely )?ignored|is harmless)\b|\bif you (?:see|get|encounter|hit|run into)\s*:?\s*["“'` + "`" + `]`)

func notAMessage(text string, ipython bool) bool {
	switch {
	case promptLineRE.MatchString(text),
		ipython && numberedSourceRE.MatchString(text),
		optionHelpRE.MatchString(text),
		proseRE.MatchString(text),
		requirementRE.MatchString(text) && !failureWordRE.MatchString(text),
		fileToolRE.MatchString(text):
		return true
	}
	return false
}

// oneBroadAnswer: the broad tier's readings are undecided guesses at one
// failure from its words, so they give one answer, not several causes.
// The answer is the most specific reading (the highest weight: 'update
// your driver to 535' says more than 'no CUDA devices found', which any
// of the causes below it ends in), then the most severe, then the chain's
// root; the other readings are filed under it, whatever link they sit on.
func oneBroadAnswer(r *Report, ds []*draft, ids []string) {
	// Between equals the causal chain's root (Assemble: the lowest link)
	// stays the answer.
	best := -1
	if r.RootCause != nil {
		for i := range ds {
			if ids[i] == r.RootCause.ID && ds[i].sig != nil && ds[i].sig.Tier == TierBroad {
				best = i
			}
		}
	}
	for i, d := range ds {
		if d.sig == nil || d.sig.Tier != TierBroad || !(d.severity == checks.SevError || d.severity == checks.SevWarning) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := ds[best]
		switch {
		case d.weight != b.weight:
			if d.weight > b.weight {
				best = i
			}
		case d.severity.Rank() < b.severity.Rank():
			best = i
		}
	}
	if best < 0 {
		return
	}
	root := ids[best]
	var rc *RootCause
	for i := range r.Findings {
		f := &r.Findings[i]
		if !f.Failing() {
			continue
		}
		if f.ID == root {
			f.BlockedBy = nil
			rc = &RootCause{ID: f.ID, Cause: f.Cause, Title: f.Title}
			if len(f.Fixes) > 0 {
				id := f.Fixes[0].ID
				rc.Fix = &id
			}
			continue
		}
		id := root
		f.BlockedBy = &id
	}
	if rc == nil {
		return
	}
	r.RootCause = rc
	r.Causes = []RootCause{*rc}
}

// sitePackagesRE finds an installed package's path ('.../python3.10/
// site-packages/torch/...'), as a traceback's frames and pip quote it.
var sitePackagesRE = regexp.MustCompile(`(?i)[/\\]site-packages[/\\ )]|[/\\]site-packages$`)

// recognisedOutput reports whether a fact was read from output explain
// knows (a version banner, a device table, collect_env), not only the
// Python version a site-packages path in a traceback happens to name: a
// paste whose only recognised words are a path is unrecognised, and says
// so with what to paste next, instead of "no problem in the recognised
// output".
func (st *explainState) recognisedOutput() bool {
	for _, f := range st.facts {
		if len(f.values) == 1 && f.values["python"] != "" && sitePackagesRE.MatchString(f.text) {
			continue
		}
		return true
	}
	return false
}
