package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteKeepsModeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("old"), 0o600)
	if err := Write(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("content %q mode %v", b, st.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink("real", link)
	if err := Write(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
}

func TestWriteIntoMissingFolderFails(t *testing.T) {
	if err := Write("/nonexistent-folder/f", []byte("x"), 0o644); err == nil {
		t.Error("no error")
	}
}

// A folder as the target is refused before any temporary file is created
// (in the folder's parent: for /tmp that would be /).
func TestWriteOverAFolderFailsAndLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "sub")
	os.Mkdir(target, 0o755)
	err := Write(target, []byte("x"), 0o644)
	if err == nil || !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("error %v, want EISDIR", err)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 {
		t.Errorf("left in the parent folder: %v", ents)
	}
}
