package fixes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tfdoctor/doctor/internal/atomicfile"
)

// JournalSchema versions the journal file.
const JournalSchema = "doctor.fix-journal/v1"

// Lock is an exclusive lock on the state directory: one fix (or undo) run at
// a time. The kernel drops it when the process ends, however it ends.
type Lock struct{ f *os.File }

// ErrLocked is returned (wrapped) when another run holds the lock.
var ErrLocked = errors.New("another doctor fix run is in progress")

// AcquireLock takes the lock in stateDir, creating the folder (mode 0700).
func AcquireLock(stateDir string) (*Lock, error) {
	if stateDir == "" {
		return nil, errors.New("no state folder: set HOME or XDG_STATE_HOME")
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, "fix.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (lock %s)", ErrLocked, path)
		}
		return nil, err
	}
	_ = f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return &Lock{f: f}, nil
}

// Release drops the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// Entry is one journaled action.
type Entry struct {
	Fix  string   `json:"fix"`
	Kind StepKind `json:"kind"`
	// State is pending (about to happen), done, or failed.
	State string `json:"state"`
	Error string `json:"error,omitempty"`

	// File steps.
	Path    string      `json:"path,omitempty"`
	Existed bool        `json:"existed,omitempty"`
	Mode    os.FileMode `json:"mode,omitempty"`
	Backup  string      `json:"backup,omitempty"` // relative to the run folder
	Before  string      `json:"before_sha256,omitempty"`
	After   string      `json:"after_sha256,omitempty"`
	// Dirs are folders the step created, removed again by undo when empty.
	Dirs []string `json:"created_dirs,omitempty"`
	// Undone is when undo restored this file (or found it restored): a
	// later undo of a partly undone run skips it.
	Undone *time.Time `json:"undone,omitempty"`

	// Run and signal steps (not undoable).
	Argv   []string `json:"argv,omitempty"`
	Exit   *int     `json:"exit_code,omitempty"`
	PID    int      `json:"pid,omitempty"`
	Result string   `json:"result,omitempty"`
}

// Journal records one fix run: what was done, with a backup of every file
// before it changed.
type Journal struct {
	Schema   string     `json:"schema"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Undone   *time.Time `json:"undone,omitempty"`
	Entries  []*Entry   `json:"entries"`

	dir string
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// newJournal creates a run folder under stateDir/runs.
func newJournal(stateDir string, now time.Time) (*Journal, error) {
	runs := filepath.Join(stateDir, "runs")
	if err := os.MkdirAll(runs, 0o700); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%d", now.UTC().Format("20060102T150405.000000000Z"), os.Getpid())
	dir := filepath.Join(runs, name)
	if err := os.MkdirAll(filepath.Join(dir, "backups"), 0o700); err != nil {
		return nil, err
	}
	j := &Journal{Schema: JournalSchema, Started: now.UTC(), Entries: []*Entry{}, dir: dir}
	return j, j.save()
}

// Dir is the run's folder.
func (j *Journal) Dir() string { return j.dir }

func (j *Journal) save() error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(j.dir, "journal.json"), append(b, '\n'), 0o600)
}

// beginFile backs up a file's current content and records the edit as
// pending, before the file is touched: whenever the process dies, undo
// finds the backup.
func (j *Journal) beginFile(fix string, kind StepKind, path string, before []byte, existed bool, mode os.FileMode, after []byte, dirs []string) (*Entry, error) {
	e := &Entry{Fix: fix, Kind: kind, State: "pending", Path: path, Existed: existed, Mode: mode, Before: hashOf(before), Dirs: dirs}
	if after != nil {
		e.After = hashOf(after)
	}
	if existed {
		e.Backup = filepath.Join("backups", fmt.Sprintf("%03d-%s", len(j.Entries), filepath.Base(path)))
		if err := atomicfile.Write(filepath.Join(j.dir, e.Backup), before, 0o600); err != nil {
			return nil, fmt.Errorf("backing up %s: %w", path, err)
		}
	} else {
		e.Before = ""
	}
	j.Entries = append(j.Entries, e)
	return e, j.save()
}

func (j *Journal) record(e *Entry) error {
	j.Entries = append(j.Entries, e)
	return j.save()
}

func (j *Journal) finish(now time.Time) error {
	t := now.UTC()
	j.Finished = &t
	return j.save()
}

// loadJournal reads a run folder's journal.
func loadJournal(dir string) (*Journal, error) {
	b, err := os.ReadFile(filepath.Join(dir, "journal.json"))
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "journal.json"), err)
	}
	if j.Schema != JournalSchema {
		return nil, fmt.Errorf("%s: unknown schema %q", dir, j.Schema)
	}
	j.dir = dir
	return &j, nil
}

// UndoResult is what an undo did.
type UndoResult struct {
	Run       string   // the run folder undone ("" when there was none)
	Restored  []string // files restored or removed
	Unchanged []string // files that already held their old content
	Conflicts []string // files changed since the fix: left alone
	NotUndone []string // commands and signals, which cannot be undone
	Failed    []string
	// Backups gives, for each conflict, doctor's backup of the file (""
	// when the fix created the file); Errors, for each failure, why.
	Backups map[string]string
	Errors  map[string]string
	// Partial is true when the run stays undoable for what is left (a
	// conflict or a failure); a later undo tries those files again.
	Partial bool
}

// Undo restores the files of the newest run that was not undone yet, byte
// for byte, and removes the files and folders it created. A file changed
// since the fix is left alone and reported in the result; the run is then
// marked undone only for the files restored, and stays undoable for the
// rest. Call it with the lock held.
func Undo(stateDir string, w io.Writer, now time.Time) (*UndoResult, error) {
	res := &UndoResult{}
	j, err := lastRun(stateDir)
	if err != nil || j == nil {
		return res, err
	}
	res.Run = j.dir
	res.Backups, res.Errors = map[string]string{}, map[string]string{}
	t := now.UTC()
	for i := len(j.Entries) - 1; i >= 0; i-- {
		e := j.Entries[i]
		if !e.Kind.isFile() {
			if e.State == "done" {
				res.NotUndone = append(res.NotUndone, describeEntry(e))
			}
			continue
		}
		if e.Undone != nil {
			continue // restored by an earlier undo of this run
		}
		switch err := undoFile(j, e); {
		case err == nil:
			e.Undone = &t
			if !contains(res.Restored, e.Path) {
				res.Restored = append(res.Restored, e.Path)
			}
		case errors.Is(err, errUnchanged):
			e.Undone = &t
			if !contains(res.Unchanged, e.Path) && !contains(res.Restored, e.Path) {
				res.Unchanged = append(res.Unchanged, e.Path)
			}
		case errors.Is(err, errConflict):
			if !contains(res.Conflicts, e.Path) {
				res.Conflicts = append(res.Conflicts, e.Path)
				res.Backups[e.Path] = ""
				if e.Backup != "" {
					res.Backups[e.Path] = filepath.Join(j.dir, e.Backup)
				}
			}
		default:
			if !contains(res.Failed, e.Path) {
				res.Failed = append(res.Failed, e.Path)
				res.Errors[e.Path] = err.Error()
			}
		}
	}
	res.Partial = len(res.Conflicts) > 0 || len(res.Failed) > 0
	if !res.Partial {
		j.Undone = &t
	}
	return res, j.save()
}

func (k StepKind) isFile() bool {
	return k == KindWrite || k == KindComment || k == KindPreserve || k == KindBlock
}

var (
	errUnchanged = errors.New("already holds its old content")
	errConflict  = errors.New("changed since the fix")
)

func undoFile(j *Journal, e *Entry) error {
	cur, exists, err := readMaybe(e.Path)
	if err != nil {
		return err
	}
	removeStaleTemps(e.Path)
	defer removeDirs(e.Dirs)
	curHash := hashOf(cur)
	if !e.Existed {
		if !exists {
			return errUnchanged
		}
		if e.After != "" && curHash != e.After {
			return errConflict
		}
		return os.Remove(e.Path)
	}
	if exists && curHash == e.Before {
		return errUnchanged
	}
	if e.After != "" && (!exists || curHash != e.After) {
		return errConflict
	}
	old, err := os.ReadFile(filepath.Join(j.dir, e.Backup))
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if hashOf(old) != e.Before {
		return fmt.Errorf("backup %s is damaged", e.Backup)
	}
	mode := e.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	var uid, gid = -1, -1
	if st, err := os.Stat(e.Path); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(sys.Uid), int(sys.Gid)
		}
	}
	if err := atomicfile.Write(e.Path, old, mode); err != nil {
		return err
	}
	keepOwner(e.Path, uid, gid)
	return nil
}

// removeStaleTemps deletes the temporary files an atomic write killed
// half-way leaves next to its target (".NAME.doctor-*").
func removeStaleTemps(path string) {
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	}
	ms, _ := filepath.Glob(filepath.Join(filepath.Dir(target), "."+globEscape(filepath.Base(target))+".doctor-*"))
	for _, m := range ms {
		_ = os.Remove(m)
	}
}

func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// removeDirs removes folders a step created, deepest first, if empty.
func removeDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // fails, harmlessly, when not empty
	}
}

func describeEntry(e *Entry) string {
	switch e.Kind {
	case KindRun:
		return "ran: " + displayArgv(e.Argv)
	case KindSignal:
		return fmt.Sprintf("stopped PID %d", e.PID)
	}
	return string(e.Kind)
}

// lastRun returns the newest run that was not undone and changed files.
func lastRun(stateDir string) (*Journal, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, "runs"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, n := range names {
		j, err := loadJournal(filepath.Join(stateDir, "runs", n))
		if err != nil {
			continue
		}
		if j.Undone != nil {
			continue
		}
		for _, e := range j.Entries {
			if e.Kind.isFile() {
				return j, nil
			}
		}
	}
	return nil, nil
}

// keepOwner gives a rewritten file back its owner: an atomic write as root
// creates a new file owned by root, which would lock a user out of their
// own ~/.bashrc.
func keepOwner(path string, uid, gid int) {
	if uid < 0 || os.Geteuid() != 0 {
		return
	}
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && (int(sys.Uid) != uid || int(sys.Gid) != gid) {
		_ = os.Chown(path, uid, gid)
	}
}

// ownerOf returns the owner of path, or of its nearest existing parent.
func ownerOf(path string) (int, int) {
	for p := path; ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok {
				return int(sys.Uid), int(sys.Gid)
			}
			return -1, -1
		}
		if p == filepath.Dir(p) {
			return -1, -1
		}
	}
}
