package host

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// The dynamic loader's cache, /etc/ld.so.cache, read natively. No allowed
// library parses it, and running `ldconfig -p` would cost a process per run
// and could not read a --root tree, so the two binary formats glibc has
// written are decoded here (glibc elf/cache.c and sysdeps/generic/dl-cache.h):
//
//   - old, "ld.so-1.7.0": magic[11], pad, nlibs uint32, then nlibs entries of
//     {flags int32, key, value uint32}; strings are relative to the end of the
//     entries.
//   - new, "glibc-ld.so.cache1.1": a 48-byte header (magic, version, nlibs,
//     len_strings, flags, extension_offset), then nlibs entries of
//     {flags int32, key, value, osversion uint32, hwcap uint64}; strings are
//     relative to the start of the new header. glibc before 2.32 wrote the new
//     cache embedded after an old one ("compat" format).

const (
	ldCacheOldMagic = "ld.so-1.7.0"
	ldCacheNewMagic = "glibc-ld.so.cache"
	ldCacheVersion  = "1.1"
	ldCacheExtMagic = 0xeaa42174
)

// LDCacheEntry is one library of the loader's cache, in the cache's order.
type LDCacheEntry struct {
	Name  string `json:"name"` // the soname, e.g. libcudart.so.12
	Path  string `json:"path"`
	Flags int32  `json:"flags"`
	HWCap uint64 `json:"hwcap,omitempty"`
}

// Arch names the entry's ABI the way `ldconfig -p` does ("x86-64", "").
func (e LDCacheEntry) Arch() string { return ldFlagArch(e.Flags) }

// LDCache is a parsed ld.so.cache.
type LDCache struct {
	// Format is "new", "old" or "compat" (old with a new one embedded).
	Format  string         `json:"format"`
	Entries []LDCacheEntry `json:"-"`
	// Generator is the ldconfig that wrote the cache, when recorded.
	Generator string `json:"generator,omitempty"`
	// BigEndian is set for caches written on big-endian machines.
	BigEndian bool `json:"big_endian,omitempty"`
}

var errNotLDCache = errors.New("not an ld.so.cache file")

// ParseLDCache decodes an ld.so.cache image. It never panics on bad input:
// every offset is checked against the data.
func ParseLDCache(data []byte) (*LDCache, error) {
	switch {
	case bytes.HasPrefix(data, []byte(ldCacheNewMagic+ldCacheVersion)):
		c, err := parseNewLDCache(data)
		if err != nil {
			return nil, err
		}
		c.Format = "new"
		return c, nil
	case bytes.HasPrefix(data, []byte(ldCacheOldMagic)):
		return parseOldLDCache(data)
	case bytes.HasPrefix(data, []byte(ldCacheNewMagic)):
		return nil, fmt.Errorf("unsupported ld.so.cache version %q", cstring(data[len(ldCacheNewMagic):min(len(data), len(ldCacheNewMagic)+3)]))
	}
	return nil, errNotLDCache
}

func parseOldLDCache(data []byte) (*LDCache, error) {
	const hdr = 16 // magic[11], 1 byte padding, nlibs uint32
	const entSize = 12
	if len(data) < hdr {
		return nil, errors.New("ld.so.cache: truncated header")
	}
	nlibs := binary.LittleEndian.Uint32(data[12:16])
	bo := binary.ByteOrder(binary.LittleEndian)
	if uint64(nlibs)*entSize > uint64(len(data)-hdr) {
		// A big-endian cache has its count byte-swapped.
		if be := binary.BigEndian.Uint32(data[12:16]); uint64(be)*entSize <= uint64(len(data)-hdr) {
			nlibs, bo = be, binary.BigEndian
		} else {
			return nil, fmt.Errorf("ld.so.cache: %d entries do not fit in %d bytes", nlibs, len(data))
		}
	}
	strBase := hdr + int(nlibs)*entSize
	// A new cache may follow the old entries, 8-byte aligned.
	if off := align8(strBase); off+48 <= len(data) && bytes.HasPrefix(data[off:], []byte(ldCacheNewMagic+ldCacheVersion)) {
		c, err := parseNewLDCache(data[off:])
		if err == nil {
			c.Format = "compat"
			return c, nil
		}
	}
	c := &LDCache{Format: "old", BigEndian: bo == binary.BigEndian}
	strs := data[strBase:]
	for i := 0; i < int(nlibs); i++ {
		e := data[hdr+i*entSize:]
		flags := int32(bo.Uint32(e[0:4]))
		key, val := bo.Uint32(e[4:8]), bo.Uint32(e[8:12])
		name, ok1 := cstringAt(strs, key)
		p, ok2 := cstringAt(strs, val)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("ld.so.cache: entry %d points outside the string table", i)
		}
		c.Entries = append(c.Entries, LDCacheEntry{Name: name, Path: p, Flags: flags})
	}
	return c, nil
}

func parseNewLDCache(data []byte) (*LDCache, error) {
	const hdr = 48
	const entSize = 24
	if len(data) < hdr {
		return nil, errors.New("ld.so.cache: truncated header")
	}
	c := &LDCache{}
	var bo binary.ByteOrder = binary.LittleEndian
	switch data[28] { // flags: 0 unknown, 1 invalid, 2 little, 3 big endian
	case 3:
		bo = binary.BigEndian
		c.BigEndian = true
	case 0, 2:
	default:
		return nil, fmt.Errorf("ld.so.cache: unknown endianness flag %d", data[28])
	}
	nlibs := bo.Uint32(data[20:24])
	if uint64(nlibs)*entSize > uint64(len(data)-hdr) {
		return nil, fmt.Errorf("ld.so.cache: %d entries do not fit in %d bytes", nlibs, len(data))
	}
	for i := 0; i < int(nlibs); i++ {
		e := data[hdr+i*entSize:]
		flags := int32(bo.Uint32(e[0:4]))
		key, val := bo.Uint32(e[4:8]), bo.Uint32(e[8:12])
		hw := bo.Uint64(e[16:24])
		name, ok1 := cstringAt(data, key)
		p, ok2 := cstringAt(data, val)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("ld.so.cache: entry %d points outside the file", i)
		}
		c.Entries = append(c.Entries, LDCacheEntry{Name: name, Path: p, Flags: flags, HWCap: hw})
	}
	// Extensions: a magic, a count, then {tag, flags, offset, size} each.
	if ext := bo.Uint32(data[32:36]); ext != 0 && uint64(ext)+8 <= uint64(len(data)) {
		x := data[ext:]
		if bo.Uint32(x[0:4]) == ldCacheExtMagic {
			n := bo.Uint32(x[4:8])
			for i := uint64(0); i < uint64(n) && 8+(i+1)*16 <= uint64(len(x)); i++ {
				s := x[8+i*16:]
				tag, off, size := bo.Uint32(s[0:4]), bo.Uint32(s[8:12]), bo.Uint32(s[12:16])
				if tag == 0 && uint64(off)+uint64(size) <= uint64(len(data)) { // generator
					c.Generator = strings.TrimSpace(string(data[off : off+size]))
				}
			}
		}
	}
	return c, nil
}

func align8(n int) int { return (n + 7) &^ 7 }

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func cstringAt(b []byte, off uint32) (string, bool) {
	if uint64(off) >= uint64(len(b)) {
		return "", false
	}
	rest := b[off:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return "", false
	}
	return string(rest[:i]), true
}

// ldFlagArch maps the cache's ABI bits (ldconfig.h FLAG_*) to ldconfig -p's
// words.
func ldFlagArch(flags int32) string {
	switch flags & 0xff00 {
	case 0x0000:
		return ""
	case 0x0100:
		return "SPARC 64-bit"
	case 0x0200:
		return "IA-64"
	case 0x0300:
		return "x86-64"
	case 0x0400:
		return "64bit"
	case 0x0500:
		return "64bit"
	case 0x0600:
		return "N32"
	case 0x0700:
		return "64bit"
	case 0x0800:
		return "x32"
	case 0x0900:
		return "hard-float"
	case 0x0a00:
		return "AArch64"
	case 0x0b00:
		return "soft-float"
	}
	return fmt.Sprintf("flags 0x%04x", uint32(flags)&0xffff)
}

// ldCacheFlagsFor is the flags value the loader of an architecture accepts
// (_DL_CACHE_DEFAULT_ID): libc6 ELF plus the ABI bits; -1 accepts any.
func ldCacheFlagsFor(goarch string) int32 {
	switch goarch {
	case "amd64":
		return 0x0303
	case "arm64":
		return 0x0a03
	case "386":
		return 0x0003
	}
	return -1
}

// Lookup returns the entries for a soname that a loader with the given
// flags would accept, in cache order: the loader takes the first.
func (c *LDCache) Lookup(name string, flags int32) []LDCacheEntry {
	if c == nil {
		return nil
	}
	var out []LDCacheEntry
	for _, e := range c.Entries {
		if e.Name != name {
			continue
		}
		if flags != -1 && e.Flags != flags {
			continue
		}
		out = append(out, e)
	}
	// Entries without hwcap requirements first; the loader tries
	// glibc-hwcaps subfolders only where the CPU supports them.
	sort.SliceStable(out, func(i, j int) bool { return out[i].HWCap == 0 && out[j].HWCap != 0 })
	return out
}

// ParseLdSoConf reads ld.so.conf text: one folder per line (or separated by
// spaces, commas, colons or tabs), "include GLOB" lines, "hwcap" lines
// (ignored), comments after "#". It returns the folders and the include
// patterns, the latter made absolute against dir (the folder of the file).
func ParseLdSoConf(text, dir string) (dirs, includes []string) {
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "include"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			for _, pat := range strings.Fields(rest) {
				if !path.IsAbs(pat) {
					pat = path.Join(dir, pat)
				}
				includes = append(includes, pat)
			}
			continue
		}
		if strings.HasPrefix(line, "hwcap ") || strings.HasPrefix(line, "hwcap\t") {
			continue
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == ':' }) {
			// Old syntax: "dir=TYPE".
			if i := strings.IndexByte(f, '='); i > 0 {
				f = f[:i]
			}
			if path.IsAbs(f) {
				dirs = append(dirs, path.Clean(f))
			}
		}
	}
	return dirs, includes
}

// ldSoConfDirs returns the folders /etc/ld.so.conf configures, includes
// followed (at most 8 levels, each file once).
func (g *gatherer) ldSoConfDirs() []string {
	var dirs []string
	seen := map[string]bool{}
	var read func(file string, depth int)
	read = func(file string, depth int) {
		if depth > 8 || seen[file] {
			return
		}
		seen[file] = true
		text, err := g.readFile(file)
		if err != nil {
			return
		}
		ds, incs := ParseLdSoConf(text, path.Dir(file))
		dirs = append(dirs, ds...)
		for _, pat := range incs {
			matches, _ := filepath.Glob(g.path(pat))
			sort.Strings(matches)
			for _, m := range matches {
				read(g.unpath(m), depth+1)
			}
		}
	}
	read("/etc/ld.so.conf", 0)
	return uniqueStrings(dirs)
}

// unpath maps a path under the root back to the machine's path.
func (g *gatherer) unpath(p string) string {
	if g.root == "/" {
		return p
	}
	rel, err := filepath.Rel(g.root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return "/" + filepath.ToSlash(rel)
}

func uniqueStrings(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
