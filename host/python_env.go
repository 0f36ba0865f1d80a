package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tfdoctor/doctor/internal/run"
)

// Finding the examined interpreter and describing its environment from its
// files: pyvenv.cfg, conda-meta/, the interpreter's own name, the stdlib
// folder. Python is started only when none of these tells the version, and
// never with --quick.

// PythonProbeTimeout bounds the one interpreter run used as a last resort.
var PythonProbeTimeout = 3 * time.Second

// envDesc describes one environment.
type envDesc struct {
	exe, realExe      string
	linkNames         []string // every name on the symlink chain from exe
	prefix, base      string
	kind, name        string
	version, verFrom  string
	windows           bool
	includeSystemSite bool
}

// ResolvePython is doctor's one interpreter resolver: the interpreter the
// python collector examines, the verification ladder probes and fixes act
// for. It reads opts.Python, opts.Environ (nil: this process's) and
// opts.Root. source is "--python", "CONDA_PREFIX", "VIRTUAL_ENV" or "PATH".
func ResolvePython(opts Options) (exe, source string, err error) {
	return newGatherer(opts).selectPython()
}

// selectPython picks the examined interpreter: --python, else the active
// conda env or venv (the one whose bin comes first on PATH when both are
// set), else python3 (or python) on PATH.
func (g *gatherer) selectPython() (exe, source string, err error) {
	if p := g.opts.Python; p != "" {
		if !strings.Contains(p, "/") {
			if found := g.lookPath(p); found != "" {
				return found, "--python", nil
			}
			return "", "--python", fmt.Errorf("--python %s: not found on PATH", p)
		}
		if !filepath.IsAbs(p) && g.live() {
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
		}
		if _, err := os.Stat(g.fs(p)); err != nil {
			return p, "--python", fmt.Errorf("--python %s: %v", p, shortPathErr(err))
		}
		if st, err := os.Stat(g.fs(p)); err == nil && st.IsDir() {
			// An environment folder: take its interpreter.
			for _, c := range []string{"bin/python3", "bin/python", "python.exe", "Scripts/python.exe"} {
				if g.exists(path.Join(p, c)) {
					return path.Join(p, c), "--python", nil
				}
			}
			return p, "--python", fmt.Errorf("--python %s: a folder without bin/python", p)
		}
		return p, "--python", nil
	}
	type cand struct{ exe, source, bin string }
	var cands []cand
	if cp := g.getenv("CONDA_PREFIX"); cp != "" {
		for _, n := range []string{"bin/python3", "bin/python"} {
			if g.exists(path.Join(cp, n)) {
				cands = append(cands, cand{path.Join(cp, n), "CONDA_PREFIX", path.Join(cp, "bin")})
				break
			}
		}
	}
	if ve := g.getenv("VIRTUAL_ENV"); ve != "" {
		for _, n := range []string{"bin/python3", "bin/python"} {
			if g.exists(path.Join(ve, n)) {
				cands = append(cands, cand{path.Join(ve, n), "VIRTUAL_ENV", path.Join(ve, "bin")})
				break
			}
		}
	}
	if len(cands) == 2 {
		// Both active (a venv made from a conda Python): PATH decides.
		for _, dir := range filepath.SplitList(g.getenv("PATH")) {
			if path.Clean(dir) == cands[1].bin {
				cands[0], cands[1] = cands[1], cands[0]
				break
			}
			if path.Clean(dir) == cands[0].bin {
				break
			}
		}
	}
	if len(cands) > 0 {
		return cands[0].exe, cands[0].source, nil
	}
	for _, n := range []string{"python3", "python"} {
		if p := g.lookPath(n); p != "" {
			return p, "PATH", nil
		}
	}
	return "", "PATH", errors.New("no python3 or python on PATH, no active conda env or venv; use --python PATH")
}

func shortPathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// lookPath finds an executable on the examined PATH, under the root.
func (g *gatherer) lookPath(name string) string {
	for _, dir := range filepath.SplitList(g.getenv("PATH")) {
		if dir == "" || !path.IsAbs(dir) {
			continue
		}
		p := path.Join(dir, name)
		if isExec(g.fs(p)) {
			return p
		}
	}
	return ""
}

// fs maps a machine path to the file to open here. Under a --root tree
// symlinks are resolved within the tree, so that absolute links
// (venv/bin/python -> /usr/bin/python3.12) stay inside it.
func (g *gatherer) fs(p string) string {
	if g.root == "/" {
		return p
	}
	real, _, err := g.realpath(p)
	if err != nil {
		return g.path(p)
	}
	return g.path(real)
}

// realpath resolves symlinks of a machine path within the root; it also
// returns the base names met on the way (python3 -> python3.12).
func (g *gatherer) realpath(p string) (string, []string, error) {
	names := []string{path.Base(p)}
	if g.root == "/" {
		// Follow the chain by hand to collect the names, then let the OS
		// have the last word.
		cur := p
		for i := 0; i < 40; i++ {
			t, err := os.Readlink(cur)
			if err != nil {
				break
			}
			if !path.IsAbs(t) {
				t = path.Join(path.Dir(cur), t)
			}
			cur = t
			names = append(names, path.Base(cur))
		}
		r, err := filepath.EvalSymlinks(p)
		return r, names, err
	}
	// Under a root: resolve component by component, absolute links
	// re-rooted.
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		next := path.Join(cur, parts[0])
		parts = parts[1:]
		t, err := os.Readlink(g.path(next))
		if err != nil {
			if _, serr := os.Lstat(g.path(next)); serr != nil {
				return path.Join(append([]string{next}, parts...)...), names, serr
			}
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return next, names, errors.New("too many levels of symbolic links")
		}
		if len(parts) == 0 {
			names = append(names, path.Base(t))
		}
		if path.IsAbs(t) {
			cur = "/"
		}
		parts = append(strings.Split(strings.Trim(path.Clean(t), "/"), "/"), parts...)
	}
	return cur, names, nil
}

// followPyenvShim turns a pyenv shim into the interpreter it runs, from
// PYENV_VERSION, .python-version files and pyenv's global version file.
func (g *gatherer) followPyenvShim(exe string) (string, bool) {
	dir := path.Dir(exe)
	if path.Base(dir) != "shims" {
		return exe, false
	}
	root := path.Dir(dir)
	if !g.exists(path.Join(root, "versions")) {
		return exe, false
	}
	head, err := g.readSmall(exe, 2)
	if err != nil || head != "#!" {
		return exe, false
	}
	version := ""
	if v := g.getenv("PYENV_VERSION"); v != "" {
		version = strings.Split(v, ":")[0]
	}
	if version == "" && g.live() {
		if wd, err := os.Getwd(); err == nil {
			for d := wd; ; d = path.Dir(d) {
				if s, err := g.readSmall(path.Join(d, ".python-version"), 256); err == nil {
					version = firstWord(s)
					break
				}
				if d == "/" {
					break
				}
			}
		}
	}
	if version == "" {
		if s, err := g.readSmall(path.Join(root, "version"), 256); err == nil {
			version = firstWord(s)
		}
	}
	name := path.Base(exe)
	if version == "" || version == "system" {
		// The next interpreter of that name on PATH, after the shims.
		seen := false
		for _, d := range filepath.SplitList(g.getenv("PATH")) {
			if path.Clean(d) == dir {
				seen = true
				continue
			}
			if p := path.Join(d, name); seen && isExec(g.fs(p)) {
				return p, true
			}
		}
		return exe, false
	}
	for _, n := range []string{name, "python3", "python"} {
		p := path.Join(root, "versions", version, "bin", n)
		if g.exists(p) {
			return p, true
		}
	}
	return exe, false
}

func firstWord(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return strings.Fields(line)[0]
		}
	}
	return ""
}

var pyVersionInName = regexp.MustCompile(`^python(\d+\.\d+)`)

// describeEnv finds the environment an interpreter belongs to, and its
// Python version, from files only.
func (g *gatherer) describeEnv(exe string) envDesc {
	d := envDesc{exe: exe}
	d.windows = strings.HasSuffix(strings.ToLower(exe), ".exe")
	d.realExe, d.linkNames, _ = g.realpath(exe)
	if d.realExe == "" {
		d.realExe = exe
	}
	dir := path.Dir(exe)
	if d.windows && strings.EqualFold(path.Base(dir), "Scripts") || !d.windows {
		dir = path.Dir(dir)
	}
	prefix := dir
	switch {
	case d.windows:
		d.kind, d.prefix = "system", prefix
		if g.exists(path.Join(prefix, "pyvenv.cfg")) {
			d.kind = "venv"
			g.readPyvenvCfg(&d)
		} else if g.exists(path.Join(prefix, "conda-meta")) {
			d.kind = "conda"
		}
		if d.version == "" {
			ms, _ := filepath.Glob(g.path(path.Join(prefix, "python3*.dll")))
			for _, m := range ms {
				if v := strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(path.Base(m)), "python"), ".dll"); len(v) >= 2 {
					d.version, d.verFrom = v[:1]+"."+v[1:], "python DLL"
				}
			}
		}
	case g.exists(path.Join(prefix, "pyvenv.cfg")):
		d.kind = "venv"
		d.prefix = prefix
		g.readPyvenvCfg(&d)
	case g.exists(path.Join(prefix, "conda-meta")):
		d.kind, d.prefix = "conda", prefix
	default:
		// Not an environment at its own path: look where it really lives.
		rp := path.Dir(path.Dir(d.realExe))
		d.prefix = rp
		switch {
		case g.exists(path.Join(rp, "conda-meta")):
			d.kind = "conda"
		case strings.Contains(rp, "/.pyenv/versions/") || strings.Contains(rp, "/pyenv/versions/"):
			d.kind = "pyenv"
		default:
			d.kind = "system"
		}
	}
	if d.base == "" {
		d.base = d.prefix
	}
	switch d.kind {
	case "conda":
		d.name = condaEnvName(d.prefix, g)
		if v := g.condaPythonVersion(d.prefix); v != "" && d.version == "" {
			d.version, d.verFrom = v, "conda-meta"
		}
	case "venv":
		d.name = path.Base(d.prefix)
		if d.name == ".venv" || d.name == "venv" || d.name == "env" {
			d.name = path.Base(path.Dir(d.prefix)) + "/" + d.name
		}
	case "pyenv":
		d.name = path.Base(d.prefix)
	}
	if d.version == "" {
		for _, n := range d.linkNames {
			if m := pyVersionInName.FindStringSubmatch(n); m != nil {
				d.version, d.verFrom = m[1], "executable name"
				break
			}
		}
	}
	if d.version == "" {
		if vs := g.stdlibVersions(d.base); len(vs) == 1 {
			d.version, d.verFrom = vs[0], "stdlib folder"
		}
	}
	return d
}

// readPyvenvCfg reads a venv's pyvenv.cfg: version (venv), version_info
// (virtualenv, uv), home and include-system-site-packages.
func (g *gatherer) readPyvenvCfg(d *envDesc) {
	text, err := g.readSmall(path.Join(d.prefix, "pyvenv.cfg"), 64<<10)
	if err != nil {
		return
	}
	kv := parseKeyValues(text)
	for _, k := range []string{"version", "version_info"} {
		if v := kv[k]; v != "" && d.version == "" {
			parts := strings.Split(v, ".")
			if len(parts) > 3 {
				parts = parts[:3] // 3.12.3.final.0
			}
			d.version, d.verFrom = strings.Join(parts, "."), "pyvenv.cfg"
		}
	}
	d.includeSystemSite = strings.EqualFold(kv["include-system-site-packages"], "true")
	if home := kv["home"]; home != "" {
		h := path.Clean(home)
		if path.Base(h) == "bin" {
			h = path.Dir(h)
		}
		d.base = h
	}
}

// parseKeyValues reads "key = value" lines (pyvenv.cfg, os-release-like).
func parseKeyValues(text string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return kv
}

// condaPythonVersion reads the python package's version from its
// conda-meta file name (python-3.10.13-h955ad1f_0.json).
func (g *gatherer) condaPythonVersion(prefix string) string {
	ents, err := os.ReadDir(g.fs(path.Join(prefix, "conda-meta")))
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if name, ver, _, ok := splitCondaMetaName(e.Name()); ok && name == "python" {
			return ver
		}
	}
	return ""
}

// splitCondaMetaName splits "name-version-build.json"; names may contain
// dashes, versions and builds do not.
func splitCondaMetaName(file string) (name, version, build string, ok bool) {
	base, isJSON := strings.CutSuffix(file, ".json")
	if !isJSON {
		return "", "", "", false
	}
	i := strings.LastIndex(base, "-")
	if i <= 0 {
		return "", "", "", false
	}
	build = base[i+1:]
	base = base[:i]
	j := strings.LastIndex(base, "-")
	if j <= 0 {
		return "", "", "", false
	}
	return base[:j], base[j+1:], build, true
}

func condaEnvName(prefix string, g *gatherer) string {
	if path.Base(path.Dir(prefix)) == "envs" {
		return path.Base(prefix)
	}
	if g.exists(path.Join(prefix, "envs")) || g.exists(path.Join(prefix, "condabin")) {
		return "base"
	}
	return path.Base(prefix)
}

// stdlibVersions lists the "3.N" of lib/python3.N folders that hold the
// standard library (os.py) or site-packages.
func (g *gatherer) stdlibVersions(prefix string) []string {
	var out []string
	ents, _ := os.ReadDir(g.fs(path.Join(prefix, "lib")))
	for _, e := range ents {
		n := e.Name()
		if m := pyVersionInName.FindStringSubmatch(n); m != nil && m[0] == n {
			if g.exists(path.Join(prefix, "lib", n, "os.py")) || g.exists(path.Join(prefix, "lib", n, "site-packages")) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// sitePaths lists the package folders of sys.path in import order.
func (g *gatherer) sitePaths(d envDesc, minor string) (sites []SitePath, stale []string) {
	add := func(p, from string) {
		p = path.Clean(p)
		for _, s := range sites {
			if s.Path == p {
				return
			}
		}
		sites = append(sites, SitePath{Path: p, From: from, Exists: g.exists(p)})
	}
	for _, p := range filepath.SplitList(g.getenv("PYTHONPATH")) {
		if path.IsAbs(p) {
			add(p, "pythonpath")
		}
	}
	if d.windows {
		add(path.Join(d.prefix, "Lib", "site-packages"), "env")
		return sites, nil
	}
	pyN := "python" + minor
	userSite := d.kind != "venv" || d.includeSystemSite
	if userSite && g.getenv("PYTHONNOUSERSITE") == "" {
		base := g.getenv("PYTHONUSERBASE")
		if base == "" && g.getenv("HOME") != "" {
			base = path.Join(g.getenv("HOME"), ".local")
		}
		if base != "" && minor != "" {
			if p := path.Join(base, "lib", pyN, "site-packages"); g.exists(p) {
				add(p, "user")
			}
		}
	}
	prefixSites := func(prefix, from string) {
		if minor == "" {
			return
		}
		if prefix == "/usr" || prefix == "/usr/local" {
			for _, p := range []string{"/usr/local/lib/" + pyN + "/dist-packages", "/usr/local/lib/" + pyN + "/site-packages", "/usr/lib/python3/dist-packages", "/usr/lib/" + pyN + "/dist-packages", "/usr/lib64/" + pyN + "/site-packages", "/usr/lib/" + pyN + "/site-packages"} {
				if g.exists(p) {
					add(p, from)
				}
			}
			return
		}
		add(path.Join(prefix, "lib", pyN, "site-packages"), from)
		if p := path.Join(prefix, "lib64", pyN, "site-packages"); g.exists(p) {
			if rp, _, err := g.realpath(p); err == nil && rp != path.Join(prefix, "lib", pyN, "site-packages") {
				add(p, from)
			}
		}
	}
	switch d.kind {
	case "venv":
		prefixSites(d.prefix, "env")
		if d.includeSystemSite {
			prefixSites(d.base, "base")
		}
	case "system":
		prefixSites(d.prefix, "system")
	default:
		prefixSites(d.prefix, "env")
	}
	for _, v := range g.stdlibVersions(d.prefix) {
		if v != minor {
			if p := path.Join(d.prefix, "lib", "python"+v, "site-packages"); g.exists(p) {
				stale = append(stale, p)
			}
		}
	}
	return sites, stale
}

// probePython asks the interpreter itself (last resort; never with --quick).
func (g *gatherer) probePython(ctx context.Context, exe string) (*Command, map[string]any) {
	c := &Command{Path: exe, Args: []string{"-I", "-S", "-c", "import sys,json;print(json.dumps({'version':'%d.%d.%d'%sys.version_info[:3],'prefix':sys.prefix,'base_prefix':sys.base_prefix}))"}, Found: true}
	timeout := PythonProbeTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)-100*time.Millisecond < timeout {
		timeout = time.Until(dl) - 100*time.Millisecond
	}
	if timeout <= 0 {
		c.Error = "no time left"
		return c, nil
	}
	res := run.Run(ctx, run.Cmd{Path: exe, Args: c.Args, Timeout: timeout, MaxOutput: 64 << 10})
	c.ExitCode, c.TimedOut = res.ExitCode, res.TimedOut
	c.DurationMS = float64(res.Duration.Microseconds()) / 1000
	if res.Err != nil {
		c.Error = res.Err.Error()
	}
	var out map[string]any
	if err := json.Unmarshal(res.Stdout, &out); err != nil {
		if c.Error == "" {
			c.Error = "unexpected output"
		}
		c.Output = firstLines(string(res.Stderr), 5)
		return c, nil
	}
	return c, out
}

func firstLines(s string, n int) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

// otherEnvs finds other Python environments: conda envs (from the conda
// installations and ~/.conda/environments.txt), venvs in the usual places
// (~/.virtualenvs, ~/X/.venv, /opt/X/.venv, ...), pyenv versions. Each
// folder is listed once; at most 40 environments are summarized.
func (g *gatherer) otherEnvs(examined string) []PythonEnv {
	home := g.getenv("HOME")
	var prefixes []string
	add := func(p string) {
		if p != "" && path.IsAbs(p) {
			prefixes = append(prefixes, path.Clean(p))
		}
	}
	children := func(dir string) []string {
		f, err := os.Open(g.fs(dir))
		if err != nil {
			return nil
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		sort.Strings(names)
		out := make([]string, 0, len(names))
		for _, n := range names {
			out = append(out, path.Join(dir, n))
		}
		return out
	}
	// Projects with their venv inside (~/proj/.venv, /opt/torch/.venv).
	projectVenvs := func(dir string) {
		for _, c := range children(dir) {
			for _, v := range []string{".venv", "venv", "env"} {
				if g.exists(path.Join(c, v, "pyvenv.cfg")) {
					add(path.Join(c, v))
				}
			}
		}
	}
	var condaRoots []string
	if ce := g.getenv("CONDA_EXE"); ce != "" {
		condaRoots = append(condaRoots, path.Dir(path.Dir(ce)))
	}
	if cp := g.getenv("CONDA_PREFIX"); cp != "" && path.Base(path.Dir(cp)) == "envs" {
		condaRoots = append(condaRoots, path.Dir(path.Dir(cp)))
	}
	if home != "" {
		for _, n := range []string{"miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", ".conda"} {
			condaRoots = append(condaRoots, path.Join(home, n))
		}
		if s, err := g.readSmall(path.Join(home, ".conda", "environments.txt"), 64<<10); err == nil {
			for _, line := range strings.Split(s, "\n") {
				add(strings.TrimSpace(line))
			}
		}
		for _, d := range []string{".virtualenvs", ".local/share/virtualenvs", ".pyenv/versions"} {
			for _, c := range children(path.Join(home, d)) {
				add(c)
			}
		}
		add(path.Join(home, ".venv"))
		add(path.Join(home, "venv"))
		projectVenvs(home)
	}
	condaRoots = append(condaRoots, "/opt/conda", "/opt/miniconda3", "/opt/anaconda3", "/opt/miniforge3")
	add("/opt/venv")
	projectVenvs("/opt")
	if g.live() {
		if wd, err := os.Getwd(); err == nil {
			add(path.Join(wd, ".venv"))
			add(path.Join(wd, "venv"))
		}
	}
	for _, r := range uniqueStrings(condaRoots) {
		if g.exists(path.Join(r, "conda-meta")) {
			add(r)
		}
		for _, c := range children(path.Join(r, "envs")) {
			add(c)
		}
	}
	var out []PythonEnv
	for _, p := range uniqueStrings(prefixes) {
		if len(out) >= 40 {
			break
		}
		e, ok := g.quickEnv(p)
		if !ok {
			continue
		}
		e.Examined = p == examined
		out = append(out, e)
	}
	return out
}

// quickEnv summarizes an environment from a few file reads.
func (g *gatherer) quickEnv(prefix string) (PythonEnv, bool) {
	e := PythonEnv{Prefix: prefix}
	switch {
	case g.exists(path.Join(prefix, "pyvenv.cfg")):
		e.Kind = "venv"
		d := envDesc{prefix: prefix}
		g.readPyvenvCfg(&d)
		e.Version = d.version
		e.Name = path.Base(prefix)
	case g.exists(path.Join(prefix, "conda-meta")):
		e.Kind = "conda"
		e.Name = condaEnvName(prefix, g)
		e.Version = g.condaPythonVersion(prefix)
	case strings.Contains(prefix, "/versions/") && g.exists(path.Join(prefix, "bin")):
		e.Kind = "pyenv"
		e.Name = path.Base(prefix)
	default:
		return e, false
	}
	for _, n := range []string{"bin/python3", "bin/python"} {
		if g.exists(path.Join(prefix, n)) {
			e.Python = path.Join(prefix, n)
			break
		}
	}
	if e.Python == "" {
		return e, false
	}
	vs := g.stdlibVersions(prefix)
	if e.Version == "" && len(vs) == 1 {
		e.Version = vs[0]
	}
	minor := e.Version
	if v := strings.Split(minor, "."); len(v) >= 2 {
		minor = v[0] + "." + v[1]
	}
	if minor == "" {
		return e, true
	}
	site := path.Join(prefix, "lib", "python"+minor, "site-packages")
	ents, _ := os.ReadDir(g.fs(site))
	for _, en := range ents {
		n := en.Name()
		if !strings.HasSuffix(n, ".dist-info") {
			continue
		}
		name, ver := distFromDirName(n)
		key := NormalizeDistName(name)
		switch {
		case IsTFDist(key) && e.TensorFlow == "":
			e.TensorFlow = key + " " + ver
		case key == "ipykernel":
			e.IPyKernel = true
		}
	}
	return e, true
}
