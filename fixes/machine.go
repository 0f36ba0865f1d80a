package fixes

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tfdoctor/doctor/host"
)

// Machine is what planners read and appliers change. Everything that differs
// between this machine and a test's temporary one is here.
type Machine struct {
	// Root is the folder system files (/etc, /proc, /boot) are read and
	// written under; "" or "/" is this machine.
	Root string
	// Env is the examined user's whole environment (HOME, CONDA_PREFIX,
	// VIRTUAL_ENV, SHELL, XDG_STATE_HOME, PATH, ...). Paths taken from it
	// (the home, a conda prefix) are used as they are, not under Root.
	Env map[string]string
	// Snap is the diagnosis the plans answer (distribution, kernel, GPUs,
	// GPU processes); it may be nil.
	Snap *host.Snapshot
	// IsRoot reports whether steps that need root may run (default: the
	// effective user is root). Tests inject it to act as a normal user.
	IsRoot func() bool
	// UID is the user doctor acts for (default os.Getuid()): only root may
	// stop another user's process.
	UID int
	// SelfPID and ParentPID are never stopped (defaults: this process and
	// its parent, the shell that started doctor).
	SelfPID, ParentPID int
	// AptGet is the apt-get that simulates a package removal before it is
	// planned (default: apt-get on PATH, only on the live machine: a
	// --root tree's packages are not this machine's).
	AptGet string
}

// NewMachine returns a Machine for this process: its environment, its user.
func NewMachine(root string, environ []string, snap *host.Snapshot) *Machine {
	return &Machine{Root: root, Env: EnvMap(environ), Snap: snap}
}

// EnvMap turns KEY=VALUE entries into a map (later entries win).
func EnvMap(environ []string) map[string]string {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

func (m *Machine) root() bool {
	if m.IsRoot != nil {
		return m.IsRoot()
	}
	return os.Geteuid() == 0
}

func (m *Machine) uid() int {
	if m.UID != 0 {
		return m.UID
	}
	return os.Getuid()
}

func (m *Machine) selfPID() int {
	if m.SelfPID != 0 {
		return m.SelfPID
	}
	return os.Getpid()
}

func (m *Machine) parentPID() int {
	if m.ParentPID != 0 {
		return m.ParentPID
	}
	return os.Getppid()
}

// live reports whether the machine is this one (not a --root tree).
func (m *Machine) live() bool { return m.Root == "" || filepath.Clean(m.Root) == "/" }

// sys maps an absolute system path into Root.
func (m *Machine) sys(p string) string {
	if m.live() {
		return p
	}
	return filepath.Join(m.Root, p)
}

func (m *Machine) getenv(k string) string { return m.Env[k] }

// Home is the user's home folder: HOME, else what the snapshot recorded.
func (m *Machine) Home() string {
	if h := m.getenv("HOME"); h != "" {
		return h
	}
	if m.Snap != nil {
		return m.Snap.Platform.Home
	}
	return ""
}

// StateDir is where the journal, backups and lock live:
// $XDG_STATE_HOME/doctor, default ~/.local/state/doctor. An XDG_STATE_HOME
// that is not absolute is ignored, as the XDG spec says.
func (m *Machine) StateDir() string {
	if x := m.getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "doctor")
	}
	h := m.Home()
	if h == "" {
		return ""
	}
	return filepath.Join(h, ".local", "state", "doctor")
}

// shellRC is the interactive rc file of the user's shell: ~/.zshrc for zsh,
// ~/.bashrc otherwise.
func (m *Machine) shellRC() string {
	if strings.HasSuffix(m.getenv("SHELL"), "zsh") {
		return filepath.Join(m.Home(), ".zshrc")
	}
	return filepath.Join(m.Home(), ".bashrc")
}

// distro is the examined distribution's ID (ubuntu, debian, ...).
func (m *Machine) distro() string {
	if m.Snap == nil {
		return ""
	}
	return m.Snap.Platform.DistroID
}

func (m *Machine) wsl() bool { return m.Snap != nil && m.Snap.Platform.WSL.Version > 0 }

// container reports whether doctor runs inside a container (the kernel and
// its modules are the host's).
func (m *Machine) container() bool { return m.Snap != nil && m.Snap.Platform.Container != "" }

func (m *Machine) kernel() string {
	if m.Snap == nil {
		return ""
	}
	return m.Snap.Platform.Kernel
}

// gpus returns the GPUs NVML listed, nil when NVML was not available (then
// CUDA_VISIBLE_DEVICES values are judged without knowing the GPUs).
func (m *Machine) gpus() []host.GPU {
	if m.Snap == nil || !m.Snap.NVML.Available {
		return nil
	}
	if m.Snap.NVML.GPUs == nil {
		return []host.GPU{}
	}
	return m.Snap.NVML.GPUs
}

// gpuMemory returns the GPU memory a PID holds according to NVML, and on
// which GPU.
func (m *Machine) gpuMemory(pid int) (uint64, int, bool) {
	if m.Snap == nil {
		return 0, 0, false
	}
	for _, g := range m.Snap.NVML.GPUs {
		for _, p := range g.Processes {
			if p.PID == pid {
				return p.UsedMiB, g.Index, true
			}
		}
	}
	return 0, 0, false
}
