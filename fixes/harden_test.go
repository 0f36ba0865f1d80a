package fixes

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobody is a real uid other than the test's: files "planted by another
// user" are chowned to it (the tests run as root, as CI does).
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: files of another owner are made with chown")
	}
}

func statOf(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// victim is a file an attacker wants root to overwrite.
func victim(t *testing.T) (string, func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte("precious\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	before := *statOf(t, p)
	return p, func() {
		t.Helper()
		b, err := os.ReadFile(p)
		st := statOf(t, p)
		if err != nil || string(b) != "precious\n" || st.Mode != before.Mode || st.Uid != before.Uid || st.Ino != before.Ino {
			t.Errorf("the victim changed: %q %v, mode %o uid %d", b, err, st.Mode, st.Uid)
		}
	}
}

func isStateError(err error) bool {
	var se *StateError
	return errors.As(err, &se)
}

// TestStateFolderRefused: a state folder that someone else could have
// written is refused, with why, before anything in it is opened; a link
// planted in it is never followed.
func TestStateFolderRefused(t *testing.T) {
	needRoot(t)
	cases := []struct {
		name  string
		setup func(t *testing.T, state, victim string)
		why   string
	}{
		{"owned by another user, with a planted lock link", func(t *testing.T, state, victim string) {
			mustMkdir(t, state, 0o700)
			must(t, os.Symlink(victim, filepath.Join(state, "fix.lock")))
			must(t, os.Lchown(filepath.Join(state, "fix.lock"), nobody, nobody))
			must(t, os.Chown(state, nobody, nobody))
		}, "owned by uid 65534"},
		{"writable by others", func(t *testing.T, state, victim string) {
			mustMkdir(t, state, 0o700)
			must(t, os.Chmod(state, 0o777))
			must(t, os.Symlink(victim, filepath.Join(state, "fix.lock")))
		}, "writable by others"},
		{"writable by its group", func(t *testing.T, state, victim string) {
			mustMkdir(t, state, 0o770)
			must(t, os.Chmod(state, 0o770))
		}, "writable by others"},
		{"a link to another folder", func(t *testing.T, state, victim string) {
			must(t, os.Symlink(filepath.Dir(victim), state))
		}, "is a link"},
		{"our own folder, with a planted lock link", func(t *testing.T, state, victim string) {
			mustMkdir(t, state, 0o700)
			must(t, os.Symlink(victim, filepath.Join(state, "fix.lock")))
		}, "fix.lock"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, check := victim(t)
			state := filepath.Join(t.TempDir(), "doctor")
			c.setup(t, state, v)
			l, err := AcquireLock(state)
			if err == nil {
				l.Release()
				t.Fatal("the lock was taken")
			}
			if !isStateError(err) || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), state) {
				t.Errorf("error %v: want a *StateError naming %s and saying %q", err, state, c.why)
			}
			// Undo does not use the lock file; the folder itself is refused.
			if _, err := Undo(state, os.Stderr, time.Now()); err == nil && c.why != "fix.lock" {
				t.Error("undo trusted the folder")
			}
			check()
		})
	}
}

func mustMkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	must(t, os.MkdirAll(dir, mode))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPlantedJournalRefused: undo writes nothing from a journal doctor did
// not write: one owned by another user or writable by others, one whose
// backup is a link, one that names a backup outside its run, one without
// the hash of what doctor wrote.
func TestPlantedJournalRefused(t *testing.T) {
	needRoot(t)
	type plant struct {
		name    string
		journal func(v string, backup string) *Journal
		tamper  func(t *testing.T, run string)
		why     string
	}
	entry := func(v, backup string) *Entry {
		cur, _ := os.ReadFile(v)
		return &Entry{Fix: "unset-cuda-visible-devices", Kind: KindWrite, State: "done", Path: v, Existed: true, Mode: 0o4755,
			Backup: backup, Before: hashOf([]byte("owned\n")), After: hashOf(cur)}
	}
	plants := []plant{
		{"owned by another user", func(v, b string) *Journal { return &Journal{Entries: []*Entry{entry(v, b)}} },
			func(t *testing.T, run string) { must(t, os.Chown(filepath.Join(run, "journal.json"), nobody, nobody)) }, "owned by uid 65534"},
		{"writable by others", func(v, b string) *Journal { return &Journal{Entries: []*Entry{entry(v, b)}} },
			func(t *testing.T, run string) { must(t, os.Chmod(filepath.Join(run, "journal.json"), 0o666)) }, "writable by others"},
		{"a run folder of another user", func(v, b string) *Journal { return &Journal{Entries: []*Entry{entry(v, b)}} },
			func(t *testing.T, run string) { must(t, os.Chown(run, nobody, nobody)) }, "owned by uid 65534"},
		{"the journal is a link", func(v, b string) *Journal { return &Journal{Entries: []*Entry{entry(v, b)}} },
			func(t *testing.T, run string) {
				j := filepath.Join(run, "journal.json")
				must(t, os.Rename(j, j+".real"))
				must(t, os.Symlink(j+".real", j))
			}, "journal.json"},
		{"the backup is a link", func(v, b string) *Journal { return &Journal{Entries: []*Entry{entry(v, b)}} },
			func(t *testing.T, run string) {
				bk := filepath.Join(run, "backups", "000-victim")
				must(t, os.Rename(bk, bk+".real"))
				must(t, os.Symlink(bk+".real", bk))
			}, "000-victim"},
		{"a backup outside the run", func(v, b string) *Journal { return &Journal{Entries: []*Entry{entry(v, "../../../owned")}} },
			nil, "backup"},
		{"no hash of what doctor wrote", func(v, b string) *Journal {
			e := entry(v, b)
			e.After = ""
			return &Journal{Entries: []*Entry{e}}
		}, nil, "what doctor wrote"},
		{"a relative path", func(v, b string) *Journal {
			e := entry(v, b)
			e.Path = "victim"
			return &Journal{Entries: []*Entry{e}}
		}, nil, "not an absolute"},
	}
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			v, check := victim(t)
			state := filepath.Join(t.TempDir(), "doctor")
			mustMkdir(t, state, 0o700)
			run := filepath.Join(state, "runs", "29990101T000000.000000000Z-1")
			mustMkdir(t, filepath.Join(run, "backups"), 0o700)
			must(t, os.WriteFile(filepath.Join(run, "backups", "000-victim"), []byte("owned\n"), 0o600))
			must(t, os.WriteFile(filepath.Join(state, "owned"), []byte("owned\n"), 0o600))
			j := p.journal(v, "backups/000-victim")
			j.Schema, j.Started = JournalSchema, time.Now()
			b, _ := json.Marshal(j)
			must(t, os.WriteFile(filepath.Join(run, "journal.json"), b, 0o600))
			if p.tamper != nil {
				p.tamper(t, run)
			}
			var w strings.Builder
			u, err := Undo(state, &w, time.Now())
			why := err
			if err == nil && u != nil && len(u.Errors) > 0 {
				for _, e := range u.Errors {
					why = errors.New(e)
				}
			}
			if why == nil || !strings.Contains(why.Error(), p.why) {
				t.Errorf("undo: %+v, %v: want a refusal saying %q", u, err, p.why)
			}
			if err == nil && u != nil && len(u.Restored) > 0 {
				t.Errorf("restored %v", u.Restored)
			}
			check()
		})
	}
}

// TestEditKeepsHardLinks: a .bashrc that is a hard link to a dotfiles copy
// stays one file through the fix and its undo, with its mode and owner.
func TestEditKeepsHardLinks(t *testing.T) {
	needRoot(t)
	e := newEnv(t)
	files := seedCVD(t, e, 0)
	rc := files[0].path
	dot := filepath.Join(e.dir, "dotfiles", "bashrc")
	mustMkdir(t, filepath.Dir(dot), 0o755)
	must(t, os.Link(rc, dot))
	must(t, os.Chmod(rc, 0o640))
	must(t, os.Chown(rc, nobody, nobody))
	before := statOf(t, rc)

	res, out := e.apply(report(cvdFix))
	if !res.Applied() {
		t.Fatalf("not applied:\n%s", out)
	}
	same := func(when, content string) {
		t.Helper()
		for _, p := range []string{rc, dot} {
			st := statOf(t, p)
			if st.Ino != before.Ino || st.Nlink != 2 || st.Mode != before.Mode || st.Uid != nobody || st.Gid != nobody {
				t.Errorf("%s: %s lost its identity: ino %d (was %d), links %d, mode %o (was %o), owner %d:%d",
					when, p, st.Ino, before.Ino, st.Nlink, st.Mode, before.Mode, st.Uid, st.Gid)
			}
			if got := e.read(p); got != content {
				t.Errorf("%s: %s holds %q, want %q", when, p, got, content)
			}
		}
	}
	same("after the fix", files[0].new)
	u, err := Undo(e.m.StateDir(), os.Stderr, time.Now())
	if err != nil || len(u.Restored) != 1 {
		t.Fatalf("undo %+v %v", u, err)
	}
	same("after undo", files[0].old)
}

// TestEditKeepsModeAndOwner: a file rewritten by rename gets its mode and
// owner back before it takes the old one's place.
func TestEditKeepsModeAndOwner(t *testing.T) {
	needRoot(t)
	e := newEnv(t)
	files := seedCVD(t, e, 0)
	rc := files[0].path
	must(t, os.Chmod(rc, 0o600))
	must(t, os.Chown(rc, nobody, nobody))
	if res, out := e.apply(report(cvdFix)); !res.Applied() {
		t.Fatalf("not applied:\n%s", out)
	}
	if st := statOf(t, rc); st.Mode&0o7777 != 0o600 || st.Uid != nobody || st.Gid != nobody {
		t.Errorf("mode %o owner %d:%d", st.Mode&0o7777, st.Uid, st.Gid)
	}
	if _, err := Undo(e.m.StateDir(), os.Stderr, time.Now()); err != nil {
		t.Fatal(err)
	}
	if st := statOf(t, rc); st.Mode&0o7777 != 0o600 || st.Uid != nobody || e.read(rc) != files[0].old {
		t.Errorf("after undo: mode %o owner %d", st.Mode&0o7777, st.Uid)
	}
}

// TestReadOnlyFileRefused: a read-only .bashrc is not edited; the outcome
// says why and how.
func TestReadOnlyFileRefused(t *testing.T) {
	e := newEnv(t)
	files := seedCVD(t, e, 0)
	rc := files[0].path
	must(t, os.Chmod(rc, 0o444))
	res, out := e.apply(report(cvdFix))
	o := res.Outcomes[0]
	if res.Applied() || o.State != "refused" || !strings.Contains(o.Reason, "read-only") || !strings.Contains(o.Reason, rc) {
		t.Errorf("outcome %s (%s)\n%s", o.State, o.Reason, out)
	}
	if got := e.read(rc); got != files[0].old {
		t.Errorf("the read-only file was edited: %q", got)
	}
	if st := statOf(t, rc); st.Mode&0o7777 != 0o444 {
		t.Errorf("mode %o", st.Mode&0o7777)
	}
}
