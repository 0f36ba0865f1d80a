package checks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tfdoctor/doctor/host"
)

// VisibleDevices is the result of applying CUDA_VISIBLE_DEVICES the way the
// CUDA runtime does: entries are read in order and the list stops at the
// first entry that matches no device.
type VisibleDevices struct {
	Set     bool
	Value   string
	Visible []int    // GPU indexes CUDA will see, in CUDA's order
	Invalid string   // the first entry that matched nothing ("" if none)
	Known   bool     // the GPUs were known (NVML), so matching was possible
	Entries []string // the parsed entries
}

// ParseVisibleDevices applies a CUDA_VISIBLE_DEVICES value to the GPUs in
// gpus (nil when unknown).
func ParseVisibleDevices(value string, set bool, gpus []host.GPU) VisibleDevices {
	v := VisibleDevices{Set: set, Value: value, Known: gpus != nil}
	if !set {
		for _, g := range gpus {
			v.Visible = append(v.Visible, g.Index)
		}
		return v
	}
	used := map[int]bool{}
	for _, raw := range strings.Split(value, ",") {
		e := strings.TrimSpace(raw)
		v.Entries = append(v.Entries, e)
		idx, ok := matchDevice(e, gpus)
		if !ok || used[idx] {
			v.Invalid = e
			if e == "" {
				v.Invalid = `""`
			}
			break
		}
		used[idx] = true
		v.Visible = append(v.Visible, idx)
	}
	return v
}

// matchDevice finds the GPU an entry names: an index, a GPU UUID (or a
// unique prefix of one, as CUDA accepts) or a MIG UUID.
func matchDevice(e string, gpus []host.GPU) (int, bool) {
	if e == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(e); err == nil {
		if n < 0 {
			return 0, false
		}
		if gpus == nil {
			return n, true // unknown GPUs: a non-negative index may be fine
		}
		for _, g := range gpus {
			if g.Index == n {
				return n, true
			}
		}
		return 0, false
	}
	low := strings.ToLower(e)
	if strings.HasPrefix(low, "gpu-") || strings.HasPrefix(low, "mig-") {
		if gpus == nil {
			return -1 - len(e), true
		}
		match := -1
		for _, g := range gpus {
			if strings.HasPrefix(strings.ToLower(g.UUID), low) {
				if match >= 0 {
					return 0, false // ambiguous prefix
				}
				match = g.Index
			}
			if strings.HasPrefix(low, "mig-") && g.MIG != nil && g.MIG.Current && g.MIG.Devices > 0 {
				match = g.Index // MIG UUIDs are not listed per instance here
			}
		}
		return match, match >= 0
	}
	return 0, false
}

// CUDAVisibleDevices fails when CUDA_VISIBLE_DEVICES (or, in a container,
// NVIDIA_VISIBLE_DEVICES) hides every GPU.
var CUDAVisibleDevices = &Check{
	ID:       "env.cuda_visible_devices",
	Link:     LinkEnvironment,
	Title:    "CUDA_VISIBLE_DEVICES",
	Causes:   []string{"cuda_visible_devices_hides_gpu"},
	Requires: []string{"env"},
	Doc: `CUDA shows a process only the devices CUDA_VISIBLE_DEVICES lists, reading
entries in order and stopping at the first that matches no device.
"-1", "" (set but empty), an index past the last GPU or an unknown UUID
hide every GPU: TensorFlow then lists no GPU while nvidia-smi (which ignores
the variable) shows it. Guides and notebooks set it to -1 to force the CPU
and it stays in a shell rc file or conda env.`,
	Run: func(p *Pass) {
		s := p.Snap
		var gpus []host.GPU
		if s.NVML.Available {
			gpus = s.NVML.GPUs
			if gpus == nil {
				gpus = []host.GPU{}
			}
		}
		fix := Fix{ID: FixUnsetCUDAVisibleDevices, Title: "Stop hiding the GPU", Risk: RiskSafe,
			Steps: []string{"unset CUDA_VISIBLE_DEVICES   # in this shell", "Remove the line that sets it (doctor --fix finds it in shell rc files, conda env vars and /etc/environment)"}}
		if nv, ok := env(s, "NVIDIA_VISIBLE_DEVICES"); ok && s.Platform.Container != "" {
			switch strings.ToLower(strings.TrimSpace(nv)) {
			case "void", "none", "":
				p.Error("cuda_visible_devices_hides_gpu", "NVIDIA_VISIBLE_DEVICES="+strconv.Quote(nv)+" gives this container no GPU",
					"The NVIDIA container runtime passes no GPU when NVIDIA_VISIBLE_DEVICES is void, none or empty.",
					Ev{"NVIDIA_VISIBLE_DEVICES": nv},
					Fix{ID: FixContainerGPUs, Title: "Start the container with a GPU", Risk: RiskSafe, Manual: true, Steps: []string{"docker run --gpus all ... (or -e NVIDIA_VISIBLE_DEVICES=all)"}})
			}
		}
		val, set := env(s, "CUDA_VISIBLE_DEVICES")
		v := ParseVisibleDevices(val, set, gpus)
		if !set {
			if len(p.findings) == 0 {
				p.OK("CUDA_VISIBLE_DEVICES not set")
			}
			return
		}
		ev := Ev{"CUDA_VISIBLE_DEVICES": val, "visible": v.Visible, "gpus": len(gpus)}
		if v.Invalid != "" {
			ev["first_invalid_entry"] = v.Invalid
		}
		switch {
		case len(v.Visible) == 0:
			detail := fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q: CUDA stops at the entry %s, which matches no GPU, so no GPU is visible to TensorFlow.", val, v.Invalid)
			if !v.Known {
				detail = fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q names no usable device.", val)
			}
			p.Error("cuda_visible_devices_hides_gpu", fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every GPU", val), detail, ev, fix)
		case v.Invalid != "":
			p.Warn("cuda_visible_devices_hides_gpu", fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q: entries after %s are ignored", val, v.Invalid),
				fmt.Sprintf("CUDA sees only %s; the list stops at the first entry that matches no GPU.", plural(len(v.Visible), "GPU", "GPUs")), ev, fix)
		default:
			p.OKf(fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q selects %s", val, plural(len(v.Visible), "GPU", "GPUs")), ev)
		}
	},
}

// ComputeMode fails when a GPU's compute mode keeps this process off it.
var ComputeMode = &Check{
	ID:       "env.compute_mode",
	Link:     LinkEnvironment,
	Title:    "GPU compute mode",
	Causes:   []string{"compute_mode_prohibited"},
	Requires: []string{"nvml", "driver.nvml"},
	Doc: `A GPU in Prohibited compute mode accepts no CUDA context; one in Exclusive
Process mode accepts one process at a time, so on shared machines and
clusters a second job fails with "CUDA-capable device(s) is/are busy or
unavailable" while the GPU shows as in use. Only an administrator changes the
mode; doctor never does.`,
	Run: func(p *Pass) {
		s := p.Snap
		if !s.NVML.Available {
			p.Skip("NVML not available")
			return
		}
		var notes []string
		for _, g := range s.NVML.GPUs {
			id := fmt.Sprintf("%s/gpu%d", p.check.ID, g.Index)
			others := otherProcesses(g)
			ev := Ev{"gpu": g.Index, "compute_mode": g.ComputeMode, "processes": others}
			switch g.ComputeMode {
			case "Prohibited":
				p.Error("compute_mode_prohibited", fmt.Sprintf("GPU %d is in Prohibited compute mode", g.Index),
					"No process may create a CUDA context on it.", ev,
					Fix{ID: FixAskAdminComputeMode, Title: "Ask the administrator to set the Default compute mode", Risk: RiskSafe, Manual: true,
						Steps: []string{fmt.Sprintf("Administrator: sudo nvidia-smi -i %d -c DEFAULT", g.Index), "Or use another GPU: export CUDA_VISIBLE_DEVICES=<index of a free GPU>"}}).ID = id
			case "Exclusive_Process", "Exclusive_Thread":
				if len(others) > 0 {
					pids := []string{}
					for _, o := range others {
						pids = append(pids, fmt.Sprintf("PID %d (%s, %s)", o.PID, orUnknown(o.User), gib(o.UsedMiB)))
					}
					p.Error("compute_mode_prohibited", fmt.Sprintf("GPU %d is in %s mode and held by %s", g.Index, g.ComputeMode, strings.Join(pids, ", ")),
						"Only one process may use this GPU at a time; a new one fails with 'all CUDA-capable devices are busy or unavailable'.", ev,
						Fix{ID: FixUseFreeGPU, Title: "Use a free GPU, or wait for the job", Risk: RiskSafe, Manual: true,
							Steps: []string{"nvidia-smi   # find a GPU with no process", "export CUDA_VISIBLE_DEVICES=<that index>", "On a cluster: request the GPU through the scheduler instead of using a busy one"}}).ID = id
				} else {
					notes = append(notes, fmt.Sprintf("GPU %d %s (free)", g.Index, g.ComputeMode))
				}
			case "":
				notes = append(notes, fmt.Sprintf("GPU %d mode unknown", g.Index))
			}
		}
		if len(p.findings) == 0 {
			if len(notes) > 0 {
				p.Info("healthy", "Compute mode: "+strings.Join(notes, ", "), "An exclusive GPU takes one process at a time.", nil)
				return
			}
			p.OK("compute mode Default")
		}
	},
}

func otherProcesses(g host.GPU) []host.GPUProcess {
	var out []host.GPUProcess
	for _, pr := range g.Processes {
		if !pr.Self {
			out = append(out, pr)
		}
	}
	return out
}

// MIGConfig fails when MIG is on without instances, or a mode change waits
// for a reset.
var MIGConfig = &Check{
	ID:       "env.mig",
	Link:     LinkEnvironment,
	Title:    "MIG mode",
	Causes:   []string{"mig_misconfigured"},
	Requires: []string{"nvml", "driver.nvml"},
	Doc: `With Multi-Instance GPU mode on, CUDA sees only MIG instances, not the
whole GPU. With MIG on and no instance created, CUDA sees nothing. A mode
change takes effect only after a GPU reset, so current and pending can
differ.`,
	Run: func(p *Pass) {
		s := p.Snap
		if !s.NVML.Available {
			p.Skip("NVML not available")
			return
		}
		for _, g := range s.NVML.GPUs {
			if g.MIG == nil {
				continue
			}
			ev := Ev{"gpu": g.Index, "mig_current": g.MIG.Current, "mig_pending": g.MIG.Pending, "mig_devices": g.MIG.Devices}
			id := fmt.Sprintf("%s/gpu%d", p.check.ID, g.Index)
			switch {
			case g.MIG.Current && g.MIG.Devices == 0:
				p.Error("mig_misconfigured", fmt.Sprintf("GPU %d has MIG enabled but no MIG instance", g.Index),
					"CUDA sees only MIG instances; with none created, this GPU is invisible to TensorFlow.", ev,
					Fix{ID: FixAskAdminMIG, Title: "Create a MIG instance or disable MIG (administrator)", Risk: RiskModerate, Manual: true,
						Steps: []string{fmt.Sprintf("Administrator: sudo nvidia-smi mig -i %d -cgi <profile> -C", g.Index), fmt.Sprintf("Or disable MIG: sudo nvidia-smi -i %d -mig 0 (needs the GPU idle and a reset)", g.Index)}}).ID = id
			case g.MIG.Current != g.MIG.Pending:
				p.Warn("mig_misconfigured", fmt.Sprintf("GPU %d: MIG mode change pending until a GPU reset", g.Index),
					"The requested MIG mode applies only after the GPU is reset or the machine rebooted.", ev,
					Fix{ID: FixReboot, Title: "Reboot (doctor never resets a GPU)", Risk: RiskDangerous, Manual: true, Steps: []string{"Reboot the machine when the GPU is idle"}}).ID = id
			}
		}
		if len(p.findings) == 0 {
			p.OK("MIG off or configured")
		}
	},
}

// OtherProcessesMemory finds other processes holding GPU memory.
var OtherProcessesMemory = &Check{
	ID:       "env.gpu_memory",
	Link:     LinkEnvironment,
	Title:    "GPU memory held by other processes",
	Causes:   []string{"gpu_out_of_memory_other_process"},
	Requires: []string{"nvml", "driver.nvml"},
	Doc: `TensorFlow maps nearly all free GPU memory at start-up; when other processes
(a forgotten notebook kernel, another framework, another user's job) hold
memory, TensorFlow fails with CUDA_ERROR_OUT_OF_MEMORY or cuDNN
CUDNN_STATUS_INTERNAL_ERROR. Each process is named with its PID, user and
memory. Under WSL 2 the driver lists no processes; only the totals are known.`,
	Run: func(p *Pass) {
		s := p.Snap
		if !s.NVML.Available {
			p.Skip("NVML not available")
			return
		}
		for _, g := range s.NVML.GPUs {
			id := fmt.Sprintf("%s/gpu%d", p.check.ID, g.Index)
			total := g.MemoryTotalMiB
			used := g.MemoryUsedMiB
			freeFrac := 1.0
			if total > 0 {
				freeFrac = float64(total-min(used, total)) / float64(total)
			}
			others := otherProcesses(g)
			sort.Slice(others, func(i, j int) bool { return others[i].UsedMiB > others[j].UsedMiB })
			var held uint64
			var names []string
			var procs []Ev
			for _, o := range others {
				held += o.UsedMiB
				names = append(names, fmt.Sprintf("PID %d (%s, %s, %s)", o.PID, orUnknown(o.User), gib(o.UsedMiB), shortCmd(o.Command)))
				procs = append(procs, Ev{"pid": o.PID, "user": o.User, "used_mib": o.UsedMiB, "command": o.Command})
			}
			ev := Ev{"gpu": g.Index, "memory_total_mib": total, "memory_used_mib": used, "processes": procs}
			var fixes []Fix
			for _, o := range others {
				fixes = append(fixes, Fix{ID: FixStopGPUProcess, Title: fmt.Sprintf("Stop PID %d (%s)", o.PID, shortCmd(o.Command)), Risk: RiskDangerous,
					Steps:  []string{fmt.Sprintf("kill %d   # SIGTERM, then SIGKILL after a grace period", o.PID)},
					Params: map[string]string{"pid": strconv.Itoa(o.PID), "user": o.User, "command": o.Command, "gpu": strconv.Itoa(g.Index)}})
			}
			if len(others) > 0 {
				fixes = append(fixes, Fix{ID: FixTFAllowGrowth, Title: "Let TensorFlow allocate GPU memory as needed instead of all at start", Risk: RiskSafe,
					Steps: []string{"export TF_FORCE_GPU_ALLOW_GROWTH=true   # doctor --fix writes it to the environment's activate.d"}})
			}
			switch {
			case len(others) > 0 && (freeFrac < 0.10 || total-min(used, total) < 1024):
				p.Error("gpu_out_of_memory_other_process", fmt.Sprintf("GPU %d memory is nearly full: held by %s", g.Index, strings.Join(names, ", ")),
					fmt.Sprintf("Only %s of %s free; TensorFlow will fail to allocate.", gib(total-min(used, total)), gib(total)), ev, fixes...).ID = id
			case held >= 1024:
				p.Warn("gpu_out_of_memory_other_process", fmt.Sprintf("GPU %d: %s held by other processes: %s", g.Index, gib(held), strings.Join(names, ", ")),
					fmt.Sprintf("%s of %s free. TensorFlow takes what is free at start; two jobs on one GPU compete.", gib(total-min(used, total)), gib(total)), ev, fixes...).ID = id
			case !g.ProcessesSupported && freeFrac < 0.10:
				p.Warn("gpu_out_of_memory_other_process", fmt.Sprintf("GPU %d memory is nearly full (%s of %s used)", g.Index, gib(used), gib(total)),
					"The driver does not list GPU processes here (WSL 2, containers); close other GPU programs.", ev).ID = id
			case len(others) > 0:
				p.Info("healthy", fmt.Sprintf("GPU %d: other processes hold little memory (%s)", g.Index, strings.Join(names, ", ")), "", ev).ID = id
			}
		}
		if len(p.findings) == 0 {
			p.OK("no other process holds GPU memory")
		}
	},
}

func shortCmd(c string) string {
	if c == "" {
		return "unknown command"
	}
	if len(c) > 60 {
		return c[:60] + "…"
	}
	return c
}

// DiskSpace fails when a file system pip, conda or TensorFlow write to is
// (nearly) full.
var DiskSpace = &Check{
	ID:       "env.disk",
	Link:     LinkEnvironment,
	Title:    "Free disk space",
	Causes:   []string{"disk_full"},
	Requires: []string{"disks"},
	Doc: `tensorflow[and-cuda] downloads and unpacks about 3 GB of CUDA wheels; pip
and conda fail half-way on a full disk ("No space left on device") and can
leave a broken environment behind. XLA and cuDNN also write caches to /tmp
and the home folder.`,
	Run: func(p *Pass) {
		s := p.Snap
		if st, ok := collector(s, "disks"); !ok || st.TimedOut {
			p.Skip("disk space was not read")
			return
		}
		var okParts []string
		for _, d := range s.Disks {
			if d.Error != "" || d.TotalBytes == 0 {
				continue
			}
			free := d.FreeBytes
			ev := Ev{"path": d.Path, "free_bytes": free, "total_bytes": d.TotalBytes}
			fix := Fix{ID: FixFreeDisk, Title: "Free space on " + d.Path, Risk: RiskSafe, Manual: true,
				Steps: []string{"python -m pip cache purge", "conda clean --all   # if conda is used", "du -xh --max-depth=2 " + d.Path + " | sort -h | tail"}}
			id := p.check.ID + ":" + d.Path
			gb := float64(free) / (1 << 30)
			switch {
			case free < 1<<30:
				p.Error("disk_full", fmt.Sprintf("%s has only %.2f GiB free", d.Path, gb), "pip and conda installs of the CUDA wheels (about 3 GB) will fail.", ev, fix).ID = id
			case free < 5<<30:
				p.Warn("disk_full", fmt.Sprintf("%s has %.1f GiB free", d.Path, gb), "Installing tensorflow[and-cuda] needs about 3 GB plus pip's cache.", ev, fix).ID = id
			default:
				okParts = append(okParts, fmt.Sprintf("%s %.0f GiB", d.Path, gb))
			}
		}
		if len(p.findings) == 0 {
			p.OK("free space: " + strings.Join(okParts, ", "))
		}
	},
}
