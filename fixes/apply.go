package fixes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/internal/run"
)

// Session applies plans with consent, journaling every change.
type Session struct {
	M *Machine
	// W receives the questions and what happens; In gives the answers.
	W  io.Writer
	In io.Reader
	// TTY is true when In is a terminal, so questions may be asked.
	TTY bool
	// Yes accepts safe and moderate fixes without asking.
	Yes bool
	// Named are the fix IDs named on the command line: only those may run
	// a dangerous fix (after a yes on a terminal).
	Named []string
	// NoLive, when set, says why commands and signals are not run (a
	// --root tree is not this machine); file steps still apply.
	NoLive string
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace).
	Grace time.Duration
	// Self is how to run doctor again, for the sudo line ("doctor").
	Self string
	// Now returns the time (default time.Now).
	Now func() time.Time
	// CommandTimeout bounds each command (default 30 minutes: a pip install
	// of the CUDA wheels downloads gigabytes).
	CommandTimeout time.Duration

	// stepHook, when set, runs before each step; an error stops the run
	// there (tests: a failure injected between steps).
	stepHook func(p *Plan, i int) error

	lines   chan string
	journal *Journal
}

// Outcome is what happened to one plan.
type Outcome struct {
	Plan *Plan
	// State: applied, partial (some steps need root), failed, declined,
	// skipped (not allowed without a name, a terminal or --yes), needs-root,
	// refused, done (nothing to change) or manual.
	State  string
	Reason string
	// Changed lists the files changed; Ran the commands and signals.
	Changed []string
	Ran     []string
}

// Result is a whole session's outcome.
type Result struct {
	Outcomes []*Outcome
	// Journal is the run folder, "" when nothing was journaled.
	Journal string
	// Env is how a new shell's environment differs after the applied fixes.
	Env map[string]*string
}

// Applied reports whether anything on the machine changed.
func (r *Result) Applied() bool {
	for _, o := range r.Outcomes {
		if len(o.Changed) > 0 || len(o.Ran) > 0 {
			return true
		}
	}
	return false
}

func (s *Session) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Session) named(id string) bool { return contains(s.Named, id) }

// ask asks a yes/no question; anything but y or yes is no, and so are the
// end of the input and an interrupt (the read never holds doctor up).
func (s *Session) ask(ctx context.Context, q string) bool {
	if s.lines == nil {
		s.lines = make(chan string)
		go readLines(s.In, s.lines)
	}
	fmt.Fprintf(s.W, "%s [y/N] ", q)
	select {
	case line, ok := <-s.lines:
		if !ok {
			fmt.Fprintln(s.W)
			return false
		}
		a := strings.ToLower(strings.TrimSpace(line))
		return a == "y" || a == "yes"
	case <-ctx.Done():
		fmt.Fprintln(s.W)
		return false
	}
}

// readLines sends each line of r until it ends. Commands doctor runs get
// no standard input, so nothing else reads r.
func readLines(r io.Reader, out chan<- string) {
	defer close(out)
	if r == nil {
		return
	}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" || err == nil {
			out <- line
		}
		if err != nil {
			return
		}
	}
}

// question is what is asked before a plan runs. A process is named with
// its PID, user, command and GPU memory, so the yes is per process.
func question(p *Plan) string {
	if p.ID == checks.FixStopGPUProcess && len(p.Steps) == 1 && p.Steps[0].Proc != nil {
		pr := p.Steps[0].Proc
		return fmt.Sprintf("Stop PID %d (user %s, %s, %s)?", pr.PID, sanitize(orUnknown(pr.User)), gpuMem(pr), sanitize(shorten(pr.Command, 60)))
	}
	return fmt.Sprintf("Apply %q (%s, %s)?", p.ID, p.Title, p.Risk)
}

// consent decides whether a plan may run and says why not.
func (s *Session) consent(ctx context.Context, p *Plan) (bool, string, string) {
	switch {
	case p.Refused != "":
		return false, "refused", p.Refused
	case p.Done != "":
		return false, "done", p.Done
	case p.Manual || len(p.Steps) == 0:
		return false, "manual", "instructions only"
	}
	if p.Risk == checks.RiskDangerous && !s.named(p.ID) {
		return false, "skipped", fmt.Sprintf("dangerous: runs only when named and confirmed: doctor fix %s", p.ID)
	}
	if s.NoLive != "" && !hasFileStep(p) {
		return false, "skipped", s.NoLive
	}
	if p.NeedsRoot && !s.M.root() {
		return false, "needs-root", "needs root; nothing changed: " + s.sudoLine(p)
	}
	if path, who := s.otherUser(p); path != "" {
		return false, "other-user", fmt.Sprintf("%s belongs to %s: as root, doctor does not change another user's environment; as %s, run: %s",
			sanitize(path), sanitize(who), sanitize(who), displayArgv([]string{s.self(), "fix", p.ID}))
	}
	if !s.TTY {
		if p.Risk == checks.RiskDangerous {
			return false, "skipped", "dangerous: needs a yes on a terminal (--yes never covers it)"
		}
		if !s.Yes {
			return false, "skipped", "no terminal to ask: rerun with --yes to apply safe and moderate fixes"
		}
		return true, "", ""
	}
	if s.Yes && p.Risk != checks.RiskDangerous {
		return true, "", ""
	}
	if !s.ask(ctx, question(p)) {
		if ctx.Err() != nil {
			return false, "skipped", "interrupted"
		}
		return false, "declined", "you said no"
	}
	return true, "", ""
}

// otherUser says whose environment a plan's file edits would change when
// doctor runs as root and that environment is another user's: the first
// file in a home folder or a Python environment that someone else owns, and
// that user's name; "" when there is none. Who runs doctor decides what
// runs: root applies system steps, and prints the edits that belong in
// another user's home or environment. (Commands into another user's
// environment are planned as printed-only: Machine.userEnvOnly.)
func (s *Session) otherUser(p *Plan) (path, who string) {
	if !s.M.root() {
		return "", ""
	}
	me := s.M.uid()
	for _, st := range p.Steps {
		if st.NeedsRoot || !st.Kind.isFile() || !filepath.IsAbs(st.Path) {
			continue
		}
		for _, base := range []string{s.M.getenv("HOME"), p.param("env_prefix")} {
			if base == "" || !filepath.IsAbs(base) || !within(st.Path, base) {
				continue
			}
			if uid, _ := ownerOf(base); uid >= 0 && uid != me {
				return st.Path, userName(uid)
			}
		}
	}
	return "", ""
}

// within reports whether path lies in dir.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// userName is the login name of uid, else "user <uid>".
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("user %d", uid)
}

func (s *Session) self() string {
	if s.Self == "" {
		return "doctor"
	}
	return s.Self
}

func hasFileStep(p *Plan) bool {
	for _, st := range p.Steps {
		if st.Kind.isFile() {
			return true
		}
	}
	return false
}

func (s *Session) sudoLine(p *Plan) string {
	self := s.Self
	if self == "" {
		self = "doctor"
	}
	return "sudo " + displayArgv([]string{self, "fix", p.ID})
}

// Run asks for consent and applies each plan in order. It never stops at a
// failed fix: the next ones may still help; each outcome says what happened.
func (s *Session) Run(ctx context.Context, plans []*Plan) *Result {
	res := &Result{Env: map[string]*string{}}
	total := 0
	for _, p := range plans {
		if p.Applicable() {
			total++
		}
	}
	n := 0
	for _, p := range plans {
		o := &Outcome{Plan: p}
		res.Outcomes = append(res.Outcomes, o)
		if p.Applicable() {
			n++
		}
		if ctx.Err() != nil {
			o.State, o.Reason = "skipped", "interrupted"
			continue
		}
		ok, state, why := s.consent(ctx, p)
		if !ok {
			// Said once, in the summary (WriteOutcomes).
			o.State, o.Reason = state, why
			continue
		}
		fmt.Fprintf(s.W, "» [%d/%d] %s: %s\n", n, total, p.ID, p.Title)
		s.apply(ctx, p, o)
		if s.journal != nil {
			res.Journal = s.journal.dir
		}
		if o.State == "applied" || o.State == "partial" {
			for k, v := range p.Env {
				res.Env[k] = v
			}
		}
	}
	if s.journal != nil {
		_ = s.journal.finish(s.now())
	}
	return res
}

func (s *Session) openJournal() (*Journal, error) {
	if s.journal != nil {
		return s.journal, nil
	}
	dir := s.M.StateDir()
	if dir == "" {
		return nil, errors.New("no state folder for the journal: set HOME or XDG_STATE_HOME")
	}
	j, err := newJournal(dir, s.now())
	if err != nil {
		return nil, fmt.Errorf("creating the journal: %w", err)
	}
	s.journal = j
	return j, nil
}

func (s *Session) apply(ctx context.Context, p *Plan, o *Outcome) {
	rootSkipped := 0
	for i := range p.Steps {
		st := &p.Steps[i]
		if s.stepHook != nil {
			if err := s.stepHook(p, i); err != nil {
				o.State, o.Reason = "failed", err.Error()
				fmt.Fprintf(s.W, "  ✗ %v\n", err)
				return
			}
		}
		if st.NeedsRoot && !s.M.root() {
			rootSkipped++
			fmt.Fprintf(s.W, "  · step %d needs root; nothing changed there: %s\n", i+1, s.sudoLine(p))
			continue
		}
		if !st.Kind.isFile() && s.NoLive != "" {
			rootSkipped++
			fmt.Fprintf(s.W, "  · step %d not run: %s\n", i+1, s.NoLive)
			continue
		}
		if ctx.Err() != nil {
			o.State, o.Reason = "failed", "interrupted"
			return
		}
		var err error
		switch st.Kind {
		case KindWrite, KindComment, KindBlock:
			var changed bool
			changed, err = s.applyFile(p, st)
			if changed {
				o.Changed = append(o.Changed, st.Path)
				fmt.Fprintf(s.W, "  ✓ %s: %s\n", editVerb(st), st.Path)
			}
		case KindPreserve:
			err = s.preserve(p, st, i)
		case KindRun:
			err = s.runCommand(ctx, p, st)
			if err == nil {
				o.Ran = append(o.Ran, displayArgv(st.Argv))
			}
		case KindSignal:
			var what string
			what, err = s.signal(ctx, p, st)
			if err == nil {
				o.Ran = append(o.Ran, fmt.Sprintf("PID %d %s", st.Proc.PID, what))
				fmt.Fprintf(s.W, "  ✓ PID %d %s\n", st.Proc.PID, what)
			}
		}
		if err != nil {
			var rf *refusedError
			if errors.As(err, &rf) && len(o.Changed) == 0 && len(o.Ran) == 0 {
				o.State, o.Reason = "refused", rf.why
				fmt.Fprintf(s.W, "  ✗ refused: %v\n", rf.why)
				return
			}
			o.State, o.Reason = "failed", err.Error()
			fmt.Fprintf(s.W, "  ✗ step %d: %v\n", i+1, err)
			return
		}
	}
	s.finishPreserved(p)
	switch {
	case rootSkipped == len(p.Steps):
		o.State, o.Reason = "needs-root", "needs root; nothing changed: "+s.sudoLine(p)
	case rootSkipped > 0:
		o.State, o.Reason = "partial", "the steps that need root did not run: "+s.sudoLine(p)
	default:
		o.State = "applied"
	}
}

func editVerb(st *Step) string {
	if st.Kind == KindComment {
		return fmt.Sprintf("disabled line %d", st.Line)
	}
	if st.Kind == KindBlock {
		return "set doctor's block in"
	}
	if st.Old == nil {
		return "created"
	}
	return "rewrote"
}

// target computes what a file step writes, from the file as it is now.
func target(st *Step, cur []byte, exists bool) ([]byte, error) {
	switch st.Kind {
	case KindComment:
		if !exists {
			return nil, fmt.Errorf("%s no longer exists", st.Path)
		}
		out, ok := replaceLine(cur, st.Line, st.Text, st.New)
		if !ok {
			if _, ok := replaceLine(cur, 0, st.New, st.New); ok {
				return cur, nil // already disabled
			}
			return nil, fmt.Errorf("%s changed since the plan (line %d is no longer %q); run doctor --fix again", st.Path, st.Line, st.Text)
		}
		return out, nil
	case KindBlock:
		return upsertBlock(cur, st.Block, st.Body), nil
	case KindWrite:
		if exists && string(cur) == string(st.Content) {
			return cur, nil
		}
		if (st.Old == nil) != !exists || exists && string(cur) != string(st.Old) {
			return nil, fmt.Errorf("%s changed since the plan; run doctor --fix again", st.Path)
		}
		return st.Content, nil
	}
	return nil, fmt.Errorf("not a file step: %s", st.Kind)
}

// applyFile backs up, journals, then atomically writes one file. It
// reports whether the file changed.
func (s *Session) applyFile(p *Plan, st *Step) (bool, error) {
	cur, exists, err := readMaybe(st.Path)
	if err != nil {
		return false, err
	}
	want, err := target(st, cur, exists)
	if err != nil {
		return false, err
	}
	if exists && string(want) == string(cur) {
		return false, nil
	}
	if err := readOnly(st.Path); err != nil {
		return false, err
	}
	mode := st.Mode
	uid, gid := -1, -1
	if exists {
		if fi, err := os.Stat(st.Path); err == nil {
			mode = fi.Mode().Perm()
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				uid, gid = int(sys.Uid), int(sys.Gid)
			}
		}
	} else {
		uid, gid = ownerOf(filepath.Dir(st.Path))
	}
	if mode == 0 {
		mode = 0o644
	}
	j, err := s.openJournal()
	if err != nil {
		return false, err
	}
	missing := missingDirs(filepath.Dir(st.Path))
	e, err := j.beginFile(p.ID, st.Kind, st.Path, cur, exists, mode, want, missing)
	if err != nil {
		return false, err
	}
	if len(missing) > 0 {
		if err := os.MkdirAll(filepath.Dir(st.Path), 0o755); err != nil {
			return false, s.fail(e, err)
		}
		for _, d := range missing {
			keepOwner(d, uid, gid)
		}
	}
	if os.Geteuid() != 0 {
		uid, gid = -1, -1 // only root gives a file away
	}
	if err := writeKeepingIdentity(st.Path, want, mode, uid, gid); err != nil {
		return false, s.fail(e, err)
	}
	e.State = "done"
	return true, j.save()
}

func (s *Session) fail(e *Entry, err error) error {
	e.State, e.Error = "failed", err.Error()
	_ = s.journal.save()
	return err
}

// missingDirs lists the folders that creating dir would create, outermost
// first.
func missingDirs(dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// preserve backs up a file a command is about to change.
func (s *Session) preserve(p *Plan, st *Step, i int) error {
	cur, exists, err := readMaybe(st.Path)
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(st.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	j, err := s.openJournal()
	if err != nil {
		return err
	}
	_, err = j.beginFile(p.ID, KindPreserve, st.Path, cur, exists, mode, nil, missingDirs(filepath.Dir(st.Path)))
	return err
}

// finishPreserved records what preserved files hold after the commands, so
// undo can tell a later edit from the command's.
func (s *Session) finishPreserved(p *Plan) {
	if s.journal == nil {
		return
	}
	for _, e := range s.journal.Entries {
		if e.Kind != KindPreserve || e.Fix != p.ID || e.State != "pending" {
			continue
		}
		if cur, exists, err := readMaybe(e.Path); err == nil && exists {
			e.After = hashOf(cur)
		}
		e.State = "done"
	}
	_ = s.journal.save()
}

// runCommand runs argv with the user's environment, its output shown as it
// comes, in its own process group so an interrupt stops it whole.
func (s *Session) runCommand(ctx context.Context, p *Plan, st *Step) error {
	j, err := s.openJournal()
	if err != nil {
		return err
	}
	e := &Entry{Fix: p.ID, Kind: KindRun, State: "pending", Argv: st.Argv}
	if err := j.record(e); err != nil {
		return err
	}
	fmt.Fprintf(s.W, "  $ %s\n", displayArgv(st.Argv))
	timeout := s.CommandTimeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	// internal/run: its own process group, killed whole at the deadline
	// or on an interrupt.
	out := &prefixWriter{w: s.W, prefix: "    "}
	res := run.Run(ctx, run.Cmd{Path: st.Argv[0], Args: st.Argv[1:], Env: s.environ(st), Stdout: out, Stderr: out, Timeout: timeout})
	out.flush()
	code := res.ExitCode
	e.Exit = &code
	err = res.Err
	switch {
	case res.TimedOut:
		err = fmt.Errorf("%s: no end after %s", st.Argv[0], timeout)
	case err == nil && res.Signal != "":
		err = fmt.Errorf("%s ended by %s", filepath.Base(st.Argv[0]), res.Signal)
	case err == nil && code != 0:
		err = fmt.Errorf("%s exited with status %d", filepath.Base(st.Argv[0]), code)
	}
	if err != nil {
		s.fail(e, err)
		return err
	}
	e.State = "done"
	return j.save()
}

// environ is the environment a command runs with: the user's.
func (s *Session) environ(st *Step) []string {
	keys := make([]string, 0, len(s.M.Env))
	for k := range s.M.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		out = append(out, k+"="+s.M.Env[k])
	}
	if len(st.Argv) > 0 && (st.Argv[0] == "apt-get" || strings.HasSuffix(st.Argv[0], "/apt-get")) {
		out = append(out, "DEBIAN_FRONTEND=noninteractive")
	}
	return out
}

func (s *Session) signal(ctx context.Context, p *Plan, st *Step) (string, error) {
	j, err := s.openJournal()
	if err != nil {
		return "", err
	}
	e := &Entry{Fix: p.ID, Kind: KindSignal, State: "pending", PID: st.Proc.PID}
	if err := j.record(e); err != nil {
		return "", err
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	what, err := s.M.stopProcess(ctx, st.Proc, grace)
	if err != nil {
		return "", s.fail(e, err)
	}
	e.State, e.Result = "done", what
	return what, j.save()
}

// prefixWriter indents a command's output under its step.
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, sanitize(strings.TrimRight(string(p.buf[:i]), "\r")))
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}

func (p *prefixWriter) flush() {
	if len(p.buf) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, sanitize(string(p.buf)))
		p.buf = nil
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func gpuMem(pr *Process) string {
	if !pr.HasGPU {
		return "GPU memory unknown"
	}
	return fmt.Sprintf("%.1f GiB on GPU %d", float64(pr.UsedMiB)/1024, pr.GPU)
}
