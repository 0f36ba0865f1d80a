package host

import (
	"bufio"
	"context"
	"os"
	"os/user"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// collectPlatform reads the OS release, kernel, container and WSL facts.
func collectPlatform(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	var p Platform
	p.OS = goos()
	osr, _ := g.readFile("/etc/os-release")
	if osr == "" {
		osr, _ = g.readFile("/usr/lib/os-release")
	}
	kv := parseOSRelease(osr)
	p.Distro, p.DistroID, p.DistroVersion = kv["PRETTY_NAME"], kv["ID"], kv["VERSION_ID"]

	rel, _ := g.readFile("/proc/sys/kernel/osrelease")
	p.Kernel = strings.TrimSpace(rel)
	ver, _ := g.readFile("/proc/version")
	p.KernelVersion = strings.TrimSpace(ver)
	p.Arch = archName(runtime.GOARCH)
	if g.live() {
		var u unix.Utsname
		if unix.Uname(&u) == nil {
			if p.Kernel == "" {
				p.Kernel = unix.ByteSliceToString(u.Release[:])
			}
			p.Arch = unix.ByteSliceToString(u.Machine[:])
		}
	}

	p.Hostname = g.hostname()
	p.UID, p.User, p.Home = g.whoami()
	p.Container, p.ContainerHints = g.detectContainer()
	p.Virtualization = g.detectVirtualization()
	p.WSL = g.detectWSL(p.Kernel + " " + p.KernelVersion)
	p.SecureBoot = g.secureBoot()
	return func(s *Snapshot) { s.Platform = p }, nil
}

func archName(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return goarch
}

// parseOSRelease parses os-release(5) text: KEY=value lines, values
// optionally quoted.
func parseOSRelease(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `"'`)
		}
		m[k] = v
	}
	return m
}

func (g *gatherer) hostname() string {
	if !g.live() {
		h, _ := g.readFile("/etc/hostname")
		return strings.TrimSpace(h)
	}
	h, _ := os.Hostname()
	return h
}

// whoami returns the uid, user name and home of the examined user.
func (g *gatherer) whoami() (int, string, string) {
	uid := g.uid()
	name := g.getenv("USER")
	home := g.getenv("HOME")
	if g.live() {
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			name = u.Username
			if home == "" {
				home = u.HomeDir
			}
		}
	}
	if name == "" {
		name = g.getenv("LOGNAME")
	}
	return uid, name, home
}

// detectContainer names the container runtime the process runs in. A lone
// /.dockerenv is not enough: VM images built with Docker keep that file, so
// it counts only with an overlay root file system.
func (g *gatherer) detectContainer() (string, []string) {
	var hints []string
	kind := ""
	set := func(k, hint string) {
		hints = append(hints, hint)
		if kind == "" {
			kind = k
		}
	}
	if g.exists("/run/.containerenv") {
		set("podman", "/run/.containerenv exists")
	}
	if c := g.getenv("container"); c != "" {
		set(c, "environment variable container="+c)
	}
	if g.getenv("KUBERNETES_SERVICE_HOST") != "" {
		set("kubernetes", "KUBERNETES_SERVICE_HOST is set")
	}
	if cg, err := g.readFile("/proc/1/cgroup"); err == nil {
		for _, m := range []struct{ needle, kind string }{
			{"kubepods", "kubernetes"}, {"docker", "docker"}, {"containerd", "containerd"},
			{"libpod", "podman"}, {"lxc", "lxc"},
		} {
			if strings.Contains(cg, m.needle) {
				set(m.kind, "/proc/1/cgroup mentions "+m.needle)
				break
			}
		}
	}
	overlay := false
	if mi, err := g.readFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(mi, "\n") {
			f := strings.Fields(line)
			if len(f) > 8 && f[4] == "/" {
				// Fields after the " - " separator: fstype, source.
				for i := 6; i < len(f)-1; i++ {
					if f[i] == "-" {
						overlay = f[i+1] == "overlay" || f[i+1] == "fuse-overlayfs"
						break
					}
				}
			}
		}
	}
	if g.exists("/.dockerenv") {
		if overlay {
			set("docker", "/.dockerenv exists and / is an overlay file system")
		} else {
			hints = append(hints, "/.dockerenv exists but / is not an overlay (a VM built from a container image?)")
		}
	}
	return kind, hints
}

func (g *gatherer) detectVirtualization() string {
	for _, p := range []string{"/sys/class/dmi/id/product_name", "/sys/class/dmi/id/sys_vendor", "/sys/hypervisor/type"} {
		if b, err := g.readFile(p); err == nil && strings.TrimSpace(b) != "" {
			return strings.TrimSpace(b)
		}
	}
	if cmd, err := g.readFile("/proc/1/cmdline"); err == nil && strings.Contains(cmd, "firecracker") {
		return "Firecracker"
	}
	return ""
}

// detectWSL tells WSL 1 from WSL 2 by the kernel release: WSL 2 kernels say
// "microsoft-standard" or "WSL2"; WSL 1 reports a 4.4.0-NNNNN-Microsoft
// release, and has no /dev/dxg.
func (g *gatherer) detectWSL(kernel string) WSL {
	var w WSL
	low := strings.ToLower(kernel)
	isWSL := strings.Contains(low, "microsoft") || g.getenv("WSL_DISTRO_NAME") != "" || g.getenv("WSL_INTEROP") != ""
	w.DXG = g.exists("/dev/dxg")
	if !isWSL && !w.DXG {
		return w
	}
	switch {
	case strings.Contains(low, "wsl2") || strings.Contains(low, "microsoft-standard") || w.DXG || g.getenv("WSL_INTEROP") != "":
		w.Version = 2
	default:
		w.Version = 1
	}
	w.Kernel = strings.Fields(kernel + " ")[0]
	w.LibDir = g.exists("/usr/lib/wsl/lib")
	w.LibCUDA = g.exists("/usr/lib/wsl/lib/libcuda.so.1")
	w.LibSMI = g.exists("/usr/lib/wsl/lib/nvidia-smi")
	w.LdConf = g.ldConfNames("/usr/lib/wsl/lib")
	return w
}

// ldConfNames reports whether /etc/ld.so.conf or a file in ld.so.conf.d
// lists dir.
func (g *gatherer) ldConfNames(dir string) bool {
	files := []string{"/etc/ld.so.conf"}
	if ents, err := os.ReadDir(g.path("/etc/ld.so.conf.d")); err == nil {
		for _, e := range ents {
			files = append(files, "/etc/ld.so.conf.d/"+e.Name())
		}
	}
	for _, f := range files {
		text, err := g.readFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.TrimRight(strings.TrimSpace(line), "/") == dir {
				return true
			}
		}
	}
	return false
}

// driverPackages lists installed dpkg packages that carry an NVIDIA Linux
// driver (kernel module or libcuda).
func (g *gatherer) driverPackages() []string {
	f, err := os.Open(g.path("/var/lib/dpkg/status"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	pkg := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Package: "):
			pkg = strings.TrimPrefix(line, "Package: ")
		case strings.HasPrefix(line, "Status: ") && strings.HasSuffix(line, " installed"):
			if isDriverPackage(pkg) {
				out = append(out, pkg)
			}
		}
	}
	return out
}

func isDriverPackage(p string) bool {
	for _, pre := range []string{"nvidia-driver-", "libnvidia-compute-", "nvidia-dkms-", "nvidia-kernel-common-", "nvidia-utils-", "cuda-drivers", "nvidia-kernel-source-", "nvidia-headless-"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return p == "nvidia-driver" || p == "libcuda1" || p == "nvidia-kernel-dkms" || p == "nvidia-smi"
}

// secureBoot reads the SecureBoot EFI variable: 4 attribute bytes, then one
// byte, 1 when enabled.
func (g *gatherer) secureBoot() string {
	b, err := os.ReadFile(g.path("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"))
	if err != nil {
		if !g.exists("/sys/firmware/efi") {
			return "disabled" // legacy BIOS boot: no Secure Boot
		}
		return "unknown"
	}
	if len(b) >= 5 && b[4] == 1 {
		return "enabled"
	}
	return "disabled"
}
