// Package atomicfile writes files so that a reader, or a crash, only ever
// sees the old content or the new one: write a temporary file in the same
// folder, sync it, rename it over the target, sync the folder.
package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
)

// Write replaces path with data. If path exists its permission bits are
// kept; otherwise perm is used. A symlink is replaced where it points.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteOwned(path, data, perm, -1, -1)
}

// WriteOwned is Write that also gives the new file an owner (uid, gid; -1
// keeps the writer's) before it takes the target's place, so no reader
// ever sees the file with the wrong owner.
func WriteOwned(path string, data []byte, perm os.FileMode, uid, gid int) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			// Refuse before the temporary file exists: its folder would
			// be the folder's parent (for "/tmp", "/").
			return &os.PathError{Op: "write", Path: path, Err: syscall.EISDIR}
		}
		perm = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".doctor-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if uid >= 0 || gid >= 0 {
		if err := tmp.Chown(uid, gid); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
