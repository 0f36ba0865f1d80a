package fixes

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/internal/run"
)

// ---- CUDA_VISIBLE_DEVICES -------------------------------------------------

const cvd = "CUDA_VISIBLE_DEVICES"

// cvdSource is a file that may set CUDA_VISIBLE_DEVICES, in the order a
// login shell and then a conda activation read them.
type cvdSource struct {
	path string
	syn  syntax
	root bool // a system file: editing it needs root
}

func (m *Machine) cvdSources(p *Plan) []cvdSource {
	var out []cvdSource
	out = append(out, cvdSource{path: m.sys("/etc/environment"), syn: pamEnvSyntax, root: true})
	if ents, err := filepath.Glob(m.sys("/etc/profile.d/*.sh")); err == nil {
		sort.Strings(ents)
		for _, e := range ents {
			out = append(out, cvdSource{path: e, syn: shSyntax, root: true})
		}
	}
	if h := m.Home(); h != "" {
		for _, f := range []string{".profile", ".bash_profile", ".bash_login", ".zshenv", ".zprofile", ".bashrc", ".zshrc"} {
			out = append(out, cvdSource{path: filepath.Join(h, f), syn: shSyntax})
		}
	}
	for _, prefix := range m.condaPrefixes(p) {
		ents, _ := filepath.Glob(filepath.Join(prefix, "etc", "conda", "activate.d", "*.sh"))
		sort.Strings(ents)
		for _, e := range ents {
			out = append(out, cvdSource{path: e, syn: shSyntax})
		}
	}
	if v := m.getenv("VIRTUAL_ENV"); filepath.IsAbs(v) {
		out = append(out, cvdSource{path: filepath.Join(v, "bin", "activate"), syn: shSyntax})
	}
	return out
}

// condaPrefixes are the conda environments whose settings apply: the
// active one and the one the finding examined.
func (m *Machine) condaPrefixes(p *Plan) []string {
	var out []string
	if c := m.getenv("CONDA_PREFIX"); filepath.IsAbs(c) {
		out = append(out, filepath.Clean(c))
	}
	if p.param("env_kind") == "conda" {
		if e := p.param("env_prefix"); filepath.IsAbs(e) && !contains(out, filepath.Clean(e)) {
			out = append(out, filepath.Clean(e))
		}
	}
	return out
}

// hidesGPU reports whether a CUDA_VISIBLE_DEVICES value hides a GPU: no
// device left, or entries that CUDA ignores after an invalid one.
func (m *Machine) hidesGPU(v string) bool {
	vd := checks.ParseVisibleDevices(v, true, m.gpus())
	return len(vd.Visible) == 0 || vd.Invalid != ""
}

func planUnsetCUDAVisibleDevices(m *Machine, p *Plan) {
	var remaining *string // the last value left in place that hides nothing
	found, disabled := false, false
	for _, src := range m.cvdSources(p) {
		data, exists, err := readMaybe(src.path)
		if err != nil || !exists {
			continue
		}
		disabled = disabled || bytes.Contains(data, []byte("# doctor --fix disabled: ")) && bytes.Contains(data, []byte(cvd))
		for _, a := range findAssignments(data, cvd, src.syn) {
			switch {
			case a.Sole && a.Static && m.hidesGPU(a.Value):
				found = true
				p.add(Step{Kind: KindComment, Path: src.path, Line: a.Line, Text: a.Text, New: disabledLine(a.Text, src.syn),
					NeedsRoot: src.root, Why: fmt.Sprintf("it sets %s=%q", cvd, a.Value)})
			case a.Sole && a.Static:
				v := a.Value
				remaining = &v
			default:
				found = true
				p.note("%s line %d sets %s in a form doctor does not edit; change it by hand: %s", src.path, a.Line, cvd, sanitize(strings.TrimSpace(a.Text)))
			}
		}
	}
	for _, prefix := range m.condaPrefixes(p) {
		state := filepath.Join(prefix, "conda-meta", "state")
		data, exists, err := readMaybe(state)
		if err != nil || !exists {
			continue
		}
		v, set, err := condaStateVar(data, cvd)
		if err != nil {
			p.note("%s is not valid JSON (%v); check it with: conda env config vars list -p %s", state, err, shQuote(prefix))
			continue
		}
		if !set || !m.hidesGPU(v) {
			continue
		}
		found = true
		nb, err := condaStateRemove(data, cvd)
		if err != nil {
			p.note("cannot edit %s: %v", state, err)
			continue
		}
		p.add(Step{Kind: KindWrite, Path: state, Old: data, Content: nb, Mode: 0o644,
			Why: fmt.Sprintf("conda sets %s=%q on activation (conda env config vars)", cvd, v)})
	}
	cur, inEnv := m.Env[cvd]
	if len(p.Steps) > 0 {
		p.Env = map[string]*string{cvd: remaining}
		if inEnv {
			p.note("This shell keeps its environment: run `unset %s` (or open a new shell)", cvd)
		}
		if len(m.condaPrefixes(p)) > 0 {
			p.note("In an active conda env: conda deactivate && conda activate %s", shQuote(m.condaPrefixes(p)[0]))
		}
		return
	}
	if !found && disabled && inEnv {
		p.Done = fmt.Sprintf("the lines that set %s are disabled already; this shell still has the old value: run `unset %s` or open a new shell", cvd, cvd)
		return
	}
	if !found {
		if inEnv {
			p.note("%s=%q is set, but no file doctor reads sets it (a job scheduler, a notebook, a script, or typed by hand).", cvd, sanitize(cur))
		}
		p.note("In this shell: unset %s", cvd)
	}
}

// ---- variables for one Python environment ---------------------------------

func planLDLibraryPath(m *Machine, p *Plan) {
	v, ok := p.fix.Params["value"]
	if !ok {
		p.refuse("the finding gives no new LD_LIBRARY_PATH value")
		return
	}
	if strings.ContainsRune(v, 0) {
		p.refuse("the proposed LD_LIBRARY_PATH holds a NUL byte")
		return
	}
	var val *string
	if v != "" {
		val = &v
	}
	m.setVars(p, checks.FixLDLibraryPath, []string{"LD_LIBRARY_PATH"}, map[string]*string{"LD_LIBRARY_PATH": val})
}

func planTFAllowGrowth(m *Machine, p *Plan) {
	m.setVars(p, checks.FixTFAllowGrowth, []string{"TF_FORCE_GPU_ALLOW_GROWTH"}, map[string]*string{"TF_FORCE_GPU_ALLOW_GROWTH": strp("true")})
}

const xlaDataDirFlag = "--xla_gpu_cuda_data_dir="

func planXLACudaDataDir(m *Machine, p *Plan) {
	dir := p.param("dir")
	wheel := false
	if req := p.param("requirement"); req != "" && (dir == "" || !isDir(dir)) {
		// The wheel brings ptxas and libdevice into dir
		// (site-packages/nvidia/cuda_nvcc): install it, then point XLA there.
		planPipInstall(m, p)
		if p.Refused != "" || dir == "" {
			return
		}
		wheel = true
	}
	if dir == "" {
		p.refuse("the finding gives neither a CUDA folder nor a wheel to install")
		return
	}
	if !filepath.IsAbs(dir) || strings.ContainsAny(dir, " \t\n\x00\"'") {
		// XLA splits XLA_FLAGS at blanks: such a folder cannot be passed.
		p.refuse("XLA_FLAGS cannot carry the folder %q (blanks or quotes): link it to a plain path first", dir)
		return
	}
	if !wheel && !isDir(dir) {
		p.refuse("%s is not a folder", dir)
		return
	}
	if !wheel && !isDir(filepath.Join(dir, "nvvm", "libdevice")) {
		p.note("%s has no nvvm/libdevice; XLA needs it there", dir)
	}
	var flags []string
	for _, f := range strings.Fields(m.getenv("XLA_FLAGS")) {
		if !strings.HasPrefix(f, xlaDataDirFlag) {
			flags = append(flags, f)
		}
	}
	flags = append(flags, xlaDataDirFlag+dir)
	m.setVars(p, checks.FixXLACudaDataDir, []string{"XLA_FLAGS"}, map[string]*string{"XLA_FLAGS": strp(strings.Join(flags, " "))})
}

// ---- pip, conda, Jupyter --------------------------------------------------

var (
	// requirementRE accepts a distribution name with optional extras and
	// version clauses; it cannot start with "-", so it is never a pip option.
	requirementRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\])?(?:(?:===|==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+(?:,(?:===|==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)*)?$`)
	packageRE     = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	condaSpecRE   = regexp.MustCompile(`^(?:[A-Za-z0-9][A-Za-z0-9._-]*::)?[A-Za-z0-9][A-Za-z0-9._-]*(?:[=<>!~][A-Za-z0-9.*=<>!~,_+-]*)?$`)
	kernelNameRE  = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	accountRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*\$?$`)
	kernelRelRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+~-]*$`)
	debPackageRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	// condaChannelRE is a channel name, never an option or a URL.
	condaChannelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// python returns the examined interpreter from the finding's Params.
func (p *Plan) python() (string, bool) {
	py := p.param("python")
	if py == "" {
		p.refuse("the finding does not name the Python interpreter")
		return "", false
	}
	if !filepath.IsAbs(py) || strings.ContainsRune(py, 0) {
		p.refuse("the interpreter %q is not an absolute path", py)
		return "", false
	}
	return py, true
}

// planPipInstall runs exactly what the fix prints: a new venv first when
// the finding asks for one (create_venv: a system Python), then pip install
// with --force-reinstall when asked. Steps the fix marks "By hand:" become
// notes.
func planPipInstall(m *Machine, p *Plan) {
	py, ok := p.python()
	if !ok {
		return
	}
	req := p.param("requirement")
	if !requirementRE.MatchString(req) {
		p.refuse("%q is not a package requirement doctor will pass to pip", req)
		return
	}
	prefix := p.param("env_prefix")
	if base := p.param("create_venv"); base != "" {
		if !filepath.IsAbs(base) || strings.ContainsRune(base, 0) || !filepath.IsAbs(prefix) || filepath.Clean(py) != filepath.Join(prefix, "bin", "python") {
			p.refuse("the new venv %q and its interpreter %q do not match", prefix, py)
			return
		}
		if _, err := os.Lstat(prefix); err == nil {
			if !isFile(filepath.Join(prefix, "pyvenv.cfg")) {
				p.refuse("%s exists and is not a venv; doctor does not create one over it", prefix)
				return
			}
		} else {
			p.add(Step{Kind: KindRun, Argv: []string{base, "-m", "venv", prefix}, Why: "the system Python is managed by the OS: a venv of its own for TensorFlow"})
		}
	}
	argv := []string{py, "-m", "pip", "install"}
	if p.param("force_reinstall") == "true" {
		argv = append(argv, "--force-reinstall")
	}
	p.add(Step{Kind: KindRun, Argv: append(argv, req), Why: "install into the examined environment only"})
	p.byHandNotes()
	m.userEnvOnly(p, prefix)
	p.note("A package install is not undone by doctor fix --undo")
}

// byHandNotes carries the fix's printed-only lines into the plan's notes.
func (p *Plan) byHandNotes() {
	for _, st := range p.fix.Steps {
		if n, ok := strings.CutPrefix(st, checks.ByHand); ok {
			p.note("%s", n)
		}
	}
}

// userEnvOnly keeps doctor, run as root, out of another user's Python
// environment: a pip or conda run as root there leaves root-owned files the
// user cannot update. The plan is printed only, for that user to run.
func (m *Machine) userEnvOnly(p *Plan, prefix string) {
	if !m.root() || !filepath.IsAbs(prefix) {
		return
	}
	dir := filepath.Clean(prefix)
	for {
		if _, err := os.Lstat(dir); err == nil || dir == "/" {
			break
		}
		dir = filepath.Dir(dir)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || int(sys.Uid) == m.uid() {
		return
	}
	p.Manual = true
	p.note("%s belongs to uid %d, not to the user doctor runs as: doctor runs none of these steps as root; run them as that user", dir, sys.Uid)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func planPipUninstall(m *Machine, p *Plan) {
	py, ok := p.python()
	if !ok {
		return
	}
	pkgs := strings.Fields(p.param("packages"))
	if len(pkgs) == 0 {
		p.refuse("the finding names no package to remove")
		return
	}
	for _, n := range pkgs {
		if !packageRE.MatchString(n) {
			p.refuse("%q is not a package name", n)
			return
		}
	}
	p.add(Step{Kind: KindRun, Argv: append([]string{py, "-m", "pip", "uninstall", "-y"}, pkgs...), Why: "remove from the examined environment only"})
	m.userEnvOnly(p, p.param("env_prefix"))
	p.note("A package removal is not undone by doctor fix --undo")
}

// jupyterDataDir is where `jupyter --data-dir` points for this user.
func (m *Machine) jupyterDataDir() string {
	if d := m.getenv("JUPYTER_DATA_DIR"); filepath.IsAbs(d) {
		return d
	}
	if x := m.getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "jupyter")
	}
	return filepath.Join(m.Home(), ".local", "share", "jupyter")
}

func planIpykernel(m *Machine, p *Plan) {
	py, ok := p.python()
	if !ok {
		return
	}
	name := p.param("name")
	if !kernelNameRE.MatchString(name) {
		p.refuse("%q is not a valid Jupyter kernel name (letters, digits, '.', '_', '-')", name)
		return
	}
	// jupyter_client stores kernel specs under the lower-cased name.
	spec := filepath.Join(m.jupyterDataDir(), "kernels", strings.ToLower(name), "kernel.json")
	p.add(Step{Kind: KindPreserve, Path: spec, Why: "the install below rewrites it"})
	argv := []string{py, "-m", "ipykernel", "install", "--user", "--name", name}
	if dn := p.param("display_name"); dn != "" {
		argv = append(argv, "--display-name", dn)
	}
	p.add(Step{Kind: KindRun, Argv: argv, Why: "register the kernel with the examined interpreter"})
	p.note("Restart the notebook's kernel and pick %q in Kernel > Change kernel", name)
}

func planCondaReinstall(m *Machine, p *Plan) {
	prefix := p.param("env_prefix")
	if !filepath.IsAbs(prefix) || !isDir(prefix) {
		p.refuse("the conda environment %q does not exist", prefix)
		return
	}
	conda := m.getenv("CONDA_EXE")
	if !filepath.IsAbs(conda) {
		c, err := run.LookPath("conda", m.getenv("PATH"))
		if err != nil {
			p.refuse("conda is not on PATH")
			return
		}
		conda = c
	}
	pkgs := strings.Fields(p.param("packages"))
	if len(pkgs) == 0 {
		p.refuse("the finding names no package to reinstall")
		return
	}
	for _, n := range pkgs {
		if !condaSpecRE.MatchString(n) {
			p.refuse("%q is not a conda package spec", n)
			return
		}
	}
	argv := []string{conda, "install", "-y", "--force-reinstall", "-p", prefix}
	if ch := p.param("channel"); ch != "" {
		if !condaChannelRE.MatchString(ch) {
			p.refuse("%q is not a conda channel name", ch)
			return
		}
		argv = append(argv, "-c", ch)
	}
	p.add(Step{Kind: KindRun, Argv: append(argv, pkgs...), Why: "reinstall in that environment only"})
	p.byHandNotes()
	m.userEnvOnly(p, prefix)
	p.note("A package reinstall is not undone by doctor fix --undo")
}

// ---- kernel modules and drivers (root) ------------------------------------

const rebootNote = "Reboot to finish (doctor never reboots): sudo reboot"

// lookTool finds a system tool on the user's PATH or in the sbin folders
// (which a normal user's PATH may lack).
func (m *Machine) lookTool(name string) (string, bool) {
	path := m.getenv("PATH") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	if p, err := run.LookPath(name, path); err == nil {
		return p, true
	}
	return name, false
}

func planBlacklistNouveau(m *Machine, p *Plan) {
	if m.wsl() {
		p.refuse("WSL has no Linux GPU kernel driver")
		return
	}
	if m.Snap != nil && !checks.NvidiaDriverInstalled(m.Snap) {
		// After the reboot the machine would have no display driver at all.
		p.refuse("no NVIDIA driver is installed to take nouveau's place: install the driver first (doctor fix install-driver); blacklist nouveau only if it still holds the GPU afterwards")
		return
	}
	conf := m.sys("/etc/modprobe.d/blacklist-nouveau.conf")
	content := "# Written by doctor --fix (blacklist-nouveau): keep nouveau off the NVIDIA GPU.\nblacklist nouveau\noptions nouveau modeset=0\n"
	wrote := p.writeStep(conf, []byte(content), 0o644, "stop nouveau from loading at boot")
	var argv []string
	switch m.distro() {
	case "fedora", "rhel", "rocky", "almalinux", "centos":
		argv = []string{"dracut", "--force"}
	case "arch", "manjaro":
		argv = []string{"mkinitcpio", "-P"}
	default:
		argv = []string{"update-initramfs", "-u"}
	}
	if wrote || !m.initramfsNewerThan(conf) {
		p.add(Step{Kind: KindRun, Argv: argv, Why: "the initramfs loads modules before the root file system: rebuild it without nouveau"})
	} else {
		p.Done = "nouveau is blacklisted and the initramfs rebuilt since; " + rebootNote
		return
	}
	p.note(rebootNote)
}

// initramfsNewerThan reports whether the running kernel's initramfs was
// rebuilt after path changed (then rebuilding again changes nothing).
func (m *Machine) initramfsNewerThan(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	k := m.kernel()
	for _, c := range []string{"/boot/initrd.img-" + k, "/boot/initramfs-" + k + ".img", "/boot/initramfs-linux.img"} {
		if it, err := os.Stat(m.sys(c)); err == nil && k != "" {
			return !it.ModTime().Before(st.ModTime())
		}
	}
	return false
}

func planLoadUVM(m *Machine, p *Plan) {
	if m.container() {
		p.refuse("inside a container the kernel modules are the host's: load nvidia-uvm on the host (sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0), then restart the container")
		return
	}
	p.add(Step{Kind: KindRun, Argv: []string{"modprobe", "nvidia-uvm"}, Why: "load the Unified Memory module CUDA needs"})
	if nm, ok := m.lookTool("nvidia-modprobe"); ok {
		p.add(Step{Kind: KindRun, Argv: []string{nm, "-u", "-c=0"}, Why: "create /dev/nvidia-uvm"})
	} else {
		p.note("nvidia-modprobe is not installed; if /dev/nvidia-uvm is still missing after modprobe, install it (it comes with the driver)")
	}
}

func planDeviceNodes(m *Machine, p *Plan) {
	nm, ok := m.lookTool("nvidia-modprobe")
	if !ok {
		p.refuse("nvidia-modprobe is not installed (it comes with the NVIDIA driver)")
		return
	}
	p.add(Step{Kind: KindRun, Argv: []string{nm, "-c=0", "-u"}, Why: "create /dev/nvidia0, /dev/nvidiactl and /dev/nvidia-uvm"})
}

func planModprobeNvidia(m *Machine, p *Plan) {
	p.add(Step{Kind: KindRun, Argv: []string{"modprobe", "nvidia"}, Why: "load the NVIDIA kernel module"})
	p.note("If it fails, the reason is in the kernel log: sudo dmesg | grep -i -e nvrm -e nvidia")
}

func planDeviceGroup(m *Machine, p *Plan) {
	g, u := p.param("group"), p.param("user")
	if !accountRE.MatchString(g) || !accountRE.MatchString(u) {
		p.refuse("group %q or user %q is not a valid account name", g, u)
		return
	}
	p.add(Step{Kind: KindRun, Argv: []string{"usermod", "-aG", g, u}, Why: "let " + u + " open the GPU device nodes"})
	p.note("Log out and in again: group membership applies to new sessions")
}

func planDKMSRebuild(m *Machine, p *Plan) {
	k := m.kernel()
	if !kernelRelRE.MatchString(k) {
		p.refuse("the running kernel release is unknown")
		return
	}
	switch m.distro() {
	case "ubuntu", "debian", "pop", "linuxmint":
		p.add(Step{Kind: KindRun, Argv: []string{"apt-get", "install", "-y", "linux-headers-" + k}, Why: "DKMS builds against the kernel headers"})
	case "fedora", "rhel", "rocky", "almalinux", "centos":
		p.add(Step{Kind: KindRun, Argv: []string{"dnf", "install", "-y", "kernel-devel-" + k}, Why: "DKMS builds against the kernel headers"})
	default:
		p.note("Install the headers of kernel %s with your distribution's package manager first", k)
	}
	p.add(Step{Kind: KindRun, Argv: []string{"dkms", "autoinstall", "-k", k}, Why: "build the NVIDIA module for the running kernel"})
	p.add(Step{Kind: KindRun, Argv: []string{"modprobe", "nvidia"}, Why: "load it"})
}

func planInstallDriver(m *Machine, p *Plan) {
	if m.wsl() {
		p.refuse("never install a Linux NVIDIA driver inside WSL: install or update the driver on Windows")
		return
	}
	switch m.distro() {
	case "ubuntu", "pop", "linuxmint":
		p.add(Step{Kind: KindRun, Argv: []string{"apt-get", "update"}, Why: "refresh the package lists"})
		p.add(Step{Kind: KindRun, Argv: []string{"ubuntu-drivers", "install"}, Why: "install the driver Ubuntu recommends for this GPU"})
	case "debian":
		k := m.kernel()
		if !kernelRelRE.MatchString(k) {
			p.refuse("the running kernel release is unknown")
			return
		}
		if missing := m.debianComponentsMissing(); len(missing) > 0 {
			p.refuse("Debian's driver packages are in contrib, non-free and non-free-firmware; the apt sources lack %s: enable them first (Components: main contrib non-free non-free-firmware)", strings.Join(missing, ", "))
			return
		}
		p.add(Step{Kind: KindRun, Argv: []string{"apt-get", "update"}, Why: "refresh the package lists"})
		p.add(Step{Kind: KindRun, Argv: []string{"apt-get", "install", "-y", "linux-headers-" + k, "nvidia-driver", "firmware-misc-nonfree"}, Why: "Debian's driver, from contrib, non-free and non-free-firmware"})
	default:
		p.Manual = true
		p.Notes = append(p.Notes, p.fix.Steps...)
		return
	}
	p.note(rebootNote)
}

// debianComponentsMissing lists the apt components Debian's NVIDIA driver
// needs that no apt source enables: contrib (nvidia-support,
// nvidia-kernel-common), non-free (nvidia-driver) and, from Debian 12,
// non-free-firmware (firmware-misc-nonfree).
func (m *Machine) debianComponentsMissing() []string {
	need := []string{"contrib", "non-free", "non-free-firmware"}
	if m.Snap != nil {
		major, _, _ := strings.Cut(m.Snap.Platform.DistroVersion, ".")
		if n, err := strconv.Atoi(major); err == nil && n < 12 {
			need = need[:2] // before bookworm the firmware was in non-free
		}
	}
	have := map[string]bool{}
	files := []string{m.sys("/etc/apt/sources.list")}
	for _, pat := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		g, _ := filepath.Glob(m.sys(pat))
		files = append(files, g...)
	}
	for _, f := range files {
		data, _, _ := readMaybe(f)
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			fields := strings.Fields(line)
			if len(fields) == 0 || !(fields[0] == "deb" || fields[0] == "Components:") {
				continue
			}
			for _, w := range fields {
				have[w] = true
			}
		}
	}
	var missing []string
	for _, c := range need {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	return missing
}

func planWSLRemoveDriver(m *Machine, p *Plan) {
	if !m.wsl() {
		p.refuse("this is not WSL")
		return
	}
	pkgs := strings.Fields(p.param("packages"))
	for _, n := range pkgs {
		low := strings.ToLower(n)
		if !debPackageRE.MatchString(n) || !(strings.Contains(low, "nvidia") || strings.HasPrefix(low, "cuda-drivers") || strings.HasPrefix(low, "libcuda")) {
			p.refuse("%q does not look like an NVIDIA driver package; doctor removes only those", n)
			return
		}
	}
	if len(pkgs) > 0 {
		// apt removes whatever depends on a removed package too (purging
		// libcuda1 takes nvidia-cuda-toolkit): simulate first, show it, and
		// make the plan dangerous when anything else would go.
		gone, err := m.aptRemovals(pkgs)
		var others []string
		for _, g := range gone {
			if !contains(pkgs, g) {
				others = append(others, g)
			}
		}
		switch {
		case err != nil:
			p.Risk = checks.RiskDangerous
			p.note("apt-get -s could not simulate the removal (%v): what else it would remove is unknown; check with: apt-get -s remove --purge %s", err, strings.Join(pkgs, " "))
		case len(others) > 0:
			p.Risk = checks.RiskDangerous
			p.note("apt-get -s says this also removes: %s", strings.Join(others, " "))
		default:
			p.note("apt-get -s: nothing but %s is removed", strings.Join(pkgs, " "))
		}
		p.add(Step{Kind: KindRun, Argv: append([]string{"apt-get", "remove", "--purge", "-y"}, pkgs...), Why: "remove the Linux driver that shadows the Windows driver's libcuda"})
	} else {
		p.note("The driver files come from NVIDIA's .run installer: sudo nvidia-uninstall")
	}
	planLdConfWSL(m, p)
	if len(pkgs) > 0 {
		p.note("Install CUDA inside WSL only with the cuda-toolkit-12-x package, never 'cuda' or 'cuda-drivers'")
	}
}

// aptRemovals simulates apt-get remove --purge (apt-get -s, which changes
// nothing and needs no root) and returns every package it would remove.
func (m *Machine) aptRemovals(pkgs []string) ([]string, error) {
	apt := m.AptGet
	if apt == "" {
		if !m.live() {
			return nil, fmt.Errorf("the packages of a --root tree are not this machine's")
		}
		a, ok := m.lookTool("apt-get")
		if !ok {
			return nil, fmt.Errorf("apt-get is not installed")
		}
		apt = a
	}
	res := run.Run(context.Background(), run.Cmd{Path: apt, Args: append([]string{"-s", "remove", "--purge"}, pkgs...),
		Env: []string{"LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, Timeout: 60 * time.Second})
	if res.Err != nil || res.ExitCode != 0 {
		msg := strings.TrimSpace(string(res.Stderr))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if res.Err != nil {
			msg = res.Err.Error()
		}
		return nil, fmt.Errorf("exit %d: %s", res.ExitCode, sanitize(msg))
	}
	return parseAptRemovals(res.Stdout), nil
}

// parseAptRemovals reads the "Remv NAME [VERSION]" and "Purg NAME
// [VERSION]" lines of apt-get -s.
func parseAptRemovals(out []byte) []string {
	var gone []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "Remv" || f[0] == "Purg") {
			name, _, _ := strings.Cut(f[1], ":") // libcuda1:amd64
			if !contains(gone, name) {
				gone = append(gone, name)
			}
		}
	}
	return gone
}

func planWSLLdConf(m *Machine, p *Plan) {
	if !m.wsl() {
		p.refuse("this is not WSL")
		return
	}
	planLdConfWSL(m, p)
}

// planLdConfWSL makes the loader search /usr/lib/wsl/lib (ld.wsl.conf sorts
// before the distribution's own files, so WSL's libcuda comes first).
func planLdConfWSL(m *Machine, p *Plan) {
	conf := m.sys("/etc/ld.so.conf.d/ld.wsl.conf")
	old, _, _ := readMaybe(conf)
	has := false
	for _, l := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(l) == "/usr/lib/wsl/lib" {
			has = true
		}
	}
	wrote := false
	if !has {
		wrote = p.writeStep(conf, []byte("# Written by doctor --fix: the Windows driver's libcuda for WSL 2.\n/usr/lib/wsl/lib\n"), 0o644, "put WSL's driver folder in the loader's path")
	}
	if wrote || len(p.Steps) > 0 {
		p.add(Step{Kind: KindRun, Argv: []string{"ldconfig"}, Why: "rebuild the loader cache"})
	}
}
