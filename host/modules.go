package host

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// collectPCI lists NVIDIA functions on the PCI bus and their bound driver.
// This works without any NVIDIA driver, and inside containers (sysfs shows
// the host's bus).
func collectPCI(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	base := "/sys/bus/pci/devices"
	ents, err := os.ReadDir(g.path(base))
	if err != nil {
		if os.IsNotExist(err) {
			return func(*Snapshot) {}, nil
		}
		return nil, err
	}
	var devs []PCIDevice
	// unread counts functions whose vendor (or, for NVIDIA's, class)
	// could not be read: any of them may be an NVIDIA GPU, so the bus
	// was not seen whole and PCIFunctions stays 0 (unknown), which keeps
	// checks from reading "no NVIDIA function" as proof of no GPU.
	unread := 0
	for _, e := range ents {
		dir := base + "/" + e.Name()
		vendor, err := g.readFile(dir + "/vendor")
		if err != nil {
			unread++
			continue
		}
		if strings.TrimSpace(vendor) != "0x10de" {
			continue
		}
		class, err := g.readFile(dir + "/class")
		if err != nil {
			unread++
			continue
		}
		class = strings.TrimSpace(class)
		// 0x03xxxx display controllers (VGA 0x0300, 3D 0x0302); NVIDIA audio
		// and USB functions on the same card are left out.
		if !strings.HasPrefix(class, "0x03") {
			continue
		}
		dev, _ := g.readFile(dir + "/device")
		d := PCIDevice{Address: e.Name(), Vendor: "0x10de", Device: strings.TrimSpace(dev), Class: class, NUMANode: -1}
		if link, err := os.Readlink(g.path(dir + "/driver")); err == nil {
			d.Driver = filepath.Base(link)
		}
		if n, err := g.readFile(dir + "/numa_node"); err == nil {
			if v, err := strconv.Atoi(strings.TrimSpace(n)); err == nil {
				d.NUMANode = v
			}
		}
		devs = append(devs, d)
	}
	n := len(ents)
	if unread > 0 {
		n = 0
	}
	return func(s *Snapshot) { s.PCI, s.PCIFunctions = devs, n }, nil
}

var procVersionRE = regexp.MustCompile(`Kernel Module(?: for [a-z0-9_]+)?\s+(\d+\.\d+(?:\.\d+)?)`)

// ParseProcDriverVersion extracts the driver version from
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
// Module  580.159.04  ..." or "... Open Kernel Module for x86_64  570.86.15 ...").
func ParseProcDriverVersion(text string) string {
	if m := procVersionRE.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// moduleNames are the kernel modules whose presence matters.
var moduleNames = []string{"nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nouveau"}

// collectModules reads which NVIDIA kernel modules are loaded and built, the
// kernel driver version, and the user-space driver libraries on disk.
func collectModules(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	var m Modules
	m.Loaded = map[string]bool{}
	if v, err := g.readFile("/proc/driver/nvidia/version"); err == nil {
		m.ProcVersion = strings.TrimSpace(v)
		m.KernelDriverVersion = ParseProcDriverVersion(v)
	}
	loaded := map[string]bool{}
	if pm, err := g.readFile("/proc/modules"); err == nil {
		for _, line := range strings.Split(pm, "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				loaded[f[0]] = true
			}
		}
	}
	for _, name := range moduleNames {
		// /sys/module/<name>/initstate exists for loaded modules (and
		// built-in ones lack it but have the folder): a second source for
		// machines that hide /proc/modules.
		m.Loaded[name] = loaded[name] || g.exists("/sys/module/"+name+"/initstate")
	}
	if m.ProcVersion != "" {
		m.Loaded["nvidia"] = true
	}

	kernel, _ := g.readFile("/proc/sys/kernel/osrelease")
	kernel = strings.TrimSpace(kernel)
	if kernel != "" {
		m.Available = g.availableModules(kernel)
	}
	m.DKMS = g.dkmsBuilds()
	m.NouveauBlacklisted = g.nouveauBlacklisted()
	m.UserspaceFiles, m.UserspaceDriver = g.driverLibraries()
	m.Packages = g.driverPackages()
	return func(s *Snapshot) { s.Modules = m }, nil
}

// availableModules lists nvidia*.ko and nouveau.ko files that modules.dep
// knows for the kernel.
func (g *gatherer) availableModules(kernel string) []string {
	dep, err := g.readFile("/lib/modules/" + kernel + "/modules.dep")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(dep, "\n") {
		file, _, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		base := filepath.Base(file)
		for _, n := range []string{"nvidia.ko", "nvidia-uvm.ko", "nvidia_uvm.ko", "nouveau.ko"} {
			if base == n || strings.HasPrefix(base, n+".") {
				out = append(out, file)
			}
		}
	}
	return out
}

// dkmsBuilds lists /var/lib/dkms/nvidia/<version>/<kernel> as
// "version/kernel".
func (g *gatherer) dkmsBuilds() []string {
	var out []string
	vers, _ := os.ReadDir(g.path("/var/lib/dkms/nvidia"))
	for _, v := range vers {
		if !v.IsDir() {
			continue
		}
		kernels, _ := os.ReadDir(g.path("/var/lib/dkms/nvidia/" + v.Name()))
		for _, k := range kernels {
			if k.IsDir() && k.Name() != "source" && k.Name() != "build" {
				out = append(out, v.Name()+"/"+k.Name())
			}
		}
	}
	return out
}

func (g *gatherer) nouveauBlacklisted() bool {
	for _, dir := range []string{"/etc/modprobe.d", "/lib/modprobe.d", "/usr/lib/modprobe.d"} {
		ents, _ := os.ReadDir(g.path(dir))
		for _, e := range ents {
			text, err := g.readFile(dir + "/" + e.Name())
			if err != nil {
				continue
			}
			for _, line := range strings.Split(text, "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && f[0] == "blacklist" && f[1] == "nouveau" {
					return true
				}
			}
		}
	}
	return false
}

// DriverLibDirs are the folders where NVIDIA driver user-space libraries live
// on the distributions doctor knows, WSL's and container mounts included.
var DriverLibDirs = []string{
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/lib/x86_64-linux-gnu", "/lib64", "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib",
	"/usr/lib/wsl/lib", "/usr/lib/x86_64-linux-gnu/nvidia/current",
}

var nvmlVersionRE = regexp.MustCompile(`^libnvidia-ml\.so\.(\d+\.\d+(?:\.\d+)?)$`)

// driverLibraries finds libcuda.so* and libnvidia-ml.so* in DriverLibDirs
// and the driver version of the user-space side (from libnvidia-ml.so.VER
// or libcuda.so.VER).
func (g *gatherer) driverLibraries() ([]LibFile, string) {
	var files []LibFile
	// NVML's version is what "Driver/library version mismatch" compares;
	// libcuda's stands in when NVML's library is missing.
	nvmlVer, cudaVer := "", ""
	seen := map[string]bool{}
	for _, dir := range DriverLibDirs {
		ents, err := os.ReadDir(g.path(dir))
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasPrefix(n, "libcuda.so") && !strings.HasPrefix(n, "libnvidia-ml.so") {
				continue
			}
			p := dir + "/" + n
			real, _ := filepath.EvalSymlinks(g.path(p))
			if seen[real] && real != "" && e.Type()&os.ModeSymlink == 0 {
				continue
			}
			seen[real] = true
			f := LibFile{Path: p}
			if e.Type()&os.ModeSymlink != 0 {
				f.Target, _ = os.Readlink(g.path(p))
			}
			files = append(files, f)
			// The version is in the real file's name, whichever link led
			// to it (libnvidia-ml.so.1 -> libnvidia-ml.so.580.159.04).
			base := filepath.Base(real)
			if real == "" {
				base = n
			}
			if dir != "/usr/lib/wsl/lib" && !strings.HasPrefix(real, g.path("/usr/lib/wsl/")) {
				if mm := nvmlVersionRE.FindStringSubmatch(base); mm != nil && nvmlVer == "" {
					nvmlVer = mm[1]
				} else if strings.HasPrefix(base, "libcuda.so.") && strings.Count(base, ".") >= 4 && cudaVer == "" {
					cudaVer = strings.TrimPrefix(base, "libcuda.so.")
				}
			}
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	if nvmlVer != "" {
		return files, nvmlVer
	}
	return files, cudaVer
}

// LibFile is a library file found on disk; Target is the symlink's target
// ("" for a regular file).
type LibFile struct {
	Path   string `json:"path"`
	Target string `json:"target,omitempty"`
}

// deviceNodes are the /dev entries CUDA opens. /dev/nvidiaN entries are
// added for every GPU found.
var deviceNodes = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/dxg"}

// collectDevices stats the GPU device nodes and checks whether this user can
// open them read-write.
func collectDevices(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	paths := append([]string{}, deviceNodes...)
	ents, _ := os.ReadDir(g.path("/dev"))
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "nvidia") {
			if _, err := strconv.Atoi(strings.TrimPrefix(n, "nvidia")); err == nil {
				paths = append(paths, "/dev/"+n)
			}
		}
	}
	sort.Strings(paths)
	var nodes []DeviceNode
	for _, p := range paths {
		d := DeviceNode{Path: p}
		var st unix.Stat_t
		if err := unix.Stat(g.path(p), &st); err != nil {
			if p == "/dev/dxg" || p == "/dev/nvidia-uvm-tools" || p == "/dev/nvidia-modeset" {
				continue // optional: recorded only when present
			}
			nodes = append(nodes, d)
			continue
		}
		d.Exists = true
		d.Mode = os.FileMode(st.Mode & 0o7777).String()
		d.UID, d.GID = int(st.Uid), int(st.Gid)
		d.Group = g.groupName(d.GID)
		d.Readable, d.Writable = g.access(p, st)
		nodes = append(nodes, d)
	}
	return func(s *Snapshot) { s.Devices = nodes }, nil
}

// access tells whether this user may read and write a node. On the live
// machine it asks the kernel (which also honours ACLs such as logind's
// uaccess); under --root it applies the mode bits.
func (g *gatherer) access(p string, st unix.Stat_t) (bool, bool) {
	if g.live() {
		return unix.Access(p, unix.R_OK) == nil, unix.Access(p, unix.W_OK) == nil
	}
	uid := g.uid()
	if uid == 0 {
		return true, true
	}
	mode := st.Mode
	var shift uint32
	switch {
	case int(st.Uid) == uid:
		shift = 6
	case g.inGroup(int(st.Gid)):
		shift = 3
	}
	return mode>>shift&4 != 0, mode>>shift&2 != 0
}

func (g *gatherer) inGroup(gid int) bool {
	if g.opts.GIDs != nil {
		for _, x := range g.opts.GIDs {
			if x == gid {
				return true
			}
		}
		return false
	}
	if os.Getgid() == gid {
		return true
	}
	groups, _ := os.Getgroups()
	for _, x := range groups {
		if x == gid {
			return true
		}
	}
	return false
}

// groupName looks a GID up in the examined /etc/group.
func (g *gatherer) groupName(gid int) string {
	text, err := g.readFile("/etc/group")
	if err != nil {
		return ""
	}
	want := strconv.Itoa(gid)
	for _, line := range strings.Split(text, "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 3 && f[2] == want {
			return f[0]
		}
	}
	return ""
}
