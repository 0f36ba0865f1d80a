package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCollectPCICountsOnlyWhatItRead: PCIFunctions is the number of
// functions on the bus only when every function's vendor (and an NVIDIA
// function's class) was read; a function it could not read may be an
// NVIDIA GPU, so the count is then 0 (unknown) and no check may read
// the bus as holding no NVIDIA GPU.
func TestCollectPCICountsOnlyWhatItRead(t *testing.T) {
	fn := func(root, addr, vendor, class string) {
		t.Helper()
		dir := filepath.Join(root, "sys/bus/pci/devices", addr)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"vendor": vendor, "class": class} {
			if v == "" {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(root string) (int, int) {
		t.Helper()
		apply, err := collectPCI(context.Background(), newGatherer(Options{Root: root, Environ: []string{}}))
		if err != nil {
			t.Fatal(err)
		}
		var s Snapshot
		apply(&s)
		return s.PCIFunctions, len(s.PCI)
	}

	whole := t.TempDir()
	fn(whole, "0000:00:00.0", "0x8086", "0x060000")
	fn(whole, "0000:00:02.0", "0x8086", "0x030000")
	if n, gpus := count(whole); n != 2 || gpus != 0 {
		t.Errorf("a bus read whole: PCIFunctions %d, NVIDIA GPUs %d; want 2, 0", n, gpus)
	}

	noVendor := t.TempDir()
	fn(noVendor, "0000:00:00.0", "0x8086", "0x060000")
	fn(noVendor, "0000:01:00.0", "", "0x030000") // vendor unreadable
	if n, _ := count(noVendor); n != 0 {
		t.Errorf("a function whose vendor could not be read: PCIFunctions %d, want 0 (unknown)", n)
	}

	noClass := t.TempDir()
	fn(noClass, "0000:00:00.0", "0x8086", "0x060000")
	fn(noClass, "0000:01:00.0", "0x10de", "") // NVIDIA, class unreadable
	if n, _ := count(noClass); n != 0 {
		t.Errorf("an NVIDIA function whose class could not be read: PCIFunctions %d, want 0 (unknown)", n)
	}
}
