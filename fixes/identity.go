package fixes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tfdoctor/doctor/internal/atomicfile"
)

// An edit keeps the file's identity. A file with one name is replaced
// atomically by a temporary file that already has its mode and owner; a
// file with several names (hard links: a dotfiles checkout linked as
// ~/.bashrc) is rewritten in place, its backup already in the journal,
// so every name sees the change. A read-only file is not edited: the plan
// is refused and says why.

// writeKeepingIdentity writes data to path. An existing file keeps its
// mode, owner and links; a new one gets mode (0644 when 0) and, when uid
// is not -1, that owner. A link is written where it points.
func writeKeepingIdentity(path string, data []byte, mode os.FileMode, uid, gid int) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if fi, err := os.Stat(path); err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		if euid := os.Geteuid(); euid != 0 && int(st.Uid) != euid {
			// A rename would hand the file to this user; writing through
			// it needs its owner's rights anyway.
			return &refusedError{why: fmt.Sprintf("%s belongs to uid %d, not to the user running doctor (uid %d): not edited", path, st.Uid, euid)}
		}
		if st.Nlink > 1 {
			return writeInPlace(path, data)
		}
		return atomicfile.WriteOwned(path, data, fi.Mode().Perm(), int(st.Uid), int(st.Gid))
	}
	if mode == 0 {
		mode = 0o644
	}
	return atomicfile.WriteOwned(path, data, mode.Perm(), uid, gid)
}

// writeInPlace rewrites a file through its own inode: same mode, owner and
// links. A crash half-way leaves a mixed file, which the backup taken
// before restores (doctor fix --undo).
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// refusedError is a step doctor will not take, with the reason for the
// person who asked.
type refusedError struct{ why string }

func (e *refusedError) Error() string { return e.why }

// readOnly says why a file step must not edit path: it exists and its
// owner may not write it (mode 0444, 0400...): someone made it so on
// purpose.
func readOnly(path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o200 != 0 {
		return nil
	}
	return &refusedError{why: fmt.Sprintf("%s is read-only (mode %04o), so doctor leaves it alone; to let doctor edit it: chmod u+w %s, then run the fix again",
		path, fi.Mode().Perm(), displayArgv([]string{path}))}
}

// refuseReadOnly refuses a plan whose file steps would edit a read-only
// file, before anything is applied.
func refuseReadOnly(p *Plan) {
	if p.Refused != "" {
		return
	}
	for _, st := range p.Steps {
		if !st.Kind.isFile() || st.Kind == KindPreserve {
			continue
		}
		var rf *refusedError
		if err := readOnly(st.Path); errors.As(err, &rf) {
			p.refuse("%s", rf.why)
			return
		}
	}
}
