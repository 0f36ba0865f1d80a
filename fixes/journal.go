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
)

// JournalSchema versions the journal file.
const JournalSchema = "doctor.fix-journal/v1"

// Lock is an exclusive lock on the state directory: one fix (or undo) run at
// a time. The kernel drops it when the process ends, however it ends.
type Lock struct{ f *os.File }

// ErrLocked is returned (wrapped) when another run holds the lock.
var ErrLocked = errors.New("another doctor fix run is in progress")

// AcquireLock takes the lock in stateDir, creating the folder (mode 0700).
// A state folder that another user could have written, or a lock file
// that is a link, is refused (*StateError) and nothing is written.
func AcquireLock(stateDir string) (*Lock, error) {
	fs, err := openState(stateDir, true)
	if err != nil {
		return nil, err
	}
	defer fs.close()
	f, err := fs.open("fix.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	path := f.Name()
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

	dir string   // the run folder, for people
	fs  *stateFS // the state folder
	rel string   // the run folder inside it
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// newJournal creates a run folder under stateDir/runs.
func newJournal(stateDir string, now time.Time) (*Journal, error) {
	fs, err := openState(stateDir, true)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%d", now.UTC().Format("20060102T150405.000000000Z"), os.Getpid())
	j := &Journal{Schema: JournalSchema, Started: now.UTC(), Entries: []*Entry{},
		dir: filepath.Join(fs.path, "runs", name), fs: fs, rel: "runs/" + name}
	return j, j.save()
}

// Dir is the run's folder.
func (j *Journal) Dir() string { return j.dir }

func (j *Journal) save() error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return j.fs.writeFile(j.rel+"/journal.json", append(b, '\n'), 0o600)
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
		if err := j.fs.writeFile(j.rel+"/"+e.Backup, before, 0o600); err != nil {
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

// loadJournal reads a run folder's journal. A journal or folder that
// doctor did not write (another owner, writable by others, a link) is a
// *StateError.
func loadJournal(fs *stateFS, name string) (*Journal, error) {
	rel := "runs/" + name
	b, err := fs.readFile(rel + "/journal.json")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(fs.path, "runs", name)
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "journal.json"), err)
	}
	if j.Schema != JournalSchema {
		return nil, fmt.Errorf("%s: unknown schema %q", dir, j.Schema)
	}
	j.dir, j.fs, j.rel = dir, fs, rel
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
	fs, err := openState(stateDir, false)
	if errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	defer fs.close()
	j, err := lastRun(fs)
	if err != nil || j == nil {
		return res, err
	}
	// Nothing is written unless the whole journal is doctor's own.
	backups, err := j.check()
	if err != nil {
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
		switch err := undoFile(e, backups[e]); {
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

// check refuses a journal that doctor cannot have written, before undo
// writes anything from it: every file entry names an absolute, clean path,
// folders it created that lie above that path, the hash of what doctor
// wrote there, and (for a file that existed) a backup in the run's
// backups folder, a regular file owned by the user running doctor, that
// holds the recorded content. It returns each entry's backup.
func (j *Journal) check() (map[*Entry][]byte, error) {
	bad := func(e *Entry, format string, a ...any) error {
		return &StateError{Path: filepath.Join(j.dir, "journal.json"),
			Why: fmt.Sprintf("entry for %q: ", e.Path) + fmt.Sprintf(format, a...) + "; doctor did not write this journal, and undo writes nothing from it"}
	}
	backups := map[*Entry][]byte{}
	for _, e := range j.Entries {
		if !e.Kind.isFile() || e.Undone != nil {
			continue
		}
		if !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path || strings.ContainsRune(e.Path, 0) {
			return nil, bad(e, "not an absolute, clean path")
		}
		for _, d := range e.Dirs {
			if !filepath.IsAbs(d) || filepath.Clean(d) != d || !strings.HasPrefix(e.Path, d+"/") {
				return nil, bad(e, "created folder %q does not hold the file", d)
			}
		}
		if e.After == "" && e.Kind != KindPreserve {
			return nil, bad(e, "no hash of what doctor wrote")
		}
		if !e.Existed {
			if e.Backup != "" {
				return nil, bad(e, "a backup of a file that did not exist")
			}
			continue
		}
		name := strings.TrimPrefix(e.Backup, "backups/")
		if name == e.Backup || name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
			return nil, bad(e, "backup %q is not in the run's backups folder", e.Backup)
		}
		old, err := j.fs.readFile(j.rel + "/backups/" + name)
		if err != nil {
			return nil, err
		}
		if hashOf(old) != e.Before {
			return nil, bad(e, "backup %s does not hold the content recorded (damaged or replaced)", e.Backup)
		}
		backups[e] = old
	}
	return backups, nil
}

// undoFile restores one file from its checked backup (old), only when the
// file holds what doctor wrote; it keeps the file's identity (mode,
// owner, hard links).
func undoFile(e *Entry, old []byte) error {
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
		if e.After == "" || curHash != e.After {
			return errConflict
		}
		return os.Remove(e.Path)
	}
	if exists && curHash == e.Before {
		return errUnchanged
	}
	// What doctor wrote is still there (a command's change, for a file a
	// command was to change), else the file is someone else's now.
	if e.After == "" || !exists || curHash != e.After {
		return errConflict
	}
	return writeKeepingIdentity(e.Path, old, 0, -1, -1)
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
// A run folder or journal doctor did not write stops the search: undoing
// an older run instead would undo the wrong one.
func lastRun(fs *stateFS) (*Journal, error) {
	names, err := fs.readDir("runs")
	if err != nil {
		return nil, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, n := range names {
		j, err := loadJournal(fs, n)
		if err != nil {
			var se *StateError
			if errors.As(err, &se) {
				return nil, err
			}
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
