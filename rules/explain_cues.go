package rules

import (
	"regexp"
	"slices"
	"strings"
)

// Cues (signatures/cues.json): lines that say where a paste comes from
// and so which of a shared symptom's causes is the likelier, without
// proving it. Where a line says only that CUDA found no driver or no
// device, a paste from a Mac on macOS 10.14 or later or naming an Apple
// M-series chip, with an AMD or
// another vendor's GPU, an unfiltered lspci listing of an x86 machine, a
// GitHub-hosted runner's job log or a cloud instance type without a GPU
// most likely comes from a machine with no NVIDIA GPU; one with a
// container's own output (Compose's log prefix, a docker build's steps,
// an NGC banner, a Dockerfile or image name) most likely from a container
// started without GPU access. A cue moves an undecided finding (a
// symptom) to that label and keeps it undecided, asking for what decides;
// it never touches a decided finding and never decides one (only a line
// that proves the cause does: ctx.apple_silicon, lspci's NVIDIA device).
// The paste showing an NVIDIA GPU outweighs a no-GPU cue.

// The cues.
const (
	// cueNoNvidiaGPU marks a paste from a machine that most likely has no
	// NVIDIA GPU.
	cueNoNvidiaGPU = "no_nvidia_gpu_cue"
	// cueContainer marks a container's own output (Compose's log prefix,
	// a docker build's steps, an NGC banner) where the paste shows no
	// container command or prompt (ctx.container).
	cueContainer = "container_cue"
)

// cueContexts are the contexts that are cues, in precedence order. They
// come before every other context of a signature (contextsOf): where the
// machine has no NVIDIA GPU, a container or WSL on it fails for that
// deeper reason. A cue the paste outweighs is dropped first
// (dropOutweighedCues), so ctx.container's own reading keeps its place.
var cueContexts = []string{cueNoNvidiaGPU, cueContainer}

func isCue(ctx string) bool {
	for _, c := range cueContexts {
		if c == ctx {
			return true
		}
	}
	return false
}

// dropOutweighedCues removes the cues the paste itself contradicts.
func (st *explainState) dropOutweighedCues() {
	// A paste that shows an NVIDIA GPU, its driver or the GPU in use is
	// not from a Mac with Apple silicon, whatever else it says about one
	// (a laptop beside the server, a wheel list).
	if st.has("apple_silicon") && st.nvidiaGPUShown() {
		delete(st.contexts, "apple_silicon")
	}
	// A Mac with Apple silicon says more (ctx.apple_silicon decides), and
	// a paste that shows an NVIDIA GPU, its driver or the GPU in use is
	// not from a machine without one.
	if st.has(cueNoNvidiaGPU) && (st.has("apple_silicon") || st.nvidiaGPUShown()) {
		delete(st.contexts, cueNoNvidiaGPU)
	}
	// lspci's listing cut short by head or tail says nothing of the
	// functions it left out: its host bridge is no cue.
	if st.has(cueNoNvidiaGPU) && st.has("lspci_cut_short") {
		var keep []lineRef
		for _, l := range st.contexts[cueNoNvidiaGPU] {
			if !strings.Contains(l.Text, "Host bridge") {
				keep = append(keep, l)
			}
		}
		if len(keep) == 0 {
			delete(st.contexts, cueNoNvidiaGPU)
		} else {
			st.contexts[cueNoNvidiaGPU] = keep
		}
	}
	// A container command or prompt (ctx.container) says the same as a
	// container cue, and its signatures' own reading of it applies.
	if st.has("container") {
		delete(st.contexts, cueContainer)
	}
	// A container whose own output (its Compose log prefix) shows the
	// driver's version was given the driver and the GPU: nvidia-smi ran
	// there, so it was not started without GPU access.
	if st.has(cueContainer) && st.containerShowsDriver() {
		delete(st.contexts, cueContainer)
	}
}

// composePrefixRE is Docker Compose's log prefix ('web-1  | ', v1
// 'web_1  | '), as ctx.cue_container_output reads it.
var composePrefixRE = regexp.MustCompile(`^\s*[A-Za-z0-9][\w.-]*[-_]\d+\s+\|\s`)

// containerShowsDriver reports whether a line of a container's own
// output shows the NVIDIA driver or GPU: under its Compose log prefix,
// nvidia-smi's header; after an NGC container's start banner (the shell
// the banner opens is the container's), nvidia-smi's header, its GPU rows
// or a GPU named.
func (st *explainState) containerShowsDriver() bool {
	for _, l := range st.contexts["driver_version_shown"] {
		if composePrefixRE.MatchString(l.Text) {
			return true
		}
	}
	banner := 0
	for _, l := range st.contexts[cueContainer] {
		if strings.Contains(l.Text, "NVIDIA Release ") || strings.Contains(l.Text, "Container image Copyright") {
			if banner == 0 || l.Line < banner {
				banner = l.Line
			}
		}
	}
	if banner == 0 {
		return false
	}
	shown := append(append([]lineRef(nil), st.contexts["driver_version_shown"]...), st.contexts["nvidia_gpu_named"]...)
	for _, g := range st.smiGPUs() {
		shown = append(shown, g.lines...)
	}
	for _, l := range shown {
		if l.Line > banner {
			return true
		}
	}
	return false
}

// nvidiaGPUShown reports whether the paste shows an NVIDIA GPU or a
// loaded NVIDIA driver: lspci's NVIDIA device, a product named,
// nvidia-smi's rows or version header, lsmod's nvidia module, libcuda
// loaded, the GPU in use.
func (st *explainState) nvidiaGPUShown() bool {
	for _, c := range []string{"nvidia_gpu_on_bus", "nvidia_gpu_named", "driver_version_shown", "nvidia_module_loaded", "libcuda_loaded"} {
		if st.has(c) {
			return true
		}
	}
	return len(st.success) > 0 || len(st.smiGPUs()) > 0 || len(st.factValues("gpu_name")) > 0
}

// ownContextApplies reports whether one of the signature's own contexts
// (not a cue, not one of contextOrder's wsl, container, windows, jupyter)
// is in the paste and applies to a finding with this cause.
func (st *explainState) ownContextApplies(s *Signature, cause string) bool {
	for c, o := range s.Contexts {
		if isCue(c) || slices.Contains(contextOrder, c) || !st.has(c) {
			continue
		}
		if o.From == "" || o.From == cause {
			return true
		}
	}
	return false
}
