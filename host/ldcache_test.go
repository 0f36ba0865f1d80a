package host

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/internal/testenv"
)

// encodeTestLDCache writes an ld.so.cache image in the "new" or "old"
// format, for --root trees and fuzz seeds. TestLDCacheWriterAgreesWithLdconfig
// proves ldconfig reads what it writes.
func encodeTestLDCache(entries []LDCacheEntry, format string) []byte {
	var strs bytes.Buffer
	type off struct{ k, v uint32 }
	offs := make([]off, len(entries))
	var hdr, entSize int
	switch format {
	case "old":
		hdr, entSize = 16, 12
	default:
		hdr, entSize = 48, 24
	}
	base := 0
	if format != "old" {
		base = hdr + len(entries)*entSize // new: offsets from the header start
	}
	for i, e := range entries {
		offs[i].k = uint32(base + strs.Len())
		strs.WriteString(e.Name)
		strs.WriteByte(0)
		offs[i].v = uint32(base + strs.Len())
		strs.WriteString(e.Path)
		strs.WriteByte(0)
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	if format == "old" {
		b.WriteString(ldCacheOldMagic)
		b.WriteByte(0)
		_ = binary.Write(&b, le, uint32(len(entries)))
		for i, e := range entries {
			_ = binary.Write(&b, le, e.Flags)
			_ = binary.Write(&b, le, offs[i].k)
			_ = binary.Write(&b, le, offs[i].v)
		}
		b.Write(strs.Bytes())
		return b.Bytes()
	}
	b.WriteString(ldCacheNewMagic + ldCacheVersion)
	_ = binary.Write(&b, le, uint32(len(entries)))
	_ = binary.Write(&b, le, uint32(strs.Len()))
	b.Write([]byte{2, 0, 0, 0})           // little endian
	_ = binary.Write(&b, le, uint32(0))   // no extensions
	_ = binary.Write(&b, le, [3]uint32{}) // unused
	for i, e := range entries {
		_ = binary.Write(&b, le, e.Flags)
		_ = binary.Write(&b, le, offs[i].k)
		_ = binary.Write(&b, le, offs[i].v)
		_ = binary.Write(&b, le, uint32(0))
		_ = binary.Write(&b, le, e.HWCap)
	}
	b.Write(strs.Bytes())
	return b.Bytes()
}

type ldpEntry struct{ Name, Path string }

// ldconfigPrint runs `ldconfig -p` on a cache file and returns its entries.
func ldconfigPrint(t *testing.T, cache string) []ldpEntry {
	t.Helper()
	ldc, err := exec.LookPath("ldconfig")
	if err != nil {
		for _, p := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig"} {
			if _, err2 := os.Stat(p); err2 == nil {
				ldc, err = p, nil
			}
		}
	}
	if err != nil {
		testenv.Missing(t, "ldconfig not found")
	}
	args := []string{"-p"}
	if cache != "" {
		args = []string{"-C", cache, "-p"}
	}
	out, err := exec.Command(ldc, args...).Output()
	if err != nil {
		t.Fatalf("ldconfig %v: %v", args, err)
	}
	var es []ldpEntry
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "\t") {
			continue
		}
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " (")
		_, p, ok2 := strings.Cut(rest, " => ")
		if ok && ok2 {
			es = append(es, ldpEntry{name, p})
		}
	}
	return es
}

func entriesOf(c *LDCache) []ldpEntry {
	var es []ldpEntry
	for _, e := range c.Entries {
		es = append(es, ldpEntry{e.Name, e.Path})
	}
	return es
}

// TestParseSystemLDCache parses this machine's own cache and compares it,
// entry by entry and in order, with `ldconfig -p`.
func TestParseSystemLDCache(t *testing.T) {
	data, err := os.ReadFile("/etc/ld.so.cache")
	if err != nil {
		t.Skip("no /etc/ld.so.cache here")
	}
	c, err := ParseLDCache(data)
	if err != nil {
		t.Fatal(err)
	}
	want := ldconfigPrint(t, "")
	if got := entriesOf(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %d entries, ldconfig -p lists %d; first difference: %v", len(got), len(want), firstDiff(got, want))
	}
	if len(c.Entries) == 0 {
		t.Fatal("no entries")
	}
	t.Logf("format %s, %d entries, generator %q", c.Format, len(c.Entries), c.Generator)
}

func firstDiff(a, b []ldpEntry) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i].Name + " " + a[i].Path + " vs " + b[i].Name + " " + b[i].Path
		}
	}
	return "lengths differ"
}

// TestParseLdconfigGenerated builds libraries, has ldconfig write a cache of
// each format for them, and checks the parser against `ldconfig -p`.
func TestParseLdconfigGenerated(t *testing.T) {
	ldc, err := exec.LookPath("ldconfig")
	if err != nil {
		testenv.Missing(t, "ldconfig not found")
	}
	for _, format := range []string{"new", "old", "compat"} {
		t.Run(format, func(t *testing.T) {
			root := t.TempDir()
			libdir := filepath.Join(root, "opt", "cuda", "lib64")
			buildTestSO(t, libdir, testSOSpec{Name: "libcudart.so.12.5.82", Soname: "libcudart.so.12"})
			buildTestSO(t, libdir, testSOSpec{Name: "libcudnn.so.9"})
			conf := filepath.Join(root, "etc", "ld.so.conf")
			os.MkdirAll(filepath.Dir(conf), 0o755)
			os.MkdirAll(filepath.Join(root, "var", "cache", "ldconfig"), 0o755)
			os.WriteFile(conf, []byte("/opt/cuda/lib64\n"), 0o644)
			cache := filepath.Join(root, "etc", "ld.so.cache")
			// In a chroot (-r) the machine's own files stay untouched, the
			// auxiliary cache included; without the right to chroot, fall
			// back to absolute paths.
			prefix := ""
			out, err := exec.Command(ldc, "-r", root, "-c", format, "-C", "/etc/ld.so.cache", "-f", "/etc/ld.so.conf").CombinedOutput()
			if err != nil {
				t.Logf("ldconfig -r failed (%v: %s); using absolute paths", err, out)
				os.WriteFile(conf, []byte(libdir+"\n"), 0o644)
				if out, err := exec.Command(ldc, "-c", format, "-C", cache, "-f", conf).CombinedOutput(); err != nil {
					t.Skipf("ldconfig cannot write a cache here: %v: %s", err, out)
				}
				prefix = root
			}
			data, err := os.ReadFile(cache)
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseLDCache(data)
			if err != nil {
				t.Fatal(err)
			}
			wantFormat := format
			if c.Format != wantFormat {
				t.Errorf("format %q, want %q", c.Format, wantFormat)
			}
			got := c.Lookup("libcudart.so.12", ldCacheFlagsFor("amd64"))
			if len(got) == 0 || got[0].Path != prefix+"/opt/cuda/lib64/libcudart.so.12" {
				t.Errorf("libcudart.so.12 -> %+v", got)
			}
			if prefix != "" {
				return // the chroot-less cache mixes in this machine's libraries
			}
			if want := ldconfigPrint(t, cache); !reflect.DeepEqual(entriesOf(c), want) {
				t.Errorf("parsed %v, ldconfig -p says %v", entriesOf(c), want)
			}
		})
	}
}

// TestLDCacheWriterAgreesWithLdconfig checks the test writer that builds the
// caches of --root scenario trees: ldconfig must read it the same way.
func TestLDCacheWriterAgreesWithLdconfig(t *testing.T) {
	entries := []LDCacheEntry{
		{Name: "libcusolver.so.11", Path: "/usr/local/cuda-11.8/lib64/libcusolver.so.11", Flags: 0x0303},
		{Name: "libcudart.so.12", Path: "/usr/lib/x86_64-linux-gnu/libcudart.so.12", Flags: 0x0303},
		{Name: "libcudart.so.12", Path: "/usr/lib/libcudart.so.12", Flags: 0x0003},
	}
	for _, format := range []string{"new", "old"} {
		data := encodeTestLDCache(entries, format)
		c, err := ParseLDCache(data)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !reflect.DeepEqual(entriesOf(c), entriesOf(&LDCache{Entries: entries})) {
			t.Errorf("%s: round trip %v", format, c.Entries)
		}
		f := filepath.Join(t.TempDir(), "cache")
		os.WriteFile(f, data, 0o644)
		if got := ldconfigPrint(t, f); !reflect.DeepEqual(got, entriesOf(c)) {
			t.Errorf("%s: ldconfig -p reads %v", format, got)
		}
	}
	c, _ := ParseLDCache(encodeTestLDCache(entries, "new"))
	if got := c.Lookup("libcudart.so.12", 0x0303); len(got) != 1 || got[0].Path != "/usr/lib/x86_64-linux-gnu/libcudart.so.12" {
		t.Errorf("Lookup filters by ABI: %v", got)
	}
	if got := c.Lookup("libcudart.so.12", -1); len(got) != 2 {
		t.Errorf("Lookup(-1) = %v", got)
	}
	if c.Entries[2].Arch() != "" || c.Entries[0].Arch() != "x86-64" {
		t.Errorf("Arch: %q %q", c.Entries[2].Arch(), c.Entries[0].Arch())
	}
}

func TestParseLDCacheBad(t *testing.T) {
	good := encodeTestLDCache([]LDCacheEntry{{Name: "libx.so.1", Path: "/l/libx.so.1", Flags: 0x303}}, "new")
	for name, data := range map[string][]byte{
		"empty":      nil,
		"text":       []byte("hello world, this is not a cache at all, really not"),
		"truncated":  good[:30],
		"cut":        good[:len(good)-3],
		"version":    []byte("glibc-ld.so.cache9.9" + strings.Repeat("\x00", 40)),
		"old-huge":   append([]byte("ld.so-1.7.0\x00"), 0xff, 0xff, 0xff, 0x7f),
		"bad-endian": append(append([]byte{}, good[:28]...), append([]byte{9}, good[29:]...)...),
	} {
		if c, err := ParseLDCache(data); err == nil {
			t.Errorf("%s: parsed %+v, want an error", name, c)
		}
	}
}

func FuzzParseLDCache(f *testing.F) {
	if b, err := os.ReadFile("/etc/ld.so.cache"); err == nil && len(b) < 1<<20 {
		f.Add(b)
	}
	es := []LDCacheEntry{{Name: "libcudnn.so.9", Path: "/opt/lib/libcudnn.so.9", Flags: 0x303}, {Name: "libz.so.1", Path: "/lib/libz.so.1", Flags: 0x303, HWCap: 1}}
	f.Add(encodeTestLDCache(es, "new"))
	f.Add(encodeTestLDCache(es, "old"))
	f.Add([]byte("ld.so-1.7.0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseLDCache(data)
		if err != nil {
			return
		}
		if len(c.Entries) > 0 {
			e := c.Entries[len(c.Entries)/2]
			if got := c.Lookup(e.Name, -1); len(got) == 0 {
				t.Fatalf("Lookup(%q) finds nothing", e.Name)
			}
			_ = e.Arch()
		}
	})
}

func TestParseLdSoConf(t *testing.T) {
	text := `# comment
include /etc/ld.so.conf.d/*.conf
include local.d/*.conf
/usr/local/cuda/lib64   # CUDA
/opt/a:/opt/b,/opt/c
/opt/d=libc6
hwcap 1 nosegneg
relative/ignored
includefoo
`
	dirs, incs := ParseLdSoConf(text, "/etc")
	if want := []string{"/usr/local/cuda/lib64", "/opt/a", "/opt/b", "/opt/c", "/opt/d"}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("dirs = %v, want %v", dirs, want)
	}
	if want := []string{"/etc/ld.so.conf.d/*.conf", "/etc/local.d/*.conf"}; !reflect.DeepEqual(incs, want) {
		t.Errorf("includes = %v, want %v", incs, want)
	}
}

func FuzzParseLdSoConf(f *testing.F) {
	f.Add("include /etc/ld.so.conf.d/*.conf\n/usr/lib\n")
	f.Add("/a:/b,/c # x\nhwcap 0 x\n")
	f.Fuzz(func(t *testing.T, s string) {
		dirs, _ := ParseLdSoConf(s, "/etc")
		for _, d := range dirs {
			if !strings.HasPrefix(d, "/") {
				t.Fatalf("relative dir %q", d)
			}
		}
	})
}

func TestLdSoConfDirsUnderRoot(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/ld.so.conf.d"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/ld.so.conf"), []byte("include /etc/ld.so.conf.d/*.conf\ninclude /etc/ld.so.conf\n"), 0o644)
	os.WriteFile(filepath.Join(root, "etc/ld.so.conf.d/b-cuda.conf"), []byte("/usr/local/cuda/lib64\n"), 0o644)
	os.WriteFile(filepath.Join(root, "etc/ld.so.conf.d/a-wsl.conf"), []byte("/usr/lib/wsl/lib\n/usr/local/cuda/lib64\n"), 0o644)
	g := newGatherer(Options{Root: root})
	if got, want := g.ldSoConfDirs(), []string{"/usr/lib/wsl/lib", "/usr/local/cuda/lib64"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ldSoConfDirs = %v, want %v", got, want)
	}
}
