package rules

import (
	"fmt"
	"sort"
	"strings"
)

// Roles. A reasoner that treats some signatures specially names them by a
// role they declare in their JSON ("roles": ["no_cuda_device"]), never by
// their ID: a reasoner testing an ID stops working, silently, the day the
// ID is renamed, and a reader of the JSON cannot see that anything
// depends on it. The roles are listed here, each with what it means and
// which reasoner reads it; the library refuses a role it does not know, a
// role on the wrong kind of signature and a one-signature role declared
// twice (validate), and TestEveryRoleDeclared that a role no shipped
// signature declares (its reasoner would never fire).

// sigRole is a role a signature may declare.
type sigRole struct {
	name string
	// kind is the signature kind that may declare it.
	kind string
	// one: at most one signature declares it (a reasoner adds hits or
	// facts under that signature).
	one bool
	doc string
}

// sigRoles are the roles, by name.
var sigRoles = map[string]*sigRole{}

func newRole(name, kind string, one bool, doc string) *sigRole {
	if sigRoles[name] != nil {
		panic("rules: role declared twice: " + name)
	}
	r := &sigRole{name: name, kind: kind, one: one, doc: doc}
	sigRoles[name] = r
	return r
}

// is reports whether s declares one of roles.
func (s *Signature) is(roles ...*sigRole) bool {
	if s == nil {
		return false
	}
	for _, r := range s.roles {
		for _, x := range roles {
			if r == x {
				return true
			}
		}
	}
	return false
}

// is reports whether d comes from a signature declaring one of roles.
func (d *draft) is(roles ...*sigRole) bool { return d.sig.is(roles...) }

// withRole returns the signature that declares a one-signature role, nil
// when none does.
func (l *library) withRole(r *sigRole) *Signature {
	for _, s := range l.sigs {
		if s.is(r) {
			return s
		}
	}
	return nil
}

// checkRoles resolves s.Roles; it returns what is wrong with them.
func checkRoles(s *Signature) []string {
	var errs []string
	s.roles = nil
	for _, name := range s.Roles {
		r := sigRoles[name]
		switch {
		case r == nil:
			errs = append(errs, fmt.Sprintf("unknown role %q (the roles are listed in rules/explain_roles.go: %s)", name, roleNames()))
		case r.kind != s.Kind:
			errs = append(errs, fmt.Sprintf("role %q is for %s signatures, this one is a %s", name, r.kind, s.Kind))
		case s.is(r):
			errs = append(errs, fmt.Sprintf("role %q declared twice", name))
		default:
			s.roles = append(s.roles, r)
		}
	}
	return errs
}

func roleNames() string {
	names := make([]string, 0, len(sigRoles))
	for n := range sigRoles {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// The roles.
var (
	// Containers (explain_stack.go).
	roleRuntimeSeesHost = newRole("runtime_sees_host", KindFinding, false,
		`A container-stack message that is the runtime's view of the host driver (the Kubernetes device plugin finding no GPU to advertise): a host-level cause in the paste explains it (explain.container_host_cause).`)
	roleRuntimeStage = newRole("runtime_stage", KindFinding, false,
		`nvidia-container-cli's error, with the failing stage as value 'stage': an 'initialization error' is the runtime's view of the host driver (explain.container_host_cause).`)
	roleGPULostInContainer = newRole("gpu_lost_in_container", KindFinding, false,
		`A line the container context reads as container_runtime_no_gpu that, with the GPU request shown, is the GPU lost after the container started (NVML's Unknown Error after a systemd daemon-reload): undecided, no fix (explain.container_gpus_passed).`)
	roleContainerWithoutGPUs = newRole("container_without_gpus", KindFinding, false,
		`A container started without GPU access: the host's driver version shown does not decide a CUDA error 35 inside it (explain.error35_container_without_gpus).`)
	roleK8sGPUCountZero = newRole("k8s_gpu_count_zero", KindFinding, false,
		`'nvidia.com/gpu: 0' read as the device plugin advertising no GPU, value 'k8s_gpu_zero': no fault when another line shows GPUs advertised (explain.not_a_fault).`)

	// No GPU seen.
	roleNoCUDADevice = newRole("no_cuda_device", KindFinding, false,
		`CUDA itself found no device (cuInit's CUDA_ERROR_NO_DEVICE, PyTorch's 'no CUDA GPUs are available'): a Slurm job given no GPU, MIG without an instance, and the no-device finding other reasoners compare against (noDeviceDraft).`)
	roleTFNoGPU = newRole("tf_no_gpu", KindFinding, false,
		`TensorFlow ended up with no GPU (no GPU device, an empty list): a Slurm job given no GPU, MIG without an instance; explain.no_gpu_listed adds nothing where one is reported.`)
	roleTFNoGPUDevice = newRole("tf_no_gpu_device", KindFinding, true,
		`The finding explain.no_gpu_listed reports on a device list that shows only the CPU.`)
	roleSMINoDevices = newRole("smi_no_devices", KindFinding, false,
		`nvidia-smi found no device: a Slurm job given no GPU; undecided, the kernel's own line decides (explain_fit.go).`)
	roleCUDAQueryFalse = newRole("cuda_query_false", KindFinding, false,
		`A framework's bare False to 'is CUDA available': a Slurm job given no GPU; with a CUDA build proven, not a CPU-only build.`)
	roleTorchCUDAUnavailable = newRole("torch_cuda_unavailable", KindFinding, false,
		`PyTorch saying CUDA is unavailable: with a CUDA build proven, not a CPU-only build.`)
	roleSMIMissing = newRole("smi_missing", KindFinding, false,
		`nvidia-smi (or NVML's library) not installed: a Slurm job given no GPU; with nouveau bound, or no nvidia module, no NVIDIA driver is installed; an undecided error 35 beside it is no driver, not an old one (explain.runtime35_without_driver).`)
	roleInvalidDeviceOrdinal = newRole("invalid_device_ordinal", KindFinding, false,
		`CUDA's invalid device ordinal, an index past the GPUs the program sees: compared with the GPUs and MIG instances the paste shows (explain.gpu_index, explain.mig).`)

	// Kernel and driver.
	roleNotAnInstall = newRole("not_an_nvidia_install", KindFinding, false,
		`A kernel, nvidia-smi or NVML line that does not show an NVIDIA driver installed (nouveau's, missing device nodes, nvidia-smi missing, PCIe errors); every other kernel.*, smi.* and nvml.* finding does (showsNvidiaInstall).`)
	roleNouveau = newRole("nouveau_line", KindFinding, false,
		`A line of nouveau's own: it shows no NVIDIA module installed (explain.module_not_found).`)
	roleNouveauBound = newRole("nouveau_bound", KindFinding, false,
		`nouveau drives the GPU: with no NVIDIA driver shown, the cause is the missing driver (explain.nouveau_without_nvidia).`)
	roleModuleNotFound = newRole("nvidia_module_not_found", KindFinding, false,
		`modprobe finding no nvidia module for this kernel: decided by whether the paste shows a driver installed (explain.module_not_found).`)
	roleFallenOffBus = newRole("fallen_off_bus", KindFinding, false,
		`The GPU fallen off the bus, value 'rev_ff' for lspci's '(rev ff)': no fault when bbswitch powered the GPU off (explain.not_a_fault).`)
	roleXid = newRole("xid", KindFinding, false,
		`An NVRM Xid line, value 'xid' the code: read by the code (explain.xid).`)

	// CUDA runtime and libraries.
	roleError35 = newRole("cuda_error_35", KindFinding, false,
		`CUDA's 'driver version is insufficient' (error 35), value 'driver_state': undecided where the driver shown runs the build's CUDA or the container got no driver, no driver where the paste shows none (explain.runtime35_without_driver).`)
	roleCUDAErrorNumber = newRole("cuda_error_number", KindFinding, false,
		`A CUDA error printed as a number in an application's own format, value 'code': its 35 is CUDA's error 35 (explain.runtime35_without_driver).`)
	roleDlopenFailed = newRole("dlopen_failed", KindFinding, false,
		`A CUDA library that failed to load, value 'library': compared with the versions of it the paste shows (explain.dlopen_versions).`)
	roleLibSighting = newRole("lib_sighting", KindFact, false,
		`A CUDA library's version seen loaded or listed (values seen_lib, seen_version, seen_cuda, seen_cudart, seen_cuda_toolkit): read against a library that failed to load (libSightings).`)
	roleTFCudartNotice = newRole("tf_cudart_notice", KindFinding, false,
		`TensorFlow's notice that libcudart did not load ('Ignore above cudart dlerror if you do not have a GPU set up'): the fix for the CUDA libraries reads it.`)
	roleTFDlopenSummary = newRole("tf_dlopen_summary", KindFinding, false,
		`TensorFlow's 'Cannot dlopen some GPU libraries' summary: the CUDA libraries' pip fix applies to it whatever its label.`)
	roleComponentOutdated = newRole("cuda_component_outdated", KindFinding, false,
		`A CUDA component older than the framework needs (JAX's): JAX's build, minimum and installed versions are quoted with it.`)
	roleCudnnHandle = newRole("cudnn_handle_failure", KindFinding, false,
		`cuDNN or cuBLAS failing to start (not initialized, no convolution algorithm, a handle not allocated): compared with the cuDNN loaded and the one the build wants (explain.cudnn_loaded_vs_build).`)

	// Memory.
	roleOOM = newRole("out_of_memory", KindFinding, false,
		`The framework's own out-of-memory error, with its figures: read against the GPU's memory and the processes holding it (explain.gpu_memory_held).`)
	roleHandleAlloc = newRole("handle_alloc_failed", KindFinding, false,
		`A library handle that could not be allocated (cuBLAS, cuDNN), which is memory running out: read against the processes holding the GPU's memory (explain.gpu_memory_held).`)

	// Compute capability.
	roleCCOtherFramework = newRole("cc_other_framework", KindFinding, false,
		`A compute-capability failure worded by another framework than TensorFlow: TensorFlow's known failures on a GPU say nothing about it (explain.blackwell).`)

	// Warnings a program runs on past (explain_benign.go).
	roleSurvivableWarning = newRole("survivable_warning", KindFinding, false,
		`A framework's warning that an optional part did not load, after which the program goes on without it (xFormers' kernels built for another PyTorch): harmless where the paste shows the GPU in use after it and nothing failing, not where the installed PyTorch is a CPU build (value 'have_local' 'cpu') (explain.survived_warning).`)

	// Python packages.
	rolePipPinConflict = newRole("pip_pin_conflict", KindFinding, false,
		`pip's dependency conflict with a pin, values 'spec' and 'installed_version': a newer release of the same major version is undecided (explain.pip_pin_newer_minor).`)

	// Broad families (broad.json).
	roleContradictedByUse = newRole("contradicted_by_gpu_use", KindFinding, false,
		`A broad family that says the GPU cannot work (no device, no or too old a driver, CUDA failing to start, a CPU-only build, a library that does not load): a paste that shows the GPU in use drops it. Running out of memory, ECC errors, heat, an index past the GPUs, a full disk happen on a GPU that works and do not declare it.`)

	// Facts.
	roleCPUDeviceListed = newRole("cpu_device_listed", KindFact, false,
		`A device list that shows the CPU: with no GPU listed beside it, explain.no_gpu_listed reports no GPU.`)
	roleSMIGPURow = newRole("smi_gpu_row", KindFact, false,
		`nvidia-smi's table row naming a GPU (values gpu, gpu_name, ecc): starts a GPU in smiGPUs.`)
	roleSMIUsageRow = newRole("smi_usage_row", KindFact, false,
		`nvidia-smi's table row of a GPU's memory, utilisation and compute mode (smiGPUs).`)
	roleTFVersionFact = newRole("tf_version_fact", KindFact, true,
		`The fact TensorFlow's version is recorded under (value tf_version): explain.tf_version_answer adds a version printed on the line after the question.`)
	roleCVDFact = newRole("cuda_visible_devices_fact", KindFact, true,
		`The fact CUDA_VISIBLE_DEVICES is recorded under: explain.cvd_echo adds the value an echo printed.`)
)
