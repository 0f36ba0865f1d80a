package rules

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tfdoctor/doctor/checks"
)

// Reasoning about the layers under the frameworks: the container runtime
// passing on the host driver's failure, a Slurm job that asked for no GPU.

func init() {
	reasoners = append(reasoners, stackReasoners...)
}

var stackReasoners = []*reasoner{
	{
		ID: "explain.wsl_smi_versions", Title: "nvidia-smi's two versions mark WSL 2", Link: checks.LinkPlatform, Phase: phaseHits,
		Causes: []string{"wsl_libcuda_not_found", "wsl_linux_driver_installed_inside_wsl"},
		Doc: `On Linux nvidia-smi and the kernel module come from one driver release, so the
header's 'NVIDIA-SMI X' and 'Driver Version: X' agree (when they do not, NVML refuses
to start). Under WSL 2 nvidia-smi is the Linux build shipped with the Windows driver
and 'Driver Version' is the Windows driver's (NVIDIA-SMI 545.23.06, Driver Version
545.84): a header whose two versions differ marks the paste as WSL 2 even when
nothing else does.`,
		Run: reasonWSLSMIVersions,
	},
	{
		ID: "explain.nvc_nvidia_loaded", Title: "nvidia-container-cli's debug log loads the nvidia module", Link: checks.LinkKernel, Phase: phaseHits,
		Causes: []string{"uvm_module_missing"},
		Doc: `libnvidia-container (nvc.c) logs 'loading kernel module nvidia' and, only when that
fails, 'could not load kernel module nvidia'; then the same for nvidia_uvm and
nvidia_modeset. A debug log that loads nvidia without that error shows the nvidia module
loaded, so a failure to load nvidia_uvm after it is nvidia_uvm's own (context
nvidia_module_loaded, which decides kernel.uvm_missing).`,
		Run: reasonNVCNvidiaLoaded,
	},
	{
		ID: "explain.nouveau_without_nvidia", Title: "nouveau drives the GPU because no NVIDIA driver is installed", Link: checks.LinkKernel, Phase: phaseFindings,
		Causes: []string{"driver_missing"},
		Doc: `nouveau holding the GPU is a conflict only when an NVIDIA driver is installed to take
it. When the paste shows nouveau bound (lsmod, lspci -k, its kernel log lines) and that no
NVIDIA driver is installed (nvidia-smi not found, lspci -k listing no nvidia module) with
nothing showing one (NVRM lines, DKMS or installer output, nvidia-smi failing to reach
its driver), nouveau is just the default driver: the cause is the missing NVIDIA driver.`,
		Run: reasonNouveauWithoutNvidia,
	},
	{
		ID: "explain.gpu_only_as_root", Title: "The GPU works as root but not as the user", Link: checks.LinkDriver, Phase: phaseFindings,
		Causes: []string{"device_node_permission"},
		Doc: `The same GPU query (torch.cuda.is_available(), list_physical_devices, deviceQuery)
answered twice in the paste: it finds the GPU when run with sudo (or as root) and not when
run without it (or as another user through su). That is a symptom, not a verdict: the
user may not open /dev/nvidia* (the nodes belong to a group such as video that the user
is not in), but sudo also drops the user's environment (CUDA_VISIBLE_DEVICES,
LD_LIBRARY_PATH) and usually runs another python (the system's, not the virtualenv's).
The nodes exist (root used them), so creating them is never the fix. When the paste
shows an environment finding (CUDA_VISIBLE_DEVICES hiding the GPUs, LD_LIBRARY_PATH
pollution), that is the cause and the difference is folded under it.`,
		Run: reasonGPUOnlyAsRoot,
	},
	{
		ID: "explain.container_host_cause", Title: "A container's GPU failure caused by the host's driver", Link: checks.LinkPlatform, Phase: phaseFindings,
		Causes: []string{"container_runtime_no_gpu"},
		Doc: `The NVIDIA container runtime only passes on the host's driver: when the paste shows a
host-level cause (a driver/library version mismatch, a module not built or refused, a GPU
fallen off the bus, ECC errors, a driver too old), the container's own view of it
(nvidia-container-cli's 'initialization error', NVML or CUDA failing inside the container)
is a consequence of that cause, not a container fault: it is folded under it.`,
		Run: reasonContainerHostCause,
	},
	{
		ID: "explain.container_gpus_passed", Title: "A container started with GPU access that finds no GPU", Link: checks.LinkPlatform, Phase: phaseFindings,
		Causes: []string{"container_runtime_no_gpu"},
		Doc: `A no-GPU finding read as "the container was started without GPU access" because the
paste comes from a container is not that when the paste shows the GPU request itself
(--gpus, --runtime=nvidia, a CDI device, --nv, a Compose device reservation, a Kubernetes
nvidia.com/gpu limit): the runtime was asked for the GPU, so "start the container with GPU
access" does not help. It stays the container's most likely reading, undecided and with no
fix: a GPU lost after the container started (systemd daemon-reload with the systemd cgroup
driver), the host's driver or NVIDIA Container Toolkit, or a device the request does not
name; nvidia-smi on the host and in the container says which.`,
		Run: reasonContainerGPUsPassed,
	},
	{
		ID: "explain.error35_container_without_gpus", Title: "Error 35 in a container started without GPU access", Link: checks.LinkPlatform, Phase: phaseFindings,
		Causes: []string{"container_runtime_no_gpu"},
		Doc: `CUDA's error 35 ('driver version is insufficient') is decided as a driver too old where
the paste shows the driver's version. The CUDA runtime says the same where it finds no
driver at all (cudaDriverGetVersion returns 0 without one), which is what a container
started without GPU access sees: no libcuda is mounted into it. When the paste shows the
container started that way (a docker or podman run without a GPU request, which
container.run_without_gpus reads), the driver version shown is the host's, which the
container never got: error 35 is then that container's symptom, not a verdict on the
driver.`,
		Run: reasonError35ContainerWithoutGPUs,
	},
	{
		ID: "explain.pip_pin_newer_minor", Title: "pip's pin conflict with a newer CUDA wheel of the same major version", Link: checks.LinkLibraries, Phase: phaseFindings,
		Causes: []string{"cuda_version_mismatch_tf_build", "cudnn_version_mismatch"},
		Doc: `pip's dependency-conflict report ('tensorflow 2.16.1 requires nvidia-cublas-cu12==12.3.4.1,
but you have nvidia-cublas-cu12 12.4.5.8 which is incompatible') says only that the wheel
does not satisfy the framework's pin. NVIDIA's CUDA libraries keep one soname per major
version (libcublas.so.12, libcudnn.so.9) and a newer minor release runs programs built
against an older one (cuDNN's API compatibility: minor releases are backward compatible),
so a newer wheel of the same major usually loads and works: the mismatch is then the
likely reading only, undecided. Another major version, or an older minor than the pin,
stays decided.`,
		Run: reasonPipPinNewerMinor,
	},
	{
		ID: "explain.slurm_no_gpu", Title: "A Slurm job that requested no GPU", Link: checks.LinkPlatform, Phase: phaseFindings,
		Causes: []string{"scheduler_no_gpu_allocated"},
		Doc: `When the paste comes from a Slurm job (srun, sbatch, salloc, #SBATCH, SLURM_* variables)
that shows no GPU request (--gres=gpu, --gpus, SLURM_JOB_GPUS) and the program finds no GPU
(no CUDA device, nvidia-smi 'No devices were found'), the job was given no GPU: Slurm
allocates generic resources only when the job asks for them, and its cgroup device
constraint hides the node's GPUs from a job that did not. Decided when the paste shows
the request itself (the job's #SBATCH lines, or the srun/salloc command line); with only
other marks of a Slurm job it stays the most likely reading.`,
		Run: reasonSlurmNoGPU,
	},
	{
		ID: "explain.module_not_found", Title: "No nvidia module: not built, or no driver at all", Link: checks.LinkKernel, Phase: phaseFindings,
		Causes: []string{"kernel_module_not_built", "driver_missing"},
		Doc: `'Module nvidia not found' (modprobe, modinfo, systemd-modules-load) says the
running kernel has no nvidia module. That is a module not built for this kernel only
when the paste shows an NVIDIA driver installed (dkms status, DKMS or installer output,
NVRM lines, nvidia-smi or NVML reaching for the driver); when nvidia-smi is not
installed either, no driver is installed at all. With neither, it stays a symptom.`,
		Run: reasonModuleNotFound,
	},
	{
		ID: "explain.not_a_fault", Title: "Lines that look like a fault and are not one here", Link: checks.LinkHardware, Phase: phaseFindings,
		Causes: []string{"gpu_hardware_xid_error", "container_runtime_no_gpu"},
		Doc: `Some lines read as a fault only without what the rest of the paste shows. lspci's
'(rev ff)' is a device that answers with all ones: fallen off the bus, or powered off on
purpose (bbswitch OFF on an Optimus laptop). 'nvidia.com/gpu: 0' is a node advertising no
GPU only when no line shows one advertised: beside 'nvidia.com/gpu: 8' it is a pod's limit.
Such findings become information, with what the line does mean.`,
		Run: reasonNotAFault,
	},
	{
		ID: "explain.dkms_running_kernel", Title: "DKMS has no NVIDIA module for the running kernel", Link: checks.LinkKernel, Phase: phaseFindings,
		Causes: []string{"kernel_module_not_built"},
		Doc: `'dkms status' lists, per kernel, whether the nvidia module was built and installed
for it. When the paste also shows the running kernel (the line after uname -r, uname -a,
the kernel log's 'Linux version'; not a bare release from ls /lib/modules) and no
nvidia entry is installed for it, or DKMS only 'added' the sources and built nothing,
the module does not exist for the kernel that runs: a kernel update without a
DKMS build (missing headers, a build failure, a kernel newer than the driver).`,
		Run: reasonDKMSRunningKernel,
	},
}

// hostCauses are causes on the host under the container runtime.
var hostCauses = map[string]bool{
	"driver_library_mismatch": true, "kernel_module_not_built": true, "secure_boot_unsigned_module": true,
	"nouveau_conflict": true, "uvm_module_missing": true, "gpu_hardware_xid_error": true,
	"gpu_ecc_errors": true, "driver_too_old_for_cuda": true, "driver_missing": true, "driver_unresponsive": true,
}

// runtimeSawHost reports whether a container finding is the runtime's view
// of the host driver: a driver, NVML or CUDA message that the container
// context turned into container_runtime_no_gpu, nvidia-container-cli
// failing while it initialises the driver, or the Kubernetes device plugin
// finding no GPU to advertise.
func runtimeSawHost(d *draft) bool {
	if c, _ := d.evidence["context"].(string); c == "container" {
		return true
	}
	if d.sig == nil {
		return false
	}
	switch {
	case d.is(roleRuntimeSeesHost):
		return true // the plugin finds no GPU a broken host driver would show it
	case d.is(roleRuntimeStage):
		return strings.EqualFold(strings.TrimSpace(d.values["stage"]), "initialization error")
	}
	return false
}

func reasonContainerHostCause(st *explainState) {
	var host *draft
	for _, d := range st.drafts {
		if !hostCauses[d.cause] || d.symptom || d.severity != checks.SevError || d.cause == "container_runtime_no_gpu" {
			continue
		}
		if c, _ := d.evidence["context"].(string); c == "container" {
			continue
		}
		if host == nil || d.link.Order() < host.link.Order() {
			host = d
		}
	}
	if host == nil {
		return
	}
	for _, d := range st.drafts {
		if d.cause != "container_runtime_no_gpu" || !runtimeSawHost(d) {
			continue
		}
		d.symptom = true
		d.link = host.link
		d.note("The paste also shows a host-level cause (%s): the container runtime only passes on the host driver's failure.", host.cause)
		d.ev("explained_by", host.id)
		d.reasons = append(d.reasons, "explain.container_host_cause")
	}
}

// reasonContainerGPUsPassed: the container context read a no-GPU finding
// as a container started without GPU access, but the paste shows the
// request for the GPU.
func reasonContainerGPUsPassed(st *explainState) {
	if !st.has("container_gpus_requested") {
		return
	}
	for _, d := range st.drafts {
		// NVML's Unknown Error is the container runtime's reading by its
		// own signature: with the request shown, the GPU was lost after
		// the container started (daemon-reload), not never requested.
		nvmlLost := d.is(roleGPULostInContainer) && d.cause == "container_runtime_no_gpu"
		if !nvmlLost {
			if d.sig == nil || d.cause != "container_runtime_no_gpu" || d.sig.Cause == "container_runtime_no_gpu" {
				continue
			}
			if c, _ := d.evidence["context"].(string); c != "container" {
				continue
			}
		}
		d.symptom = true
		d.noFix = true
		d.note("The paste shows the container started with GPU access (evidence gpu_request_lines), so starting it with GPU access again does not help: the GPU may have been lost after the container started (systemd daemon-reload with the systemd cgroup driver: recreate the container), or the host's driver or NVIDIA Container Toolkit does not pass it. Compare nvidia-smi on the host and in the container.")
		d.ev("gpu_request_lines", firstN(st.contexts["container_gpus_requested"], 2))
		d.reasons = append(d.reasons, "explain.container_gpus_passed")
	}
}

// slurmCommandRE is an srun or salloc command line (after a shell prompt),
// whose options are the job's request.
var slurmCommandRE = regexp.MustCompile(`(?:^|[$#>]\s*)(?:srun|salloc)\s+-`)

// noGPUSymptoms are the roles of a program finding no GPU at all. In a
// Slurm job that asked for none, a framework's bare False
// (roleCUDAQueryFalse) and 'nvidia-smi: command not found' (roleSMIMissing:
// a node without the driver, a CPU node) say the same: the job runs where
// it was given no GPU, and installing a driver as root on a batch node is
// not the user's fix.
var noGPUSymptoms = []*sigRole{roleNoCUDADevice, roleSMINoDevices, roleTFNoGPU, roleCUDAQueryFalse, roleSMIMissing}

// slurmRequestShown: the paste shows the job's request itself, the job
// script's #SBATCH lines or the srun/salloc command line (sbatch's
// options are in the script).
func slurmRequestShown(st *explainState) bool {
	for _, l := range st.contexts["slurm_job"] {
		t := strings.TrimSpace(l.Text)
		if strings.HasPrefix(t, "#SBATCH") || slurmCommandRE.MatchString(t) {
			return true
		}
	}
	return false
}

func reasonSlurmNoGPU(st *explainState) {
	if !st.has("slurm_job") || st.has("slurm_gpu_request") {
		return
	}
	// The request itself is shown: the job script's #SBATCH lines, or the
	// srun/salloc command line (sbatch's options are in the script).
	requestShown := slurmRequestShown(st)
	for _, d := range st.draftsWithCause("cuda_visible_devices_hides_gpu") {
		if !d.symptom {
			return // the paste already names what hides the GPU
		}
	}
	for _, d := range st.drafts {
		if !d.is(noGPUSymptoms...) || !d.symptom || d.severity != checks.SevError {
			continue
		}
		d.cause = "scheduler_no_gpu_allocated"
		d.link = st.lib.linkOf(d.cause)
		d.symptom = !requestShown
		d.noFix = true // unsetting CUDA_VISIBLE_DEVICES does not help: the job must ask for the GPU
		d.next = nil   // the label's: the job's request lines
		d.title = "The Slurm job was given no GPU"
		d.detail = "The paste comes from a Slurm job that shows no GPU request (--gres=gpu:N or --gpus=N), and the program finds no GPU: Slurm allocates GPUs only to a job that asks for them, and hides the node's GPUs from one that did not (its cgroup device constraint). Request the GPU in the job (#SBATCH --gres=gpu:1, or --gpus=1, on a GPU partition); Slurm then sets CUDA_VISIBLE_DEVICES to the allocated GPU."
		d.ev("slurm_lines", firstN(st.contexts["slurm_job"], 2))
		d.reasons = append(d.reasons, "explain.slurm_no_gpu")
	}
}

func reasonDKMSRunningKernel(st *explainState) {
	entries := st.factValues("dkms_state")
	if len(entries) == 0 || len(st.draftsWithCause("kernel_module_not_built")) > 0 && !allSymptoms(st.draftsWithCause("kernel_module_not_built")) {
		return
	}
	running, rf, haveRunning := st.runningKernel()
	var lines []lineRef
	var installedFor []string
	built := false
	for _, f := range entries {
		lines = append(lines, quote(f))
		switch f.values["dkms_state"] {
		case "installed", "built":
			built = true
			if k := f.values["dkms_kernel"]; k != "" {
				installedFor = append(installedFor, k)
			}
		}
	}
	var title, detail string
	switch {
	case !built:
		title = "DKMS has the NVIDIA module's sources but built it for no kernel"
		detail = "dkms status shows the nvidia module only 'added': it was never built, so no kernel has it. Build it (sudo dkms autoinstall, or dkms install -m nvidia -v <version> -k $(uname -r)) and read make.log if that fails."
	case haveRunning && len(installedFor) > 0 && !contains(installedFor, running):
		title = "DKMS built the NVIDIA module for other kernels, not the running " + running
		detail = fmt.Sprintf("dkms status shows the nvidia module installed for %s, and the running kernel is %s: it was not built for this kernel (a kernel update without a DKMS build: missing headers, a build failure, a kernel newer than the driver).",
			strings.Join(installedFor, ", "), running)
		lines = append(lines, quote(rf))
	default:
		return
	}
	d := st.newDraft("explain.dkms_running_kernel", "kernel_module_not_built", checks.SevError, title, detail)
	d.lines = firstN(lines, maxQuotedLines)
	d.firstLine = firstLineOf(lines)
	d.weight = 14
	d.ev("dkms_installed_for", installedFor)
	if haveRunning {
		d.ev("running_kernel", running)
	}
}

// allSymptoms reports whether every draft is a symptom.
func allSymptoms(ds []*draft) bool {
	for _, d := range ds {
		if !d.symptom {
			return false
		}
	}
	return true
}

func reasonWSLSMIVersions(st *explainState) {
	if st.has("wsl") {
		return
	}
	for _, f := range st.facts {
		smi, drv := f.values["smi_version"], f.values["driver_version"]
		if smi == "" || drv == "" || smi == drv {
			continue
		}
		st.contexts["wsl"] = append(st.contexts["wsl"], quote(f))
		delete(st.contexts, "windows") // WSL pastes show Windows paths too: WSL wins
		for _, d := range st.drafts {
			if d.sig != nil && d.sig.Contexts["wsl"].Cause != "" {
				d.reasons = append(d.reasons, "explain.wsl_smi_versions")
			}
		}
		return
	}
}

// reasonNVCNvidiaLoaded marks the nvidia module loaded where
// nvidia-container-cli's debug log loads it without an error.
func reasonNVCNvidiaLoaded(st *explainState) {
	loading := st.contexts["nvc_loading_nvidia"]
	if len(loading) == 0 || st.has("nvc_nvidia_failed") {
		return
	}
	st.contexts["nvidia_module_loaded"] = append(st.contexts["nvidia_module_loaded"], loading[0])
	for _, d := range st.drafts {
		if d.sig != nil && d.sig.Contexts["nvidia_module_loaded"].Decide {
			d.reasons = append(d.reasons, "explain.nvc_nvidia_loaded")
		}
	}
}

// showsNvidiaInstall reports whether a finding's line shows an NVIDIA
// driver installed or being installed: every NVRM, kernel-module,
// installer, DKMS, nvidia-smi and NVML message except nouveau's own lines,
// the missing device nodes and the missing nvidia-smi/NVML library.
func showsNvidiaInstall(d *draft) bool {
	if d.sig == nil {
		return false
	}
	if d.is(roleNotAnInstall) {
		return false
	}
	for _, p := range []string{"kernel.", "smi.", "nvml."} {
		if strings.HasPrefix(d.sig.ID, p) {
			return true
		}
	}
	return false
}

func reasonNouveauWithoutNvidia(st *explainState) {
	nouveau := st.draftsOf(roleNouveauBound)
	if len(nouveau) == 0 {
		return
	}
	for _, d := range st.drafts {
		if showsNvidiaInstall(d) {
			return
		}
	}
	if len(st.factValues("dkms_state")) > 0 || len(st.factValues("kernel_driver")) > 0 || len(st.factValues("driver_version")) > 0 {
		return
	}
	absent := len(st.draftsOf(roleSMIMissing)) > 0
	var lines []lineRef
	for _, f := range st.factValues("pci_kernel_modules") {
		for _, m := range strings.Split(f.values["pci_kernel_modules"], ",") {
			if strings.HasPrefix(strings.TrimSpace(m), "nvidia") && strings.TrimSpace(m) != "nvidiafb" {
				return // an NVIDIA module is installed for this kernel
			}
		}
		absent = true
		lines = append(lines, quote(f))
	}
	if !absent {
		return
	}
	for _, d := range nouveau {
		d.cause = "driver_missing"
		d.link = st.lib.linkOf(d.cause)
		d.title = "No NVIDIA driver is installed: the open-source nouveau driver drives the GPU"
		d.detail = "nouveau is bound to the GPU and the paste shows no NVIDIA driver installed (nvidia-smi missing, no nvidia kernel module for this kernel): nouveau is only the default driver. Install the NVIDIA driver; its packages blacklist nouveau."
		if len(lines) > 0 {
			d.ev("pci_kernel_modules", lines)
		}
		d.reasons = append(d.reasons, "explain.nouveau_without_nvidia")
	}
}

var (
	sudoRE   = regexp.MustCompile(`(?:^|[\s;&|(])sudo\s`)
	suUserRE = regexp.MustCompile(`(?:^|[\s;&|(])su\s+(?:-\s+|-l\s+)?[\w.-]+\s+-c\b`)
)

// gpuQueryRuns pairs each GPU query command in the paste with the first
// answer within four lines after it.
type gpuQueryRun struct {
	cmd, answer hit
	ok          bool
	sudo, su    bool
}

func (st *explainState) gpuQueryRuns() []gpuQueryRun {
	var out []gpuQueryRun
	for i, f := range st.facts {
		cmd := f.values["gpu_query_cmd"]
		if cmd == "" {
			continue
		}
		for _, g := range st.facts[i+1:] {
			if g.line > f.line+8 {
				break
			}
			var ok, found bool
			switch {
			case g.values["gpu_answer"] != "":
				ok, found = g.values["gpu_answer"] == "True", true
			case g.values["gpu_answer_count"] != "":
				ok, found = g.values["gpu_answer_count"] != "0", true
			case g.values["gpu_answer_none"] != "":
				ok, found = false, true
			}
			if found {
				out = append(out, gpuQueryRun{cmd: f, answer: g, ok: ok, sudo: sudoRE.MatchString(cmd), su: suUserRE.MatchString(cmd)})
				break
			}
		}
	}
	return out
}

func reasonGPUOnlyAsRoot(st *explainState) {
	runs := st.gpuQueryRuns()
	for _, good := range runs {
		if !good.ok {
			continue
		}
		for _, bad := range runs {
			if bad.ok || !(good.sudo && !bad.sudo || bad.su && !good.su) {
				continue
			}
			lines := []lineRef{quote(good.cmd), quote(good.answer), quote(bad.cmd), quote(bad.answer)}
			d := st.newDraft("explain.gpu_only_as_root", "device_node_permission", checks.SevError,
				"The GPU works as root but not as the user",
				"The same GPU query finds the GPU when run as root (sudo) and not when run as the user. The device nodes exist (root opened them); the user may not be allowed to open them (/dev/nvidia* belong to a group, often video, that the user is not in), but sudo also drops the user's environment (CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH) and usually runs another python, with another framework build.")
			d.lines = lines
			d.firstLine = firstLineOf(lines)
			d.weight = 18
			d.symptom = true
			d.noFix = true // the difference alone proves no cause; the nodes exist
			d.next = []string{
				"ls -l /dev/nvidia* ; id",
				"env | grep -e CUDA -e LD_LIBRARY_PATH ; sudo env | grep -e CUDA -e LD_LIBRARY_PATH",
				"which python python3 ; sudo which python python3",
			}
			// An environment variable the paste shows hiding the GPU
			// (CUDA_VISIBLE_DEVICES=-1) is what sudo dropped: it is
			// the cause, and the difference is its consequence.
			for _, o := range st.drafts {
				if o != d && !o.symptom && o.severity == checks.SevError && o.link == checks.LinkEnvironment {
					d.link = o.link
					d.note("The paste shows %s, which sudo does not pass on: that explains the difference.", o.cause)
					d.ev("explained_by", o.id)
					break
				}
			}
			// The GPU works as root in the same place: the container
			// runtime did give it; what the container context read as
			// a runtime fault is this one.
			for _, o := range st.drafts {
				if o.cause == "container_runtime_no_gpu" && runtimeSawHost(o) {
					o.symptom = true
					o.link = d.link
					o.reasons = append(o.reasons, "explain.gpu_only_as_root")
				}
			}
			return
		}
	}
}

func reasonModuleNotFound(st *explainState) {
	mods := st.draftsOf(roleModuleNotFound)
	if len(mods) == 0 {
		return
	}
	installed := len(st.factValues("dkms_state")) > 0 || len(st.factValues("kernel_driver")) > 0 || len(st.factValues("driver_version")) > 0
	for _, d := range st.drafts {
		if !d.is(roleModuleNotFound, roleNouveau) && showsNvidiaInstall(d) {
			installed = true
		}
	}
	noSMI := len(st.draftsOf(roleSMIMissing)) > 0
	for _, d := range mods {
		switch {
		case installed:
			d.symptom = false
			d.reasons = append(d.reasons, "explain.module_not_found")
		case noSMI:
			d.cause = "driver_missing"
			d.link = st.lib.linkOf(d.cause)
			d.symptom = false
			d.title = "No NVIDIA driver is installed: neither its kernel module nor nvidia-smi"
			d.detail = "The kernel has no nvidia module and nvidia-smi is not installed either, and nothing in the paste shows an NVIDIA driver installed: the driver is missing, not merely unbuilt for this kernel."
			d.reasons = append(d.reasons, "explain.module_not_found")
		default:
			d.noFix = true // not built, or no driver at all: the line does not say
		}
	}
}

// runningKernel is the running kernel's release as the paste shows it:
// uname -a's third field or the kernel log's 'Linux version', else a bare
// release on the line right after a `uname -r` command. A bare release
// anywhere else (ls /lib/modules, a package list) is just an installed
// kernel.
func (st *explainState) runningKernel() (string, hit, bool) {
	if v, f, ok := st.firstFact("running_kernel"); ok {
		return v, f, true
	}
	cmdLine := -10
	for _, f := range st.facts {
		if f.values["uname_cmd"] != "" {
			cmdLine = f.line
			continue
		}
		if v := f.values["kernel_release_line"]; v != "" && f.line-cmdLine >= 1 && f.line-cmdLine <= 2 {
			return v, f, true
		}
	}
	return "", hit{}, false
}

// onlyValue reports whether every line routed to d extracted value name.
func onlyValue(d *draft, name string) bool {
	return d.hits > 0 && d.valueHits[name] == d.hits
}

func reasonNotAFault(st *explainState) {
	poweredOff := len(st.factValues("dgpu_off")) > 0
	advertised := false
	for _, f := range st.factValues("k8s_gpu_count") {
		if n := f.values["k8s_gpu_count"]; n != "" && strings.Trim(n, "0") != "" {
			advertised = true
		}
	}
	for _, d := range st.drafts {
		if d.sig == nil {
			continue
		}
		var title, detail string
		switch {
		case d.is(roleFallenOffBus) && poweredOff && onlyValue(d, "rev_ff"):
			title = "lspci reads (rev ff) from a GPU that bbswitch powered off"
			detail = "bbswitch has turned the discrete GPU off, and a powered-off device answers lspci with all ones, shown as '(rev ff)': no fault. Turn it on (Bumblebee's optirun/primusrun, or echo ON | sudo tee /proc/acpi/bbswitch) before using CUDA on it."
		case d.is(roleK8sGPUCountZero) && advertised && onlyValue(d, "k8s_gpu_zero"):
			title = "A resource asks for nvidia.com/gpu: 0 while the paste shows GPUs advertised"
			detail = "Another 'nvidia.com/gpu' line in the paste is not 0, so the device plugin advertises GPUs; this 0 is a pod's limit or request: that pod is given no GPU. Request nvidia.com/gpu: 1 (or more) in its limits if it needs one."
		default:
			continue
		}
		d.severity = checks.SevInfo
		d.cause = "healthy"
		d.symptom = false
		d.noFix = true
		d.next = nil
		d.title = title
		d.detail = detail
		d.reasons = append(d.reasons, "explain.not_a_fault")
	}
}

// reasonError35ContainerWithoutGPUs: a driver version shown decides error
// 35 only where the failing program could reach that driver; a container
// started without GPU access gets no libcuda, and the runtime's error 35
// there is the driver it does not see.
func reasonError35ContainerWithoutGPUs(st *explainState) {
	if len(st.draftsOf(roleContainerWithoutGPUs)) == 0 {
		return
	}
	for _, d := range st.draftsOf(roleError35) {
		if c, _ := d.evidence["context"].(string); d.symptom || c != "driver_version_shown" {
			continue
		}
		d.symptom, d.noFix = true, true
		d.note("The paste also shows the container started without GPU access: the driver version shown is the host's, which this container never got, and CUDA returns error 35 where it finds no driver at all.")
		d.reasons = append(d.reasons, "explain.error35_container_without_gpus")
	}
}

// reasonPipPinNewerMinor: a pin conflict with a newer wheel of the same
// major version is no proof the framework loads a library it cannot use.
func reasonPipPinNewerMinor(st *explainState) {
	for _, d := range st.draftsOf(rolePipPinConflict) {
		if d.symptom {
			continue
		}
		spec := strings.TrimSpace(d.values["spec"])
		if !strings.HasPrefix(spec, "==") {
			continue
		}
		want, have := parseVer(strings.TrimPrefix(spec, "==")), parseVer(d.values["installed_version"])
		if len(want) < 2 || len(have) < 2 || want.major() != have.major() || have.cmp(want) < 0 {
			continue
		}
		d.symptom, d.noFix = true, true
		d.note("The installed wheel is a newer release of the same major version (%s for the pinned %s): NVIDIA's libraries keep their soname within a major version and a newer minor release runs programs built against an older one, so this pin conflict alone does not show a library the framework cannot use; the framework's own load or version error would.", have, want)
		d.reasons = append(d.reasons, "explain.pip_pin_newer_minor")
	}
}
