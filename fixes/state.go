package fixes

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// doctor runs as root on shared machines, and its state folder holds what
// undo writes back: backups and the journal that says where they go. So
// nothing there is trusted that doctor did not write itself. The folder
// must be owned by the user running doctor and writable by nobody else;
// everything in it is opened relative to the folder, component by
// component, never following a link (O_NOFOLLOW), and each folder and file
// is checked the same way (owner, not writable by group or others, a
// regular file) before it is read.

// StateError is a state folder, or a file in it, that doctor refuses to
// trust; nothing was read from it or written through it.
type StateError struct {
	Path string
	Why  string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("refusing %s: %s", e.Path, e.Why)
}

// stateFS is an opened, checked state folder.
type stateFS struct {
	path string
	fd   int
}

const stateAdvice = "doctor keeps backups and the journal that undo writes back there, so it trusts only a folder it wrote itself: " +
	"remove it, or set XDG_STATE_HOME to a folder of your own"

// openState opens the state folder at path (creating it, mode 0700, when
// create is set) and checks it. A missing folder without create is
// os.ErrNotExist.
func openState(path string, create bool) (*stateFS, error) {
	if path == "" {
		return nil, errors.New("no state folder: set HOME or XDG_STATE_HOME")
	}
	path = filepath.Clean(path)
	if create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := unix.Mkdir(path, 0o700); err != nil && err != unix.EEXIST {
			return nil, &os.PathError{Op: "mkdir", Path: path, Err: err}
		}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := checkTrusted(fd, path, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &stateFS{path: path, fd: fd}, nil
}

func (s *stateFS) close() {
	if s != nil && s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}

// openError turns an open's error into a refusal where it met a link.
func openError(path string, err error) error {
	if err == unix.ELOOP || err == unix.ENOTDIR {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			to, _ := os.Readlink(path)
			return &StateError{Path: path, Why: fmt.Sprintf("it is a link (to %s), and doctor does not follow links in its state folder; %s", to, stateAdvice)}
		}
		if err == unix.ENOTDIR {
			return &StateError{Path: path, Why: "it is not a folder; " + stateAdvice}
		}
	}
	return &os.PathError{Op: "open", Path: path, Err: err}
}

// checkTrusted refuses what another user could have written: another
// owner, write permission for group or others, or (for files) anything
// but a regular file.
func checkTrusted(fd int, path string, dir bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	euid := os.Geteuid()
	kind := st.Mode & unix.S_IFMT
	switch {
	case dir && kind != unix.S_IFDIR:
		return &StateError{Path: path, Why: "it is not a folder; " + stateAdvice}
	case !dir && kind != unix.S_IFREG:
		return &StateError{Path: path, Why: "it is not a regular file; " + stateAdvice}
	case int(st.Uid) != euid:
		return &StateError{Path: path, Why: fmt.Sprintf("it is owned by uid %d, not by the user running doctor (uid %d); %s", st.Uid, euid, stateAdvice)}
	case st.Mode&0o022 != 0:
		return &StateError{Path: path, Why: fmt.Sprintf("it is writable by others (mode %04o); %s", st.Mode&0o7777, stateAdvice)}
	}
	return nil
}

// parts splits a path relative to the state folder; "", "." and ".."
// are refused.
func (s *stateFS) parts(rel string) ([]string, error) {
	ps := strings.Split(rel, "/")
	for _, p := range ps {
		if p == "" || p == "." || p == ".." {
			return nil, &StateError{Path: filepath.Join(s.path, rel), Why: "not a plain path inside the state folder"}
		}
	}
	return ps, nil
}

// parent opens the folder holding rel (creating missing folders, mode
// 0700, when create is set), each folder checked; the caller closes it.
func (s *stateFS) parent(rel string, create bool) (int, string, error) {
	ps, err := s.parts(rel)
	if err != nil {
		return -1, "", err
	}
	fd, err := unix.Dup(s.fd)
	if err != nil {
		return -1, "", err
	}
	cur := s.path
	for _, p := range ps[:len(ps)-1] {
		cur = filepath.Join(cur, p)
		if create {
			if err := unix.Mkdirat(fd, p, 0o700); err != nil && err != unix.EEXIST {
				unix.Close(fd)
				return -1, "", &os.PathError{Op: "mkdir", Path: cur, Err: err}
			}
		}
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, "", openError(cur, err)
		}
		if err := checkTrusted(next, cur, true); err != nil {
			unix.Close(next)
			return -1, "", err
		}
		fd = next
	}
	return fd, ps[len(ps)-1], nil
}

// open opens a file in the state folder without following a link and
// checks it before anything is read.
func (s *stateFS) open(rel string, flag int, perm uint32) (*os.File, error) {
	dir, name, err := s.parent(rel, flag&os.O_CREATE != 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	path := filepath.Join(s.path, rel)
	fd, err := unix.Openat(dir, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := checkTrusted(fd, path, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readFile reads a checked file of the state folder.
func (s *stateFS) readFile(rel string) ([]byte, error) {
	f, err := s.open(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeFile replaces rel atomically (a temporary file created beside it,
// never through a link, then renamed over it), creating its folders.
func (s *stateFS) writeFile(rel string, data []byte, perm uint32) error {
	dir, name, err := s.parent(rel, true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	path := filepath.Join(s.path, rel)
	var tmp string
	var fd int
	for i := 0; ; i++ {
		tmp = fmt.Sprintf(".%s.doctor-%d-%d", name, os.Getpid(), i)
		fd, err = unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != unix.EEXIST || i > 100 {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "create", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(os.FileMode(perm))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	_ = unix.Fsync(dir)
	return nil
}

// readDir lists the folders in rel ("runs"); a missing folder is empty.
func (s *stateFS) readDir(rel string) ([]string, error) {
	dir, name, err := s.parent(rel+"/x", false)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	_ = name
	f := os.NewFile(uintptr(dir), filepath.Join(s.path, rel))
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
