package host

import (
	"debug/elf"
	"os"
	"path"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/tfdoctor/doctor/knowledge"
)

// Library resolution as glibc's dynamic loader does it for dlopen (elf/
// dl-load.c, _dl_map_object), from the object that calls dlopen:
//
//  1. if the caller has no DT_RUNPATH: the DT_RPATH of the caller, of the
//     objects that loaded it, and of the executable;
//  2. LD_LIBRARY_PATH;
//  3. the caller's DT_RUNPATH;
//  4. /etc/ld.so.cache;
//  5. the default folders (unless the caller is marked DF_1_NODEFLIB).
//
// A candidate of the wrong ELF class or machine is skipped and the search
// goes on. TensorFlow's dso_loader dlopens lib<name>.so.<major> from
// libtensorflow_framework.so.2, so TensorFlow's own RUNPATH (which names the
// pip nvidia-* wheels, knowledge.md 3.3) comes after LD_LIBRARY_PATH.
// What the process has already loaded (a library torch imported first) is
// not modelled.

// cudaSoname matches the sonames of CUDA libraries on disk:
// lib<name>.so.<major>, and libcudart.so.11.0-style names of CUDA <= 11.
var cudaSoname = regexp.MustCompile(`^lib(cudart|cublas|cublasLt|cufft|cufftw|curand|cusolver|cusolverMg|cusparse|cusparseLt|cudnn|cudnn_[a-z_]+|nccl|nvJitLink|nvrtc|cupti|nvToolsExt|cuda|nvblas|nvshmem_host)\.so\.(\d+|1[01]\.\d)$`)

// libResolver resolves sonames for one gather.
type libResolver struct {
	g        *gatherer
	ident    elfIdent // the caller's class and machine; zero accepts any
	flags    int32    // ld.so.cache flags the loader accepts
	ldPath   []string
	cache    *LDCache
	defaults []string
	confDirs map[string]bool
	owners   map[string]string // machine path -> "package version"
	ownerDir map[string]string // wheel folder -> "package version" (files without RECORD)
	// present indexes CUDA library files found by listing folders:
	// soname -> paths.
	present map[string][]string
	listed  map[string]map[string]bool // folder -> names (for quick lookups)
	conda   []CondaPackage
}

func newLibResolver(g *gatherer) *libResolver {
	r := &libResolver{g: g, flags: ldCacheFlagsFor(runtime.GOARCH), present: map[string][]string{}, listed: map[string]map[string]bool{}, owners: map[string]string{}, ownerDir: map[string]string{}, confDirs: map[string]bool{}}
	for _, p := range strings.Split(g.getenv("LD_LIBRARY_PATH"), ":") {
		// Empty entries mean the current folder; the loader also splits on
		// ";" (rare, ignored here).
		if p != "" && path.IsAbs(p) {
			r.ldPath = append(r.ldPath, path.Clean(p))
		}
	}
	r.defaults = g.defaultLibDirs()
	return r
}

// defaultLibDirs are the loader's built-in folders: Debian's multiarch
// glibc searches /lib/<triplet>, /usr/lib/<triplet>, /lib, /usr/lib; others
// /lib64 and /usr/lib64 (64-bit) or /lib and /usr/lib.
func (g *gatherer) defaultLibDirs() []string {
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu", "ppc64le": "powerpc64le-linux-gnu", "s390x": "s390x-linux-gnu"}[runtime.GOARCH]
	if triplet != "" && g.exists("/lib/"+triplet) {
		return []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"}
	}
	if strings.HasSuffix(runtime.GOARCH, "64") || runtime.GOARCH == "s390x" {
		if g.exists("/usr/lib64") || g.exists("/lib64") {
			return []string{"/lib64", "/usr/lib64"}
		}
	}
	return []string{"/lib", "/usr/lib"}
}

// setCaller fixes the class and machine candidates must have.
func (r *libResolver) setCaller(o *ELFObject, g *gatherer) {
	if o == nil || o.Assumed || o.Error != "" {
		r.ident = elfIdent{}
		return
	}
	if id, err := readELFIdent(g.fs(o.Path)); err == nil {
		r.ident = id
		switch id.Machine {
		case elf.EM_X86_64:
			r.flags = 0x0303
		case elf.EM_AARCH64:
			r.flags = 0x0a03
		}
	}
}

// searchPath is the loader's order for a dlopen from chain[0] (the caller;
// the rest are the objects that loaded it, the executable last).
func (r *libResolver) searchPath(chain []*ELFObject) []SearchDir {
	var out []SearchDir
	add := func(dir, from, obj, entry string) {
		if dir == "" {
			return
		}
		dir = path.Clean(dir)
		st, err := os.Stat(r.g.fs(dir))
		out = append(out, SearchDir{Dir: dir, From: from, Object: obj, Entry: entry, Exists: err == nil && st.IsDir()})
	}
	var caller *ELFObject
	if len(chain) > 0 {
		caller = chain[0]
	}
	if caller == nil || !caller.HasRunPath {
		for _, o := range chain {
			for _, e := range o.EffectiveRPath() {
				add(expandOrigin(e, path.Dir(o.Path), "lib64"), "rpath", o.Path, e)
			}
		}
	}
	for _, d := range r.ldPath {
		add(d, "ld_library_path", "", "")
	}
	if caller != nil {
		for _, e := range caller.RunPath {
			add(expandOrigin(e, path.Dir(caller.Path), "lib64"), "runpath", caller.Path, e)
		}
	}
	out = append(out, SearchDir{Dir: "/etc/ld.so.cache", From: "ld.so.cache", Exists: r.cache != nil})
	if caller == nil || !caller.NoDefaultLib {
		for _, d := range r.defaults {
			add(d, "default", "", "")
		}
	}
	return out
}

// candidate is one file the loader would try.
type candidate struct {
	path, via string
}

// candidates lists, in order, every existing file a search for soname
// meets.
func (r *libResolver) candidates(soname string, sp []SearchDir) []candidate {
	var out []candidate
	for _, d := range sp {
		if d.From == "ld.so.cache" {
			for _, e := range r.cache.Lookup(soname, r.flags) {
				out = append(out, candidate{e.Path, "ld.so.cache"})
			}
			continue
		}
		if !d.Exists {
			continue
		}
		if names, ok := r.listed[d.Dir]; ok && !names[soname] {
			continue
		}
		p := path.Join(d.Dir, soname)
		if _, err := os.Stat(r.g.fs(p)); err == nil {
			out = append(out, candidate{p, d.From})
		}
	}
	return out
}

// accept reports whether the loader takes a file: an ELF object of the
// caller's class and machine.
func (r *libResolver) accept(p string) (bool, string) {
	id, err := readELFIdent(r.g.fs(p))
	if err != nil {
		if err == errNotELF {
			return false, "not an ELF file"
		}
		return false, shortPathErr(err)
	}
	if r.ident.Class != 0 && id.Class != r.ident.Class {
		return false, "wrong ELF class " + id.Class.String()
	}
	if r.ident.Machine != 0 && id.Machine != r.ident.Machine {
		return false, "wrong machine " + id.Machine.String()
	}
	return true, ""
}

// resolve finds the file the loader opens for soname from chain[0], and
// the copies it shadows.
func (r *libResolver) resolve(name, soname string, chain []*ELFObject, sp []SearchDir) Library {
	lib := Library{Name: name, Soname: soname}
	seen := map[string]bool{}
	stopped := false
	for _, c := range r.candidates(soname, sp) {
		real, _, err := r.g.realpath(c.path)
		if err != nil {
			continue
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		if lib.Found || stopped {
			lib.Shadowed = append(lib.Shadowed, r.describeCopy(c.path, real, c.via, name))
			continue
		}
		if ok, why := r.accept(c.path); !ok {
			// A file of another class or machine is skipped; anything
			// that is not ELF at all ends the search with "invalid ELF
			// header" (glibc open_verify), so dlopen fails.
			if why == "not an ELF file" {
				why += ": the loader stops here (invalid ELF header) and dlopen fails"
				stopped = true
			}
			lib.Rejected = append(lib.Rejected, LibCopy{Path: c.path, Via: c.via, Reason: why})
			continue
		}
		lib.Found, lib.Path, lib.RealPath, lib.Via = true, c.path, real, c.via
	}
	for _, p := range r.present[soname] {
		real, _, err := r.g.realpath(p)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		cp := r.describeCopy(p, real, "", name)
		lib.OffPath = append(lib.OffPath, cp)
	}
	// Copies in folders ld.so.conf names but that the cache does not list:
	// ldconfig was not run after they were installed.
	if r.cache != nil {
		inCache := map[string]bool{}
		for _, e := range r.cache.Lookup(soname, -1) {
			inCache[path.Clean(e.Path)] = true
		}
		for _, p := range r.present[soname] {
			if r.confDirs[path.Dir(p)] && !inCache[p] {
				lib.NotInCache = append(lib.NotInCache, p)
			}
		}
	}
	if lib.Found {
		lib.ELF = readELFObject(r.g.fs(lib.Path), lib.Path)
		lib.Version, lib.VersionFrom, lib.Package = r.versionOf(lib.Path, lib.RealPath, soname)
		lib.CUDAMajor, lib.CUDAMajorFrom = r.cudaMajorOf(name, soname, lib.RealPath, lib.Package, lib.ELF)
	}
	return lib
}

func (r *libResolver) describeCopy(p, real, via, name string) LibCopy {
	c := LibCopy{Path: p, Via: via}
	soname := path.Base(p)
	c.Version, _, c.Package = r.versionOf(p, real, soname)
	var o *ELFObject
	if !cudaMajorFromNeededNames[name] {
		o = readELFObject(r.g.fs(p), p)
	}
	c.CUDAMajor, c.CUDAMajorFrom = r.cudaMajorOf(name, soname, real, c.Package, o)
	return c
}

// cudaMajorFromNeededNames are the libraries whose soname already is the
// CUDA major, so their ELF need not be read to learn it.
var cudaMajorFromNeededNames = map[string]bool{"cudart": true, "cublas": true, "cublasLt": true, "nvrtc": true, "nvJitLink": true, "cupti": true}

// versionOf returns a library's version: from its real file name
// (libcudnn.so.8.9.7), else from the wheel or conda package that installed
// it.
func (r *libResolver) versionOf(p, real, soname string) (version, from, pkg string) {
	pkg = r.owners[p]
	if pkg == "" {
		pkg = r.owners[real]
	}
	if pkg == "" {
		pkg = r.ownerDir[path.Dir(real)]
	}
	base := path.Base(real)
	if strings.HasPrefix(base, soname+".") && len(base) > len(soname)+1 {
		v := base[len(soname)+1:]
		major := soname[strings.Index(soname, ".so.")+4:]
		return major + "." + v, "file name", pkg
	}
	if rest, ok := strings.CutPrefix(base, strings.SplitN(soname, ".so.", 2)[0]+".so."); ok && strings.Count(rest, ".") >= 1 && knowledge.Version(rest).String() == rest {
		return rest, "file name", pkg
	}
	if pkg != "" {
		f := strings.Fields(pkg)
		if len(f) >= 2 {
			src := "wheel"
			if strings.HasSuffix(pkg, "(conda)") {
				src = "conda package"
			}
			return f[1], src, pkg
		}
	}
	return "", "", pkg
}

var (
	wheelCUMajor = regexp.MustCompile(`-cu(\d+)\b`)
	pathCUMajor  = regexp.MustCompile(`(?:^|/)(?:cuda-?|cu)(\d{2})(?:\.\d+)?(?:/|$|-)`)
	neededCUDA   = regexp.MustCompile(`^lib(cudart|cublas|cublasLt|nvrtc|nvJitLink)\.so\.(\d+)`)
)

// cudaMajorOf tells which CUDA major a library file was built for.
func (r *libResolver) cudaMajorOf(name, soname, real, pkg string, o *ELFObject) (int, string) {
	if cudaMajorFromNeededNames[name] {
		if v := knowledge.Version(soname[strings.Index(soname, ".so.")+4:]); len(v) > 0 {
			return v.Major(), "soname"
		}
	}
	if o != nil {
		for _, n := range o.Needed {
			if m := neededCUDA.FindStringSubmatch(n); m != nil {
				v, _ := strconv.Atoi(m[2])
				return v, "needed " + n
			}
		}
	}
	if m := wheelCUMajor.FindStringSubmatch(pkg); m != nil {
		v, _ := strconv.Atoi(m[1])
		return v, "wheel " + strings.Fields(pkg)[0]
	}
	if strings.HasSuffix(pkg, "(conda)") {
		name := strings.Fields(pkg)[0]
		for _, cp := range r.conda {
			if cp.Name == name && cp.CUDAMajor > 0 {
				return cp.CUDAMajor, "conda package " + name
			}
		}
	}
	if m := pathCUMajor.FindStringSubmatch(real); m != nil {
		v, _ := strconv.Atoi(m[1])
		if v >= 9 && v <= 20 {
			return v, "path"
		}
	}
	return 0, ""
}

// index lists folders and records the CUDA library files in them. Each
// folder is listed once, whatever the links that lead to it (/lib is
// /usr/lib on merged-/usr systems).
func (r *libResolver) index(dirs []string) {
	byReal := map[string]map[string]bool{}
	for _, d := range dirs {
		if _, done := r.listed[d]; done {
			continue
		}
		real, _, err := r.g.realpath(d)
		if err != nil {
			continue
		}
		if names, ok := byReal[real]; ok {
			r.listed[d] = names
			for n := range names {
				if isCUDALibName(n) {
					r.present[n] = append(r.present[n], path.Join(d, n))
				}
			}
			continue
		}
		f, err := os.Open(r.g.fs(d))
		if err != nil {
			continue
		}
		all, _ := f.Readdirnames(-1)
		f.Close()
		names := make(map[string]bool, 64)
		for _, n := range all {
			// Only the names that matter are kept: the map answers "is
			// this soname here", and CUDA names are all a lookup needs.
			if !strings.HasPrefix(n, "lib") || !strings.Contains(n, ".so") {
				continue
			}
			names[n] = true
			if isCUDALibName(n) {
				r.present[n] = append(r.present[n], path.Join(d, n))
			}
		}
		r.listed[d] = names
		byReal[real] = names
	}
}

// isCUDALibName is cudaSoname with a cheap test first.
func isCUDALibName(n string) bool {
	if !strings.HasPrefix(n, "libcu") && !strings.HasPrefix(n, "libnv") && !strings.HasPrefix(n, "libnccl") {
		return false
	}
	return cudaSoname.MatchString(n)
}

// presentSonames lists every CUDA soname found on disk or in the cache.
func (r *libResolver) presentSonames() []string {
	set := map[string]bool{}
	for n := range r.present {
		set[n] = true
	}
	if r.cache != nil {
		for _, e := range r.cache.Entries {
			if isCUDALibName(e.Name) && (r.flags == -1 || e.Flags == r.flags) {
				set[e.Name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// libName is "cudart" for "libcudart.so.12".
func libName(soname string) string {
	n := strings.TrimPrefix(soname, "lib")
	if i := strings.Index(n, ".so"); i >= 0 {
		n = n[:i]
	}
	return n
}

// systemLibs are never worth resolving as dependencies: the C runtime.
var systemLibs = regexp.MustCompile(`^(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[-a-z0-9_]*|libz|libutil)\.so`)

// missingDeps resolves the DT_NEEDED entries of a winning library: each
// must be loaded already (another resolved library) or found from the
// library's own search path.
func (r *libResolver) missingDeps(lib *Library, loaded map[string]bool, chain []*ELFObject) []string {
	if lib.ELF == nil {
		return nil
	}
	var missing []string
	sub := append([]*ELFObject{lib.ELF}, chain...)
	var sp []SearchDir
	for _, n := range lib.ELF.Needed {
		if loaded[n] || systemLibs.MatchString(n) {
			continue
		}
		if sp == nil {
			sp = r.searchPath(sub)
		}
		found := false
		for _, c := range r.candidates(n, sp) {
			if ok, _ := r.accept(c.path); ok {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, n)
		}
	}
	return missing
}
