package host

import (
	"context"
	"os"
	"os/user"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/process"
	"github.com/tfdoctor/doctor/internal/secrets"
)

// procCtx points gopsutil at the examined /proc (under --root).
func (g *gatherer) procCtx(ctx context.Context) context.Context {
	if g.live() {
		return ctx
	}
	return context.WithValue(ctx, common.EnvKey, common.EnvMap{common.HostProcEnvKey: g.path("/proc")})
}

// processOwner returns the user name and command line of a PID, "" for what
// cannot be read (another PID namespace, a process that already ended).
func (g *gatherer) processOwner(ctx context.Context, pid int) (string, string) {
	pctx := g.procCtx(ctx)
	// A Process value rather than process.NewProcess: the latter proves
	// the PID exists by signalling it, which is wrong under a --root tree.
	p := &process.Process{Pid: int32(pid)}
	user, uid := "", -1
	if uids, err := p.UidsWithContext(pctx); err == nil && len(uids) > 0 {
		uid = int(uids[0])
		user = g.userName(uid)
	}
	var cmd string
	if uid >= 0 && uid == g.euid() {
		cmd, _ = p.CmdlineWithContext(pctx)
	}
	return user, CommandFor(cmd, func() string { n, _ := p.NameWithContext(pctx); return n })
}

// CommandFor is what doctor shows of a process's command: the command line
// of a process of the user running doctor, scrubbed of credentials, and
// cut at 200 bytes; for another user's process (or one whose owner is
// unknown) only the program's name, since its arguments are that user's
// (tokens, paths, data). cmdline is "" for another user's process; name
// gives the program's name.
func CommandFor(cmdline string, name func() string) string {
	cmd := secrets.Scrub(cmdline)
	if cmd == "" {
		cmd = name()
	}
	if len(cmd) > 200 {
		cut := 200
		for cut > 0 && cmd[cut]&0xC0 == 0x80 {
			cut--
		}
		cmd = cmd[:cut] + "…"
	}
	return cmd
}

// euid is the user running doctor: the one whose command lines may be
// shown.
func (g *gatherer) euid() int { return os.Geteuid() }

// userName maps a UID to a name: the system's user database on the live
// machine, the tree's /etc/passwd under --root; the number when unknown.
func (g *gatherer) userName(uid int) string {
	if g.live() {
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			return u.Username
		}
		return strconv.Itoa(uid)
	}
	if text, err := g.readFile("/etc/passwd"); err == nil {
		want := strconv.Itoa(uid)
		for _, line := range strings.Split(text, "\n") {
			if f := strings.Split(line, ":"); len(f) >= 3 && f[2] == want {
				return f[0]
			}
		}
	}
	return strconv.Itoa(uid)
}

var gpuNodeRE = regexp.MustCompile(`^/dev/(nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset)|dxg)$`)

// collectHolders finds processes with a GPU device node open by reading
// /proc/PID/fd links. Reading the links is done here rather than through
// gopsutil's OpenFiles, which stats every descriptor of every process and is
// several times slower on a busy machine; gopsutil names the few matches.
func collectHolders(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	var h Holders
	ents, err := os.ReadDir(g.path("/proc"))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fdDir := g.path("/proc/" + e.Name() + "/fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			if os.IsPermission(err) {
				h.Partial = true
			}
			continue
		}
		seen := map[string]bool{}
		var devs []string
		for _, fd := range fds {
			target, err := os.Readlink(fdDir + "/" + fd.Name())
			if err != nil || !gpuNodeRE.MatchString(target) || seen[target] {
				continue
			}
			seen[target] = true
			devs = append(devs, target)
		}
		if len(devs) == 0 {
			continue
		}
		sort.Strings(devs)
		hd := Holder{PID: pid, Devices: devs, Self: pid == g.self}
		hd.User, hd.Command = g.processOwner(ctx, pid)
		h.Processes = append(h.Processes, hd)
	}
	return func(s *Snapshot) { s.Holders = h }, nil
}

// EnvAllowed is every environment variable doctor reads, and nothing
// else: the snapshot is pasted in public, so a variable is collected only
// when a check, the library resolution, the Python resolver or a person
// reading the report needs it. (A prefix such as NVIDIA_ or TF_ would admit
// NVIDIA_NGC_PASS or TF_VAR_password.) Values go through secrets.Scrub:
// a URL keeps its host, never its user and password.
var EnvAllowed = map[string]bool{
	// Which GPUs a process sees, and how.
	"CUDA_VISIBLE_DEVICES": true, "CUDA_DEVICE_ORDER": true, "CUDA_MODULE_LOADING": true, "CUDA_LAUNCH_BLOCKING": true,
	"CUDA_HOME": true, "CUDA_PATH": true, "CUDA_ROOT": true, "CUDNN_PATH": true,
	"NVIDIA_VISIBLE_DEVICES": true, "NVIDIA_DRIVER_CAPABILITIES": true, "NVIDIA_REQUIRE_CUDA": true, "NVIDIA_DISABLE_REQUIRE": true,
	// How libraries are found.
	"LD_LIBRARY_PATH": true, "LD_PRELOAD": true, "PATH": true,
	// TensorFlow and XLA.
	"TF_FORCE_GPU_ALLOW_GROWTH": true, "TF_GPU_ALLOCATOR": true, "TF_CPP_MIN_LOG_LEVEL": true, "TF_CPP_MAX_VLOG_LEVEL": true,
	"TF_ENABLE_ONEDNN_OPTS": true, "TF_XLA_FLAGS": true, "TF_GPU_THREAD_MODE": true, "TF_USE_LEGACY_KERAS": true,
	"XLA_FLAGS": true, "XLA_PYTHON_CLIENT_PREALLOCATE": true, "XLA_PYTHON_CLIENT_MEM_FRACTION": true,
	// Which Python environment.
	"CONDA_PREFIX": true, "CONDA_DEFAULT_ENV": true, "CONDA_EXE": true, "VIRTUAL_ENV": true,
	"PYTHONPATH": true, "PYTHONHOME": true, "PYTHONNOUSERSITE": true, "PYTHONUSERBASE": true, "PYENV_VERSION": true,
	"JUPYTER_PATH": true, "JUPYTER_DATA_DIR": true,
	// Where doctor runs.
	"WSL_DISTRO_NAME": true, "WSL_INTEROP": true, "container": true, "HOME": true, "USER": true, "SHELL": true, "LANG": true,
}

// FilterEnv keeps the variables in EnvAllowed, their values scrubbed of
// credentials.
func FilterEnv(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if EnvAllowed[k] && !secrets.Name(k) {
			out[k] = secrets.Scrub(v)
		}
	}
	return out
}

func collectEnv(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	env := FilterEnv(g.env)
	return func(s *Snapshot) { s.Env = env }, nil
}

// HideOtherUsersCommands applies CommandFor's rule to a snapshot read from
// a file (one written by an older doctor may hold full command lines):
// the processes of users other than the snapshot's keep only their
// program's name; every command loses its credentials.
func (s *Snapshot) HideOtherUsersCommands() {
	fix := func(user, cmd string) string {
		if user != "" && user == s.Platform.User {
			return CommandFor(cmd, func() string { return "" })
		}
		prog := cmd
		if f := strings.Fields(cmd); len(f) > 0 {
			prog = f[0]
		}
		if i := strings.LastIndexByte(prog, '/'); i >= 0 {
			prog = prog[i+1:]
		}
		return CommandFor("", func() string { return prog })
	}
	for i := range s.NVML.GPUs {
		for j := range s.NVML.GPUs[i].Processes {
			p := &s.NVML.GPUs[i].Processes[j]
			p.Command = fix(p.User, p.Command)
		}
	}
	for i := range s.Holders.Processes {
		p := &s.Holders.Processes[i]
		p.Command = fix(p.User, p.Command)
	}
}
