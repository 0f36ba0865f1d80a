package fixes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Process is a process a signal step stops, as it was when planned.
type Process struct {
	PID  int    `json:"pid"`
	UID  int    `json:"uid"`
	User string `json:"user,omitempty"`
	// Comm is the kernel's short name, Command the command line.
	Comm    string `json:"comm,omitempty"`
	Command string `json:"command,omitempty"`
	// StartTime (clock ticks after boot, /proc/PID/stat field 22) tells this
	// process from a later one that got the same PID.
	StartTime uint64 `json:"start_time"`
	// GPU and UsedMiB are the GPU memory NVML says it holds.
	GPU     int    `json:"gpu"`
	UsedMiB uint64 `json:"used_mib"`
	HasGPU  bool   `json:"-"`
}

// procStat is what doctor reads of /proc/PID/stat.
type procStat struct {
	Comm      string
	State     byte
	PPID      int
	StartTime uint64
}

// parseProcStat parses /proc/PID/stat. The command name sits in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseProcStat(s string) (procStat, error) {
	open := strings.IndexByte(s, '(')
	close := strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return procStat{}, errors.New("malformed stat: no command name")
	}
	st := procStat{Comm: s[open+1 : close]}
	f := strings.Fields(s[close+1:])
	// f[0] is field 3 (state); starttime is field 22, f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, errors.New("malformed stat: too few fields")
	}
	st.State = f[0][0]
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat: ppid %q", f[1])
	}
	st.PPID = ppid
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat: starttime %q", f[19])
	}
	st.StartTime = start
	return st, nil
}

// parseStatusUID returns the real UID from /proc/PID/status.
func parseStatusUID(s string) (int, bool) {
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.Atoi(f[0])
			return n, err == nil
		}
	}
	return 0, false
}

func (m *Machine) procFile(pid int, name string) string {
	return m.sys(filepath.Join("/proc", strconv.Itoa(pid), name))
}

// readProcess reads a process from /proc (under Root).
func (m *Machine) readProcess(pid int) (*Process, error) {
	b, err := os.ReadFile(m.procFile(pid, "stat"))
	if err != nil {
		return nil, err
	}
	st, err := parseProcStat(string(b))
	if err != nil {
		return nil, err
	}
	if st.State == 'Z' || st.State == 'X' {
		return nil, os.ErrNotExist
	}
	p := &Process{PID: pid, Comm: st.Comm, StartTime: st.StartTime}
	if s, err := os.ReadFile(m.procFile(pid, "status")); err == nil {
		if uid, ok := parseStatusUID(string(s)); ok {
			p.UID = uid
		} else {
			p.UID = -1
		}
	} else {
		p.UID = -1
	}
	if p.UID >= 0 {
		p.User = strconv.Itoa(p.UID)
		if m.live() {
			if u, err := user.LookupId(p.User); err == nil {
				p.User = u.Username
			}
		}
	}
	if c, err := os.ReadFile(m.procFile(pid, "cmdline")); err == nil {
		p.Command = strings.TrimSpace(strings.ReplaceAll(string(c), "\x00", " "))
	}
	if p.Command == "" {
		p.Command = "[" + p.Comm + "]"
	}
	return p, nil
}

// alive reports whether the process planned is still running: same PID,
// same start time, not a zombie.
func (m *Machine) alive(pr *Process) bool {
	b, err := os.ReadFile(m.procFile(pr.PID, "stat"))
	if err != nil {
		return false
	}
	st, err := parseProcStat(string(b))
	if err != nil {
		return false
	}
	return st.StartTime == pr.StartTime && st.State != 'Z' && st.State != 'X'
}

// displayServers are processes doctor never stops, whatever it is asked:
// stopping them ends a person's graphical session. NVIDIA's own services
// are kept too.
var displayServers = map[string]bool{
	"x": true, "xorg": true, "xorg.bin": true, "xwayland": true, "xfree86": true,
	"gnome-shell": true, "gnome-session-binary": true, "mutter": true,
	"kwin": true, "kwin_x11": true, "kwin_wayland": true, "kwin_wayland_wrapper": true, "plasmashell": true,
	"sway": true, "weston": true, "hyprland": true, "wayfire": true, "river": true, "niri": true, "labwc": true,
	"cosmic-comp": true, "gamescope": true, "cinnamon": true, "muffin": true, "xfwm4": true, "enlightenment": true,
	"gdm": true, "gdm3": true, "gdm-x-session": true, "gdm-wayland-session": true, "sddm": true, "lightdm": true,
	"sddm-greeter": true, "startplasma-wayland": true, "startplasma-x11": true,
	"nvidia-persistenced": true, "nv-fabricmanager": true, "nv-hostengine": true, "nvidia-powerd": true,
}

// isDisplayServer reports whether the process is a display server or
// compositor, by its kernel name or the program of its command line.
func isDisplayServer(pr *Process) bool {
	names := []string{pr.Comm}
	if f := strings.Fields(pr.Command); len(f) > 0 {
		names = append(names, filepath.Base(f[0]))
	}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if displayServers[n] || strings.HasPrefix(n, "xorg") {
			return true
		}
	}
	return false
}

// DefaultGrace is how long a stopped process has between SIGTERM and
// SIGKILL.
const DefaultGrace = 10 * time.Second

func planStopProcess(m *Machine, p *Plan) {
	pid, err := strconv.Atoi(strings.TrimSpace(p.param("pid")))
	if err != nil || pid <= 1 {
		p.refuse("no valid PID in the finding (%q)", p.param("pid"))
		return
	}
	pr, err := m.readProcess(pid)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			p.Done = fmt.Sprintf("PID %d has already ended", pid)
			return
		}
		p.refuse("cannot read PID %d: %v", pid, err)
		return
	}
	pr.UsedMiB, pr.GPU, pr.HasGPU = m.gpuMemory(pid)
	if !pr.HasGPU {
		if g, err := strconv.Atoi(p.param("gpu")); err == nil {
			pr.GPU = g
		}
	}
	if pr.User == "" {
		pr.User = p.param("user")
	}
	switch {
	case pid == m.selfPID() || pid == m.parentPID():
		p.refuse("PID %d is doctor itself or the shell that started it", pid)
		return
	case isDisplayServer(pr):
		p.refuse("PID %d (%s) is a display server or an NVIDIA service; doctor never stops one", pid, sanitize(pr.Comm))
		return
	case pr.UID != m.uid() && !m.root():
		owner := pr.User
		if owner == "" {
			owner = "another user"
		}
		p.refuse("PID %d belongs to %s; only root may stop another user's process (ask them, or an administrator)", pid, sanitize(owner))
		return
	}
	p.add(Step{Kind: KindSignal, Proc: pr, Why: "free the GPU memory it holds"})
	p.note("If the process is a notebook kernel or a training job, its unsaved work is lost")
}

// stopProcess sends SIGTERM, waits up to grace for the process to end, then
// sends SIGKILL. It refuses when the PID now names another process. On
// Linux the signals go through a pidfd, so a PID reused after the check
// cannot be hit.
func (m *Machine) stopProcess(ctx context.Context, pr *Process, grace time.Duration) (string, error) {
	if !m.alive(pr) {
		return "had already ended", nil
	}
	send := func(sig syscall.Signal) error { return syscall.Kill(pr.PID, sig) }
	if m.live() {
		if fd, err := unix.PidfdOpen(pr.PID, 0); err == nil {
			defer unix.Close(fd)
			// The pidfd pins this process: check it is still the planned one.
			if !m.alive(pr) {
				return "had already ended", nil
			}
			send = func(sig syscall.Signal) error {
				err := unix.PidfdSendSignal(fd, sig, nil, 0)
				if errors.Is(err, unix.ESRCH) {
					return nil
				}
				return err
			}
		}
	}
	if err := send(syscall.SIGTERM); err != nil {
		return "", fmt.Errorf("SIGTERM to PID %d: %w", pr.PID, err)
	}
	if m.waitGone(ctx, pr, grace) {
		return "ended after SIGTERM", nil
	}
	if err := send(syscall.SIGKILL); err != nil {
		return "", fmt.Errorf("SIGKILL to PID %d: %w", pr.PID, err)
	}
	if m.waitGone(ctx, pr, 5*time.Second) {
		return fmt.Sprintf("ended after SIGKILL (it ignored SIGTERM for %s)", grace), nil
	}
	return "", fmt.Errorf("PID %d still runs after SIGKILL (stuck in the kernel, often inside the driver)", pr.PID)
}

func (m *Machine) waitGone(ctx context.Context, pr *Process, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !m.alive(pr) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return !m.alive(pr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
