package watch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/unix"

	"github.com/tfdoctor/doctor/host"
)

// procRoot is where /proc lives (tests keep the real one).
const procRoot = "/proc"

// ErrNoProcess is returned when the PID to watch does not exist.
var ErrNoProcess = errors.New("no such process")

// ProcessCommand returns the command line of pid, or ErrNoProcess.
func ProcessCommand(ctx context.Context, pid int) (string, error) {
	if pid <= 0 {
		return "", ErrNoProcess
	}
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return "", ErrNoProcess
	}
	return commandOf(ctx, p), nil
}

// commandOf is what doctor shows of a process's command: the command line
// (scrubbed of credentials) for a process of the user running doctor, the
// program's name for anyone else's (host.CommandFor).
func commandOf(ctx context.Context, p *process.Process) string {
	var cmd string
	if uids, err := p.UidsWithContext(ctx); err == nil && len(uids) > 0 && int(uids[0]) == os.Geteuid() {
		cmd, _ = p.CmdlineWithContext(ctx)
	}
	return host.CommandFor(cmd, func() string { n, _ := p.NameWithContext(ctx); return n })
}

// parseChildren parses /proc/PID/task/TID/children: PIDs separated by
// spaces.
func parseChildren(b []byte) []int {
	var out []int
	for _, f := range strings.Fields(string(b)) {
		// PIDs are 32-bit in the kernel (pid_max is at most 2^22).
		if n, err := strconv.ParseInt(f, 10, 32); err == nil && n > 0 {
			out = append(out, int(n))
		}
	}
	return out
}

// children lists the direct children of pid. It reads the kernel's
// per-thread children files: a handful of small reads, where gopsutil's
// Children reads the stat file of every process on the machine (hundreds
// of reads a sample on a busy host). Kernels built without
// CONFIG_PROC_CHILDREN lack the files: then gopsutil does it.
func children(ctx context.Context, pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("%s/%d/task", procRoot, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("%s/%d/task/%s/children", procRoot, pid, t.Name()))
		if errors.Is(err, os.ErrNotExist) && t.Name() == strconv.Itoa(pid) {
			return childrenSlow(ctx, pid)
		}
		out = append(out, parseChildren(b)...)
	}
	return out
}

func childrenSlow(ctx context.Context, pid int) []int {
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return nil
	}
	kids, err := p.ChildrenWithContext(ctx)
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(kids))
	for _, k := range kids {
		out = append(out, int(k.Pid))
	}
	return out
}

// tree returns roots and all their descendants, sorted, without skip.
func tree(ctx context.Context, roots []int, skip int) []int {
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] || pid == skip || pid <= 0 {
			continue
		}
		seen[pid] = true
		queue = append(queue, children(ctx, pid)...)
	}
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// procState is what the previous sample saw of one process.
type procState struct {
	p          *process.Process
	created    int64 // ms since the epoch: tells a reused PID apart
	cpu        float64
	iowait     float64
	rchar      uint64
	wchar      uint64
	rbytes     uint64
	wbytes     uint64
	ioOK       bool
	threadsCPU map[int32]float64
	seen       bool // has a baseline
}

// jobSampler measures a set of processes between two samples.
type jobSampler struct {
	procs  map[int]*procState
	prevAt time.Time
	sys    *cpu.TimesStat
	names  map[int]string
}

func newJobSampler() *jobSampler {
	return &jobSampler{procs: map[int]*procState{}, names: map[int]string{}}
}

// sample reads the processes in pids and returns their use since the last
// call; the first call only sets the baseline.
func (j *jobSampler) sample(ctx context.Context, pids []int, now time.Time) JobSample {
	js := JobSample{PIDs: pids}
	dt := now.Sub(j.prevAt).Seconds()
	first := j.prevAt.IsZero()
	live := map[int]bool{}
	var iowait float64
	iowaitKnown := false
	for _, pid := range pids {
		st := j.procs[pid]
		if st != nil {
			// A PID reused by a new process starts over.
			if c, err := st.p.CreateTimeWithContext(ctx); err != nil || c != st.created {
				st = nil
			}
		}
		if st == nil {
			p, err := process.NewProcessWithContext(ctx, int32(pid))
			if err != nil {
				continue
			}
			c, err := p.CreateTimeWithContext(ctx)
			if err != nil {
				continue
			}
			st = &procState{p: p, created: c}
			j.procs[pid] = st
			if _, ok := j.names[pid]; !ok {
				j.names[pid] = commandOf(ctx, p)
			}
		}
		t, err := st.p.TimesWithContext(ctx)
		if err != nil {
			delete(j.procs, pid) // exited
			continue
		}
		live[pid] = true
		cpuNow := t.User + t.System
		io, ioErr := st.p.IOCountersWithContext(ctx)
		threads, err := st.p.ThreadsWithContext(ctx)
		if err != nil {
			// A thread that ended between listing and reading fails the
			// whole call: once more gets a consistent view.
			threads, _ = st.p.ThreadsWithContext(ctx)
		}
		js.Threads += len(threads)

		// A process born after the previous sample counts from zero; one
		// seen for the first time that is older only sets its baseline.
		counted := st.seen || (!first && st.created >= j.prevAt.UnixMilli())
		if counted && dt > 0 {
			js.CPUPercent += math.Max(0, cpuNow-st.cpu) / dt * 100
			iowait += math.Max(0, t.Iowait-st.iowait) / dt * 100
			iowaitKnown = true
			if ioErr == nil && (st.ioOK || !st.seen) {
				js.ReadBps += float64(sub(io.ReadBytes, st.rchar)) / dt
				js.WriteBps += float64(sub(io.WriteBytes, st.wchar)) / dt
				js.DiskReadBps += float64(sub(io.DiskReadBytes, st.rbytes)) / dt
				js.DiskWriteBps += float64(sub(io.DiskWriteBytes, st.wbytes)) / dt
			}
			for tid, tt := range threads {
				prev, ok := st.threadsCPU[tid]
				if !ok && st.seen {
					continue // a new thread: baseline only
				}
				if p := math.Max(0, tt.User+tt.System-prev) / dt * 100; p > js.BusiestThreadPercent {
					js.BusiestThreadPercent = p
				}
			}
		}
		if ioErr != nil {
			js.IOUnreadable = true
		}
		st.cpu, st.iowait, st.seen = cpuNow, t.Iowait, true
		st.ioOK = ioErr == nil
		if ioErr == nil {
			st.rchar, st.wchar, st.rbytes, st.wbytes = io.ReadBytes, io.WriteBytes, io.DiskReadBytes, io.DiskWriteBytes
		}
		st.threadsCPU = make(map[int32]float64, len(threads))
		for tid, tt := range threads {
			st.threadsCPU[tid] = tt.User + tt.System
		}
	}
	for pid := range j.procs {
		if !live[pid] {
			delete(j.procs, pid)
		}
	}
	if iowaitKnown {
		js.IOWaitPercent = &iowait
	}
	// A single thread cannot exceed one core; clock-tick rounding can.
	js.BusiestThreadPercent = math.Min(js.BusiestThreadPercent, 100)
	js.PIDs = make([]int, 0, len(live))
	for _, pid := range pids {
		if live[pid] {
			js.PIDs = append(js.PIDs, pid)
		}
	}
	j.prevAt = now
	return js
}

// zombie reports whether pid has exited but is not reaped yet: it keeps
// its /proc entry, but the job is over.
func (j *jobSampler) zombie(ctx context.Context, pid int) bool {
	st := j.procs[pid]
	if st == nil {
		return false
	}
	status, err := st.p.StatusWithContext(ctx)
	return err == nil && len(status) > 0 && status[0] == process.Zombie
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// system returns the machine's CPU busy and iowait shares since the last
// call (zero on the first).
func (j *jobSampler) system(ctx context.Context) SystemSample {
	ts, err := cpu.TimesWithContext(ctx, false)
	if err != nil || len(ts) == 0 {
		return SystemSample{}
	}
	t := ts[0]
	var out SystemSample
	if p := j.sys; p != nil {
		total := cpuTotal(t) - cpuTotal(*p)
		if total > 0 {
			idle := (t.Idle - p.Idle) + (t.Iowait - p.Iowait)
			out.CPUPercent = clamp(100*(total-idle)/total, 0, 100)
			out.IOWaitPercent = clamp(100*(t.Iowait-p.Iowait)/total, 0, 100)
		}
	}
	j.sys = &t
	return out
}

// cpuTotal sums the time columns of /proc/stat. Guest time is already
// counted in user time, so it is left out.
func cpuTotal(t cpu.TimesStat) float64 {
	return t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

var gpuNodeRE = regexp.MustCompile(`^/dev/(nvidia\d+|dxg)$`)

// deviceNodes lists the GPU device nodes (/dev/nvidiaN, /dev/dxg) that the
// processes hold open. Reading the fd links directly: gopsutil's OpenFiles
// stats every descriptor, which costs more and tells nothing more here.
func deviceNodes(pids []int) []string {
	seen := map[string]bool{}
	for _, pid := range pids {
		dir := fmt.Sprintf("%s/%d/fd", procRoot, pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if t, err := os.Readlink(dir + "/" + fd.Name()); err == nil && gpuNodeRE.MatchString(t) {
				seen[t] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// cpusAvailable is how many cores pid may use: its CPU affinity, lowered
// by a cgroup v2 CPU quota on its cgroup or any parent.
func cpusAvailable(pid int) (float64, string) {
	n, src := float64(0), ""
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err == nil && set.Count() > 0 {
		n, src = float64(set.Count()), "affinity"
	}
	if q, ok := cgroupQuota(pid); ok && (n == 0 || q < n) {
		n, src = q, "cgroup cpu.max"
	}
	return n, src
}

// cgroupQuota reads the cgroup v2 cpu.max of pid's cgroup and its parents
// and returns the tightest quota in cores.
func cgroupQuota(pid int) (float64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/cgroup", procRoot, pid))
	if err != nil {
		return 0, false
	}
	path, ok := parseCgroupV2Path(string(b))
	if !ok {
		return 0, false
	}
	best, found := 0.0, false
	for dir := filepath.Join("/sys/fs/cgroup", path); strings.HasPrefix(dir, "/sys/fs/cgroup"); dir = filepath.Dir(dir) {
		if c, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
			if q, ok := parseCPUMax(string(c)); ok && (!found || q < best) {
				best, found = q, true
			}
		}
		if dir == "/sys/fs/cgroup" {
			break
		}
	}
	return best, found
}

// parseCgroupV2Path finds the unified hierarchy's line ("0::/path") in
// /proc/PID/cgroup.
func parseCgroupV2Path(s string) (string, bool) {
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			rest = strings.TrimSpace(rest)
			if !strings.HasPrefix(rest, "/") || strings.Contains(rest, "..") {
				return "", false
			}
			return rest, true
		}
	}
	return "", false
}

// parseCPUMax parses cgroup v2 cpu.max ("QUOTA PERIOD" or "max PERIOD")
// into cores; false for no limit or unreadable text.
func parseCPUMax(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 || f[0] == "max" {
		return 0, false
	}
	quota, err := strconv.ParseFloat(f[0], 64)
	if err != nil || quota <= 0 || math.IsInf(quota, 0) || math.IsNaN(quota) {
		return 0, false
	}
	period := 100000.0 // the kernel's default
	if len(f) == 2 {
		p, err := strconv.ParseFloat(f[1], 64)
		if err != nil || p <= 0 || math.IsInf(p, 0) || math.IsNaN(p) {
			return 0, false
		}
		period = p
	}
	return quota / period, true
}

// delayAccounting reads kernel.task_delayacct: without it, per-task block
// I/O delay (the job's I/O wait) reads as zero.
func delayAccounting() *bool {
	b, err := os.ReadFile(procRoot + "/sys/kernel/task_delayacct")
	if err != nil {
		return nil
	}
	on := strings.TrimSpace(string(b)) == "1"
	return &on
}
