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
	user := ""
	if uids, err := p.UidsWithContext(pctx); err == nil && len(uids) > 0 {
		user = g.userName(int(uids[0]))
	}
	cmd, _ := p.CmdlineWithContext(pctx)
	if cmd == "" {
		cmd, _ = p.NameWithContext(pctx)
	}
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	return user, cmd
}

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

// secretName matches environment variable names that may hold credentials.
// Such variables are never stored, whatever their prefix.
var secretName = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSW|PASSWD|PWD_|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|SESSION|COOKIE|SIGNATURE|_KEY$|^KEY$)`)

// envPrefixes are the variables that decide how CUDA, TensorFlow and Python
// find the GPU. Terraform shares the TF_ prefix: its TF_VAR_ values are user
// data and are never stored.
var envPrefixes = []string{"CUDA_", "NVIDIA_", "TF_", "XLA_", "LD_", "CONDA", "VIRTUAL_ENV", "PYTHON", "JUPYTER", "WSL", "CUDNN", "NCCL_", "OMP_", "KMP_", "JAX_", "PYTORCH_"}

var envNames = map[string]bool{"PATH": true, "HOME": true, "USER": true, "SHELL": true, "LANG": true, "container": true, "KUBERNETES_SERVICE_HOST": false}

// FilterEnv keeps the variables relevant to the GPU stack and drops any whose
// name looks like a secret.
func FilterEnv(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if secretName.MatchString(k) || strings.HasPrefix(k, "TF_VAR_") {
			continue
		}
		keep := envNames[k]
		for _, p := range envPrefixes {
			if strings.HasPrefix(k, p) {
				keep = true
				break
			}
		}
		if keep {
			out[k] = v
		}
	}
	return out
}

func collectEnv(ctx context.Context, g *gatherer) (func(*Snapshot), error) {
	env := FilterEnv(g.env)
	return func(s *Snapshot) { s.Env = env }, nil
}
