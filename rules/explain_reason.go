package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// Reasoning across lines: each reasoner is a value (listed by `doctor
// rules`) that reads the facts and findings of one paste and compares them.

const (
	phaseHits     = 1 // before signatures' cases and contexts are applied
	phaseFindings = 2 // after
)

type reasoner struct {
	ID     string
	Title  string
	Link   checks.Link
	Causes []string
	Doc    string
	Phase  int
	Run    func(*explainState)
}

var reasoners = []*reasoner{
	{
		ID: "explain.no_gpu_listed", Title: "A device list with CPUs and no GPU", Link: checks.LinkRuntime, Phase: phaseHits,
		Causes: []string{"tf_cpu_only_build_installed", "tf_windows_native_gpu_unsupported"},
		Doc: `When the paste shows a device query (list_physical_devices, device_lib.list_local_devices)
and its answer lists CPU devices but no GPU, the framework registered no GPU: the
same finding as tf.no_gpu_device, with the CPU lines as evidence. Not when it lists an
XLA_GPU device (TensorFlow 2.1-2.3): that build has CUDA and its driver answers.`,
		Run: reasonNoGPUListed,
	},
	{
		ID: "explain.tf_version_answer", Title: "TensorFlow's version from a query and its answer", Link: checks.LinkPython, Phase: phaseHits,
		Causes: []string{"tf_windows_native_gpu_unsupported", "driver_too_old_for_cuda"},
		Doc: `Reads TensorFlow's version where it is printed apart from its name: a bare version
line within three lines after print(tf.__version__), or the 'Version:' line right
after 'Name: tensorflow' in pip show. The version feeds the comparisons below.`,
		Run: reasonTFVersionAnswer,
	},
	{
		ID: "explain.cvd_echo", Title: "CUDA_VISIBLE_DEVICES from a command and its answer", Link: checks.LinkEnvironment, Phase: phaseHits,
		Causes: []string{"cuda_visible_devices_hides_gpu"},
		Doc: `Reads CUDA_VISIBLE_DEVICES where the shell prints it apart from its name: a bare
'-1' on the line right after echo $CUDA_VISIBLE_DEVICES or printenv CUDA_VISIBLE_DEVICES
is the variable's value, for explain.cuda_visible_devices.`,
		Run: reasonCVDEcho,
	},
	{
		ID: "explain.dlopen_version_mismatch", Title: "A requested library is installed in another major version", Link: checks.LinkLibraries, Phase: phaseFindings,
		Causes: []string{"cudnn_version_mismatch", "cuda_version_mismatch_tf_build"},
		Doc: `A library that failed to load (libcudart.so.10.1, libcudnn.so.8) is compared with the
versions of the same library the paste shows elsewhere (file listings, ldconfig -p,
pip and conda lists, /usr/local/cuda-X.Y folders). When only other major versions
are present, the build needs another version than the one installed: a cuDNN or
CUDA version mismatch rather than a missing library.`,
		Run: reasonDlopenVersions,
	},
	{
		ID: "explain.cudnn_loaded_vs_build", Title: "The cuDNN that loaded against the one the TensorFlow build needs", Link: checks.LinkLibraries, Phase: phaseFindings,
		Causes: []string{"cudnn_version_mismatch"},
		Doc: `When cuDNN fails in a paste (DNN library not found, cuDNN could not initialise,
no convolution algorithm) and the paste shows both the cuDNN that loaded ('Loaded cuDNN
version 8004': 8.0.4; 9-series numbers read 90100 = 9.1.0) and TensorFlow's version, the
loaded cuDNN is compared with the one that release was built with (tested build
configurations): another major version, or an older minor, is a cuDNN version mismatch.`,
		Run: reasonCudnnLoadedVsBuild,
	},
	{
		ID: "explain.driver_too_old", Title: "The driver's CUDA version against what the build needs", Link: checks.LinkDriver, Phase: phaseFindings,
		Causes: []string{"driver_too_old_for_cuda"},
		Doc: `The newest CUDA version the driver runs (nvidia-smi's header, or the driver version
looked up in NVIDIA's table) is compared with the CUDA version the build needs
(PyTorch's 'CUDA used to build', TensorFlow's version looked up in the tested
build configurations, the nvidia-cuda-runtime wheel). CUDA 11 and later run on any
driver of the same major version (minor-version compatibility); before CUDA 11 the
driver must support the exact version.`,
		Run: reasonDriverCUDA,
	},
	{
		ID: "explain.runtime35_without_driver", Title: "CUDA's error 35 where the paste shows no user-space driver", Link: checks.LinkDriver, Phase: phaseFindings,
		Causes: []string{"driver_missing", "container_runtime_no_gpu", "wsl_libcuda_not_found"},
		Doc: `The CUDA runtime returns cudaErrorInsufficientDriver (35, 'CUDA driver version is
insufficient for CUDA runtime version') both for a driver older than itself and for no
driver at all (no libcuda to load; PyTorch tells them apart with cudaDriverGetVersion,
which reports 0 for the latter). Where the same paste shows the NVIDIA user-space driver
absent ('nvidia-smi: command not found', NVML's library not found), there is no old
driver to update: the error takes that finding's reading (no driver; in a container,
no GPU access; under WSL, the Windows driver's libcuda), still undecided.`,
		Run: reasonRuntime35WithoutDriver,
	},
	{
		ID: "explain.driver_versions_differ", Title: "libcuda/NVML and the kernel module report different versions", Link: checks.LinkDriver, Phase: phaseFindings,
		Causes: []string{"driver_library_mismatch"},
		Doc: `TensorFlow's cuda_diagnostics ('libcuda reported version is', 'kernel reported version
is'), nvidia-smi's 'NVML library version' and /proc/driver/nvidia/version are compared:
different driver releases mean the user-space driver was upgraded without reloading
the kernel module.`,
		Run: reasonDriverVersions,
	},
	{
		ID: "explain.gpu_memory_held", Title: "Out of memory: who holds the GPU's memory", Link: checks.LinkEnvironment, Phase: phaseFindings,
		Causes: []string{"gpu_out_of_memory_other_process", "gpu_out_of_memory_own_job"},
		Doc: `An out-of-memory failure is tied to another process, decided, when the paste shows the
memory taken by others: TensorFlow's 'Free memory' far below 'Total memory' when it
opened the device, PyTorch 2.x's 'Process N has X memory in use' for another process.
PyTorch 1.x's arithmetic (total, free and what this process holds leaving gigabytes
over, more than this process holds) and nvidia-smi rows with most memory used name
another process only as the likelier reading (undecided): what lies outside the
framework's allocator may be this process's own CUDA context and libraries, and
nvidia-smi counts the job itself while it runs. Where this process holds more than
what lies outside it, the job not fitting stays the likelier reading (undecided). A
figure for this process larger than the card (NVML's unset 2^64) is no figure. CuPy's
'allocated so far' under 1 GiB (its pool, the request included, after freeing its
cache) names memory held outside the pool as the likelier reading; its 'limit set to'
is the program's own limit refusing. It is the job's own, decided, when PyTorch's figures show this process holding
nearly all the card (PyTorch 1.0-1.3's 'A already allocated; F free; C cached)' holds
A + C; in a container PyTorch names its own process 'Process N' too: the row that
covers what PyTorch allocated), or TensorFlow found nearly all the memory free when it
started. Otherwise the bare message stays a symptom.`,
		Run: reasonMemoryHeld,
	},
	{
		ID: "explain.gpu_memory_orphaned", Title: "GPU memory in use by no listed process", Link: checks.LinkEnvironment, Phase: phaseFindings,
		Causes: []string{"gpu_out_of_memory_other_process"},
		Doc: `nvidia-smi shows an idle GPU (0% utilisation) with gigabytes of memory in use that its
process table does not account for ('No running processes found', or rows adding up to
far less): a process nvidia-smi cannot see holds it (another container or PID namespace,
or a killed program whose CUDA context was never released). Not raised when the paste
shows the GPU in use.`,
		Run: reasonMemoryOrphaned,
	},
	{
		ID: "explain.compute_mode", Title: "nvidia-smi's compute mode column", Link: checks.LinkEnvironment, Phase: phaseFindings,
		Causes: []string{"compute_mode_prohibited"},
		Doc: `nvidia-smi's 'Compute M.' column: Prohibited forbids every CUDA context; E. Process
lets one process use the GPU, so a busy GPU (memory used, utilisation) in that mode
refuses a new program.`,
		Run: reasonComputeMode,
	},
	{
		ID: "explain.cuda_visible_devices", Title: "CUDA_VISIBLE_DEVICES in the paste hides every GPU", Link: checks.LinkEnvironment, Phase: phaseFindings,
		Causes: []string{"cuda_visible_devices_hides_gpu", "mig_misconfigured", "scheduler_no_gpu_allocated"},
		Doc: `Slurm's NoDevFiles, or a value hiding every GPU in a Slurm job that asked for
none, is the scheduler having allocated no GPU (scheduler_no_gpu_allocated, no
unset). Otherwise the last CUDA_VISIBLE_DEVICES assignment in the paste is applied as CUDA does (an
empty value, -1 or an unknown index hides every GPU; indexes are checked against
nvidia-smi's GPU rows when the paste has them). A MIG device UUID that CUDA cannot
find names a MIG instance that does not exist.`,
		Run: reasonVisibleDevices,
	},
	{
		ID: "explain.xid", Title: "Xid codes looked up in NVIDIA's table", Link: checks.LinkHardware, Phase: phaseFindings,
		Causes: []string{"gpu_hardware_xid_error", "gpu_ecc_errors"},
		Doc: `Each Xid code is looked up in the knowledge base (NVIDIA's Xid table): hardware and
firmware Xids are errors, ECC Xids (48, 63, 64, 92, 94, 95) are ECC findings, and
application Xids (13, 31, 43, 45) are warnings about the program.`,
		Run: reasonXid,
	},
	{
		ID: "explain.blackwell", Title: "A Blackwell GPU on a TensorFlow release known to fail on it", Link: checks.LinkPython, Phase: phaseFindings,
		Causes: []string{"unsupported_compute_capability"},
		Doc: `A compute capability of 10.0 or newer (Blackwell: B200, RTX 50xx) in a paste about
missing kernels or PTX JIT, with a TensorFlow release the knowledge base lists as
failing on it (2.16 to 2.21: CUDA_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_HANDLE; the
paste's version, else the newest release): an error, not a slow first start, with
what is known to work today and what is not verified.`,
		Run: reasonBlackwell,
	},
	{
		ID: "explain.ecc_count", Title: "nvidia-smi's uncorrected ECC count", Link: checks.LinkHardware, Phase: phaseFindings,
		Causes: []string{"gpu_ecc_errors"},
		Doc:    `A non-zero 'Volatile Uncorr. ECC' cell in nvidia-smi's table: the GPU returned corrupt memory since the driver loaded.`,
		Run:    reasonECCCount,
	},
	{
		ID: "explain.windows_tf", Title: "TensorFlow after 2.10 on native Windows", Link: checks.LinkPython, Phase: phaseFindings,
		Causes: []string{"tf_windows_native_gpu_unsupported"},
		Doc: `A TensorFlow version of 2.11 or later in a paste from native Windows (drive-letter
paths, python.exe, .dll names; not WSL): TensorFlow dropped GPU support on native
Windows after 2.10 (pip.md).`,
		Run: reasonWindowsTF,
	},
	{
		ID: "explain.mig", Title: "MIG enabled and CUDA sees no device", Link: checks.LinkEnvironment, Phase: phaseFindings,
		Causes: []string{"mig_misconfigured", "gpu_index_out_of_range"},
		Doc:    `With MIG instances listed (nvidia-smi -L), 'invalid device ordinal' is an index past the one MIG device a CUDA process enumerates (gpu_index_out_of_range, decided: select the instance with CUDA_VISIBLE_DEVICES=MIG-<UUID>, use device 0). Otherwise: nvidia-smi shows MIG mode Enabled while CUDA finds no device (or the program asks for a device index CUDA does not have, 'invalid device ordinal'): MIG is on but no instance exists or is visible to the program (CUDA enumerates one MIG instance per process).`,
		Run:    reasonMIG,
	},
	{
		ID: "explain.gpu_index", Title: "The GPU index a program asks for against the GPUs it has", Link: checks.LinkRuntime, Phase: phaseFindings,
		Causes: []string{"gpu_index_out_of_range"},
		Doc: `'invalid device ordinal' is decided when the paste shows the index the program selects
(cuda:1, set_device(1), device_ids=[0, 1], --gpu 1) and how many GPUs it has (the
entries of the last CUDA_VISIBLE_DEVICES assignment, else nvidia-smi's GPUs): an index
at or past that count does not exist. Runs after explain.cuda_visible_devices and
explain.mig, which name their own causes.`,
		Run: reasonGPUIndex,
	},

	{
		ID: "explain.python_env", Title: "The notebook's interpreter against where the framework is installed", Link: checks.LinkPython, Phase: phaseFindings,
		Causes: []string{"jupyter_kernel_wrong_env"},
		Doc: `In a notebook paste, the interpreter the kernel runs (sys.executable, or which/where
python answered within three lines) and the site-packages folder pip names for the
framework ('Requirement already satisfied: tensorflow in <folder>', pip show's
Location) belong to different environments (<env>/bin/python vs
<env>/lib/pythonX.Y/site-packages; per-user ~/.local folders are read by every
interpreter and do not count): the kernel is not the environment the framework
was installed in.`,
		Run: reasonPythonEnv,
	},

	{
		ID: "explain.notebook_false", Title: "A notebook's False against a True from outside it", Link: checks.LinkPython, Phase: phaseFindings,
		Causes: []string{"jupyter_kernel_wrong_env"},
		Doc: `In a notebook paste, the notebook's own answer to the CUDA query ('Out[1]: False')
next to a True from outside the notebook (a terminal's python -c, a script's
'torch.cuda.is_available(): True'): the same machine runs CUDA for one interpreter
and not for the kernel, so a CPU-only build is not the likeliest reading; the
kernel most likely runs another environment (undecided: the kernel's
sys.executable decides).`,
		Run: reasonNotebookFalse,
	},
	{
		ID: "explain.torch_cuda_build", Title: "CUDA unavailable in a PyTorch that is a CUDA build", Link: checks.LinkRuntime, Phase: phaseFindings,
		Causes: []string{"driver_missing", "wsl_libcuda_not_found", "container_runtime_no_gpu", "driver_too_old_for_cuda", "cuda_visible_devices_hides_gpu"},
		Doc: `torch.cuda.is_available() False (or collect_env's 'Is CUDA available: False') is read as a
CPU-only wheel, its commonest cause, unless the paste shows the wheel is a CUDA build
(torch 2.1.0+cu121, torch.version.cuda 12.1, 'CUDA used to build PyTorch: 12.1'):
then the program could not reach a driver (in WSL: libcuda from the Windows driver;
in a container: no GPU access). When the paste shows a working driver (nvidia-smi's
header) it is not missing: a driver of an older CUDA major version than the build's, else
(minor-version compatibility runs a newer minor) the program's environment
(CUDA_VISIBLE_DEVICES, device permissions). It stays a symptom: the log does not decide.`,
		Run: reasonTorchCUDABuild,
	},
	{
		ID: "explain.multiple_tf", Title: "Several TensorFlow distributions installed", Link: checks.LinkPython, Phase: phaseFindings,
		Causes: []string{"multiple_tf_installs_conflict"},
		Doc: `A package list with more than one TensorFlow distribution (tensorflow, tensorflow-gpu,
tensorflow-cpu, tf-nightly; tensorflow-intel is a dependency of tensorflow on Windows
and does not count): they install into the same package folder and overwrite each
other's files.`,
		Run: reasonMultipleTF,
	},
	{
		ID: "explain.secure_boot_state", Title: "Secure Boot on and the module not loaded", Link: checks.LinkKernel, Phase: phaseFindings,
		Causes: []string{"secure_boot_unsigned_module"},
		Doc: `When the paste shows Secure Boot enabled (mokutil --sb-state) and the NVIDIA module not
loaded (nvidia-smi cannot reach the driver, the installer or modprobe failed) with no
more specific reason, the unsigned module being refused is the likely cause, as the
live check concludes: named as the most likely cause, undecided (a signed module loads
under Secure Boot, and one not built for the running kernel fails the same way); the
kernel log's 'Key was rejected by service' decides it.`,
		Run: reasonSecureBoot,
	},
	{
		ID: "explain.versions", Title: "Versions attached to version findings", Link: checks.LinkPython, Phase: phaseFindings,
		Causes: []string{"python_version_unsupported", "cudnn_version_mismatch"},
		Doc: `Adds the versions the paste shows to the findings they concern: the Python version
and the range the TensorFlow release supports to a pip/conda 'no matching
distribution', JAX's built-against, minimum and installed cuDNN to an outdated-cuDNN
finding.`,
		Run: reasonVersions,
	},
}

// ver is a dotted version.
type ver []int

func parseVer(s string) ver {
	s = strings.TrimSpace(s)
	var out ver
	for _, p := range strings.Split(s, ".") {
		n := 0
		digits := 0
		for digits < len(p) && p[digits] >= '0' && p[digits] <= '9' {
			digits++
		}
		if digits == 0 {
			break
		}
		n, err := strconv.Atoi(p[:digits])
		if err != nil {
			break
		}
		out = append(out, n)
		if digits < len(p) {
			break
		}
	}
	return out
}

// cmp compares two versions component by component (missing = 0).
func (a ver) cmp(b ver) int {
	return knowledge.CompareVersions(knowledge.VersionNumber(a), knowledge.VersionNumber(b))
}

func (a ver) major() int {
	if len(a) == 0 {
		return -1
	}
	return a[0]
}

func (a ver) String() string {
	parts := make([]string, len(a))
	for i, n := range a {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}

// The compatibility numbers explain compares versions with come from the
// one compatibility table, package knowledge (data/compat.json and, for
// builds before TensorFlow 2.4 and CUDA 11, data/compat_older.json).

// tfRow is the tested build configuration of a TensorFlow version.
type tfRow struct{ TF, CUDA, Python, Mark string }

// maxCUDAForDriver is the newest CUDA whose minimum Linux driver is at or
// below the given driver version (NVIDIA's table).
func (l *library) maxCUDAForDriver(driver string) (string, bool) {
	d := parseVer(driver)
	if len(d) == 0 {
		return "", false
	}
	best := ver(nil)
	for _, r := range knowledge.GADrivers() {
		if parseVer(r.Linux).cmp(d) <= 0 {
			if c := parseVer(r.CUDA); best == nil || c.cmp(best) > 0 {
				best = c
			}
		}
	}
	if best == nil {
		return "", false
	}
	return best.String(), true
}

// tfRow finds the tested build configuration of a TensorFlow version.
func (l *library) tfRow(tf string) (tfRow, bool) {
	b, ok := knowledge.TFBuildAnyFor(tf)
	if !ok {
		return tfRow{}, false
	}
	return tfRow{TF: majorMinorOf(b.TF), CUDA: b.CUDA, Python: b.Python, Mark: string(b.Mark)}, true
}

// newestTF is the newest tested TensorFlow build.
func (l *library) newestTF() tfRow {
	b := knowledge.TFBuilds()[0]
	return tfRow{TF: majorMinorOf(b.TF), CUDA: b.CUDA, Python: b.Python, Mark: string(b.Mark)}
}

func majorMinorOf(v string) string {
	if p := parseVer(v); len(p) >= 2 {
		return p[:2].String()
	}
	return v
}

// familyFloor is the minimum driver of a CUDA major version (>= 11).
func (l *library) familyFloor(major int) (string, bool) {
	mc, ok := knowledge.MinorCompatFor(major)
	if !ok || mc.LinuxFloor == "" {
		return "", false
	}
	return mc.LinuxFloor, true
}

// minDriverFor is the minimum driver of an exact CUDA version.
func (l *library) minDriverFor(cuda string) (string, bool) {
	c := parseVer(cuda)
	for _, r := range knowledge.GADrivers() {
		rv := parseVer(r.CUDA)
		if len(c) >= 2 && len(rv) >= 2 && rv[0] == c[0] && rv[1] == c[1] {
			return r.Linux, true
		}
	}
	return "", false
}

// --- reasoners ---

func reasonNoGPUListed(st *explainState) {
	if !st.has("gpu_query") || len(st.success) > 0 {
		return
	}
	if st.has("tf_xla_gpu_listed") {
		// An XLA_GPU device (TensorFlow 2.1-2.3) is a CUDA build whose
		// driver answers: no CPU-only build (broad.tf_xla_gpu_without_gpu).
		return
	}
	sig := st.lib.withRole(roleTFNoGPUDevice)
	if sig == nil || len(st.draftsOf(roleTFNoGPU)) > 0 || len(st.draftsOf(roleTFNoGPUDevice)) > 0 {
		return // already reported
	}
	var cpus []hit
	for _, f := range st.facts {
		if f.sig.is(roleCPUDeviceListed) {
			cpus = append(cpus, f)
		}
	}
	if len(cpus) == 0 {
		return
	}
	for _, f := range cpus {
		st.addHit(hit{sig: sig, line: f.line, text: f.text, values: map[string]string{}})
	}
	for _, d := range st.draftsOf(roleTFNoGPUDevice) {
		d.reasons = append(d.reasons, "explain.no_gpu_listed")
	}
}

var cudaDirRE = regexp.MustCompile(`/cuda-(\d+\.\d+)(?:/|:|$)`)

// libSightings collects the versions of lib the paste shows, outside the
// lines where loading it failed.
func (st *explainState) libSightings(lib string, failLines map[int]bool) (majors map[int]bool, minors map[string]bool, refs []lineRef) {
	majors = map[int]bool{}
	minors = map[string]bool{}
	add := func(f hit, v string) {
		pv := parseVer(v)
		m := pv.major()
		if m < 0 {
			return
		}
		majors[m] = true
		if len(pv) >= 2 {
			minors[pv[:2].String()] = true
		}
		if len(refs) < maxQuotedLines {
			refs = append(refs, quote(f))
		}
	}
	for _, f := range st.facts {
		if !f.sig.is(roleLibSighting) || failLines[f.line] {
			continue
		}
		low := strings.ToLower(f.text)
		if strings.Contains(low, "/man/") || strings.Contains(low, "/doc/") {
			continue
		}
		if sl := f.values["seen_lib"]; sl != "" && shortLib(strings.ToLower(sl)) == lib {
			add(f, f.values["seen_version"])
		}
		if lib == "cudart" || lib == "cublas" || lib == "nvrtc" {
			// The CUDA toolkit's version is cudart's, nvrtc's and (from 10.1 on)
			// cublas's major version.
			if v := f.values["seen_cuda_toolkit"]; v != "" {
				add(f, v)
			}
			if v := f.values["seen_cudart"]; v != "" {
				add(f, v)
			}
		}
	}
	return majors, minors, refs
}

func reasonDlopenVersions(st *explainState) {
	drafts := st.draftsOf(roleDlopenFailed)
	failLines := map[int]bool{}
	for _, d := range drafts {
		for _, l := range d.lines {
			failLines[l.Line] = true
		}
	}
	for _, d := range drafts {
		// "Could not load dynamic library 'libcusolver.so.11'; dlerror:
		// libnvJitLink.so.12: cannot open shared object file": the library
		// is there, a library it needs is not.
		if dep := strings.TrimSpace(strings.SplitN(d.values["dlerror"], ":", 2)[0]); dep != "" && strings.Contains(dep, ".so") && dep != d.values["library"] {
			d.note("%s itself was found, but it needs %s, which could not be loaded.", d.values["library"], dep)
			d.ev("missing_dependency", dep)
		}
	}
	for _, d := range drafts {
		lib := d.values["lib"]
		want := parseVer(d.values["lib_version"])
		switch lib {
		case "cudart", "cublas", "cufft", "curand", "cusolver", "cusparse", "cudnn", "nvrtc":
		default:
			continue
		}
		if want.major() < 0 || d.benign {
			continue
		}
		majors, minors, refs := st.libSightings(lib, failLines)
		if lib == "nvrtc" {
			// NVRTC's soname names the minor in CUDA 11.0 and 11.1; from
			// 11.2 on libnvrtc.so.11.2 serves the rest of CUDA 11.
			for m := range minors {
				if v := parseVer(m); v.major() == 11 && len(v) >= 2 && v[1] > 2 {
					delete(minors, m)
					minors["11.2"] = true
				}
			}
		}
		// A soname that names a CUDA minor version (up to CUDA 10 every
		// toolkit library's, NVRTC's in CUDA 11) is missing for that
		// exact CUDA: none installed, or another CUDA installed. With no
		// installed version in the paste the line does not say which.
		minorSoname := lib != "cudnn" && len(want) >= 2 && (want.major() <= 10 || (lib == "nvrtc" && want.major() == 11))
		if minorSoname && len(majors) == 0 && len(d.multi["ld_library_path"]) == 0 && !d.symptom {
			d.symptom = true
			d.noFix = true
			d.note("%s names CUDA %s: the paste does not show which CUDA is installed. No CUDA of that version reads the same as a CUDA of another version installed (the program was built for another CUDA than the one here); nvcc --version, ls -d /usr/local/cuda* or ldconfig -p tell which.", d.values["library"], want[:2])
			d.ev("installed_cuda", "not shown")
			if lib == "nvrtc" {
				// NVRTC is loaded at run time by what compiles kernels
				// then (CuPy, PyKeOps, PyTorch's fusers), built for one
				// CUDA 11 minor; no framework ships it under its own
				// label. Its soname missing on a machine that runs CUDA
				// code is most often a CUDA of another version there
				// (the training side of the corpus: every such thread),
				// so that is the likelier reading; still undecided.
				d.cause = "cuda_version_mismatch_tf_build"
				d.link = st.lib.linkOf(d.cause)
				d.reasons = append(d.reasons, "explain.dlopen_version_mismatch")
			}
			continue
		}
		if lib == "cudart" || lib == "cublas" || lib == "nvrtc" {
			// The failing line's LD_LIBRARY_PATH shows the CUDA toolkit the
			// loader was pointed at (/usr/local/cuda-11.8/lib64).
			for _, p := range d.multi["ld_library_path"] {
				for _, m := range cudaDirRE.FindAllStringSubmatch(p, -1) {
					if v := parseVer(m[1]).major(); v >= 0 {
						majors[v] = true
					}
				}
			}
		}
		// Up to CUDA 10 the toolkit's sonames carry the minor version
		// (libcudart.so.10.0, libcufft.so.10.0, libcublas.so.9.0): a
		// libcudart.so.10.1 does not satisfy a build that asks for 10.0.
		// From CUDA 11 one soname serves the whole major (libcudart.so.11.0).
		byMinor := minorSoname && len(minors) > 0
		if len(majors) == 0 || (majors[want.major()] && (!byMinor || minors[want[:2].String()])) {
			continue
		}
		var found []string
		if byMinor && majors[want.major()] {
			for m := range minors {
				found = append(found, m)
			}
		} else {
			for m := range majors {
				found = append(found, strconv.Itoa(m))
			}
		}
		sort.Strings(found)
		if lib == "cudnn" {
			d.cause = "cudnn_version_mismatch"
		} else {
			d.cause = "cuda_version_mismatch_tf_build"
		}
		d.link = st.lib.linkOf(d.cause)
		d.weight += 5
		if byMinor && majors[want.major()] {
			d.title = fmt.Sprintf("The build needs %s but only %s version %s is installed", d.values["library"], lib, strings.Join(found, ", "))
			d.detail = fmt.Sprintf("The program asks for %s (CUDA %s: up to CUDA 10 each minor version has its own library name); the paste shows %s only in version %s. "+
				"The framework was built for another CUDA version than the one installed.", d.values["library"], want[:2], lib, strings.Join(found, ", "))
		} else {
			d.title = fmt.Sprintf("The build needs %s but only %s major version %s is installed", d.values["library"], lib, strings.Join(found, ", "))
			d.detail = fmt.Sprintf("The program asks for %s (major version %d); the paste shows %s only in major version %s. "+
				"The framework was built for another CUDA/cuDNN version than the one installed.", d.values["library"], want.major(), lib, strings.Join(found, ", "))
		}
		d.ev("installed_majors", found)
		d.ev("installed_lines", refs)
		d.reasons = append(d.reasons, "explain.dlopen_version_mismatch")
	}
}

// requiredCUDA finds the CUDA version the paste's build needs and why.
func (st *explainState) requiredCUDA() (v ver, why string, at []lineRef) {
	if s, f, ok := st.firstFact("required_cuda"); ok {
		return parseVer(s), strings.TrimSpace(f.text), []lineRef{quote(f)}
	}
	if s, f, ok := st.firstFact("tf_version"); ok {
		if r, ok := st.lib.tfRow(s); ok {
			return parseVer(r.CUDA), fmt.Sprintf("TensorFlow %s is built for CUDA %s (tested build configurations, %s)", s, r.CUDA, r.Mark), []lineRef{quote(f)}
		}
	}
	// The environment's CUDA runtime (numba -s, conda's cudatoolkit): what
	// numba, CuPy and conda-installed frameworks load.
	if s, f, ok := st.firstFact("env_cuda"); ok {
		return parseVer(s), "the environment's CUDA runtime is " + s, []lineRef{quote(f)}
	}
	if s, f, ok := st.firstFact("env_cuda_int"); ok {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			c := fmt.Sprintf("%d.%d", n/1000, (n%1000)/10)
			return parseVer(c), "the environment's CUDA runtime is " + c, []lineRef{quote(f)}
		}
	}
	return nil, "", nil
}

// driverCUDA finds the newest CUDA the paste's driver runs.
// driverCUDA finds the newest CUDA the paste's driver runs. below is set
// when the driver is older than every row of NVIDIA's table: v is then the
// oldest CUDA in the table, and the driver runs only CUDA older than that.
func (st *explainState) driverCUDA() (v ver, why string, at []lineRef, below bool) {
	if s, f, ok := st.firstFact("driver_cuda"); ok && s != "N/A" {
		return parseVer(s), "nvidia-smi: CUDA Version " + s, []lineRef{quote(f)}, false
	}
	for _, key := range []string{"driver_version", "kernel_driver", "libcuda_version"} {
		if s, f, ok := st.firstFact(key); ok {
			if c, ok := st.lib.maxCUDAForDriver(s); ok {
				return parseVer(c), fmt.Sprintf("driver %s runs CUDA up to %s (NVIDIA's table)", s, c), []lineRef{quote(f)}, false
			}
			if c, min, ok := oldestGADriver(); ok && len(parseVer(s)) >= 2 && parseVer(s).cmp(parseVer(min)) < 0 {
				return parseVer(c), fmt.Sprintf("driver %s is older than %s, the minimum of CUDA %s, the oldest release in NVIDIA's table", s, min, c), []lineRef{quote(f)}, true
			}
		}
	}
	if s, f, ok := st.firstFact("driver_cuda_int"); ok {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			c := fmt.Sprintf("%d.%d", n/1000, (n%1000)/10)
			return parseVer(c), "the driver reports CUDA " + c, []lineRef{quote(f)}, false
		}
	}
	for _, d := range st.drafts {
		if n, err := strconv.Atoi(d.values["driver_cuda_int"]); err == nil && n > 0 {
			c := fmt.Sprintf("%d.%d", n/1000, (n%1000)/10)
			return parseVer(c), "the driver reports CUDA " + c, d.lines, false
		}
	}
	return nil, "", nil, false
}

// oldestGADriver is the oldest CUDA release in NVIDIA's driver table and
// its minimum Linux driver.
func oldestGADriver() (cuda, driver string, ok bool) {
	var best ver
	for _, r := range knowledge.GADrivers() {
		if c := parseVer(r.CUDA); len(c) >= 2 && (best == nil || c.cmp(best) < 0) {
			best, cuda, driver, ok = c, r.CUDA, r.Linux, true
		}
	}
	return cuda, driver, ok
}

func reasonDriverCUDA(st *explainState) {
	need, needWhy, needAt := st.requiredCUDA()
	have, haveWhy, haveAt, below := st.driverCUDA()
	if len(need) < 2 || len(have) < 2 {
		return
	}
	tooOld := false
	switch {
	case below:
		tooOld = need.cmp(have[:2]) >= 0
	case need.major() >= 11:
		tooOld = have.major() < need.major()
	default:
		tooOld = have.cmp(need[:2]) < 0
	}
	if !tooOld {
		// The driver shown runs the CUDA the build needs: the runtime's
		// error 35, decided by the driver's version alone, is not this
		// driver being too old (the runtime did not reach it).
		for _, d := range st.drafts {
			if !d.is(roleError35) || d.symptom || !runtimeError35[strings.ToLower(d.values["driver_state"])] {
				continue
			}
			d.symptom, d.noFix = true, true
			d.title = "CUDA says the driver is older than its runtime, but the driver shown runs this CUDA"
			d.note("The driver shown runs CUDA up to %s, enough for the CUDA %s the build needs: the runtime that failed did not reach this driver (a container started without GPU access, a stub or older libcuda first on the loader path, or nvidia-smi from another machine).", have, need)
			d.ev("driver_cuda", have.String())
			d.ev("required_cuda", need.String())
			d.reasons = append(d.reasons, "explain.driver_too_old")
		}
		return
	}
	minDriver := ""
	if need.major() >= 11 {
		minDriver, _ = st.lib.familyFloor(need.major())
	} else {
		minDriver, _ = st.lib.minDriverFor(need.String())
	}
	ev := func(d *draft) {
		d.ev("driver_cuda", have.String())
		d.ev("required_cuda", need.String())
		if minDriver != "" {
			d.ev("min_driver", minDriver)
		}
		d.ev("driver_lines", haveAt)
		d.ev("requirement_lines", needAt)
		d.reasons = append(d.reasons, "explain.driver_too_old")
	}
	if ds := st.draftsWithCause("driver_too_old_for_cuda"); len(ds) > 0 {
		ev(ds[0])
		return
	}
	detail := fmt.Sprintf("%s, but the build needs CUDA %s (%s).", haveWhy, need, needWhy)
	title := fmt.Sprintf("The driver runs CUDA up to %s; the build needs CUDA %s", have, need)
	switch {
	case below:
		title = fmt.Sprintf("The driver is older than any CUDA %s and later needs; the build needs CUDA %s", have, need)
		if minDriver != "" {
			detail += fmt.Sprintf(" Install driver %s or newer.", minDriver)
		}
	case minDriver != "":
		detail += fmt.Sprintf(" Install driver %s or newer, or a build made for CUDA %s.", minDriver, have)
	}
	d := st.newDraft("explain.driver_too_old", "driver_too_old_for_cuda", checks.SevError, title, detail)
	d.weight = 15
	d.firstLine = firstLineOf(haveAt, needAt)
	ev(d)
}

// runtimeError35 are cuda.driver_insufficient's driver_state values for
// the CUDA runtime's bare error 35 (cudaErrorInsufficientDriver), which it
// also returns where it finds no driver at all.
var runtimeError35 = map[string]bool{
	"cuda driver version is insufficient": true, "cudaerrorinsufficientdriver": true,
	"cudart init failure: 35": true, "insufficient cuda driver": true,
	"35": true, // a bare number: "CUDA error 35", "Unknown CUresult: 35"
}

func firstLineOf(groups ...[]lineRef) int {
	n := 0
	for _, g := range groups {
		for _, l := range g {
			if n == 0 || l.Line < n {
				n = l.Line
			}
		}
	}
	return n
}

// reasonRuntime35WithoutDriver: an undecided error 35 next to a paste
// that shows no NVIDIA user-space driver is no driver, not an old one.
func reasonRuntime35WithoutDriver(st *explainState) {
	var absent *draft
	for _, d := range st.draftsOf(roleSMIMissing) {
		absent = d
		break
	}
	if absent == nil {
		return
	}
	// An application's own format of the same number (roleCUDAErrorNumber:
	// Paddle 1.x's 'error code : 35') is the same error.
	for _, d := range append(st.draftsOf(roleError35), st.draftsOf(roleCUDAErrorNumber)...) {
		if !d.symptom || !(runtimeError35[strings.ToLower(d.values["driver_state"])] || d.values["code"] == "35") || d.cause != "driver_too_old_for_cuda" {
			continue
		}
		d.cause = absent.cause
		d.link = absent.link
		d.noFix = true
		d.title = "CUDA says the driver is older than its runtime, and the paste shows no NVIDIA driver library at all"
		d.note("The same paste shows the NVIDIA user-space driver absent (line %d, quoted in driver_absent_lines): the runtime's error 35 is its answer when it finds no driver to load, not a driver to update. Where lspci lists an NVIDIA GPU, install its driver (in a container, start the container with GPU access); where it lists none, this machine has no NVIDIA GPU.", absent.firstLine)
		d.ev("driver_absent_lines", firstN(absent.lines, 1))
		d.reasons = append(d.reasons, "explain.runtime35_without_driver")
	}
}

// sameRelease compares two driver versions on their first two components
// (352.63 vs 352.63.0).
func sameRelease(a, b string) bool {
	x, y := parseVer(a), parseVer(b)
	if len(x) < 2 || len(y) < 2 {
		return true
	}
	return x[0] == y[0] && x[1] == y[1]
}

func reasonDriverVersions(st *explainState) {
	kernel, kf, okK := st.firstFact("kernel_driver")
	if !okK {
		return
	}
	for _, key := range []string{"libcuda_version", "nvml_version"} {
		user, uf, ok := st.firstFact(key)
		if !ok || sameRelease(user, kernel) {
			continue
		}
		lines := []lineRef{quote(kf), quote(uf)}
		if ds := st.draftsWithCause("driver_library_mismatch"); len(ds) > 0 {
			ds[0].ev("kernel_module_version", kernel)
			ds[0].ev("library_version", user)
			ds[0].reasons = append(ds[0].reasons, "explain.driver_versions_differ")
			return
		}
		d := st.newDraft("explain.driver_versions_differ", "driver_library_mismatch", checks.SevError,
			fmt.Sprintf("The kernel module is %s but the driver library is %s", kernel, user),
			"The user-space driver and the loaded kernel module come from different driver releases: the driver was upgraded and the old module is still loaded.")
		d.weight = 18
		d.lines = lines
		d.firstLine = firstLineOf(lines)
		d.ev("kernel_module_version", kernel)
		d.ev("library_version", user)
		return
	}
}

// bytesOf parses "190.31MiB", "7.92 GiB", "190.31M" into bytes.
func bytesOf(s string) float64 {
	s = strings.TrimSpace(strings.ReplaceAll(s, ",", ""))
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0
	}
	unit := strings.ToUpper(strings.TrimSpace(s[i:]))
	switch {
	case strings.HasPrefix(unit, "K"):
		n *= 1 << 10
	case strings.HasPrefix(unit, "M"):
		n *= 1 << 20
	case strings.HasPrefix(unit, "G"):
		n *= 1 << 30
	case strings.HasPrefix(unit, "T"):
		n *= 1 << 40
	}
	return n
}

func gibString(b float64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", b/(1<<30))
}

func reasonMemoryHeld(st *explainState) {
	var targets []*draft
	for _, d := range st.drafts {
		if d.is(roleOOM, roleHandleAlloc) {
			targets = append(targets, d)
		}
	}
	if len(targets) == 0 {
		return
	}
	var why string
	var lines []lineRef
	// proof: what the paste shows names memory another process holds
	// (PyTorch 2.x's list of the other processes, TensorFlow's free memory
	// when it opened the device). Without it, memory outside this job's
	// allocator (total - free - what the framework holds, or nvidia-smi's
	// memory column, which counts the job itself while it runs) may be
	// this process's own CUDA context, kernels and libraries: another
	// process is then the likelier reading, not a fact.
	proof := false
	// TensorFlow 1.x and PyTorch report free and total memory.
	var total, free float64
	var tf, ff hit
	for _, f := range st.facts {
		if v := f.values["total_mem"]; v != "" && total == 0 {
			total, tf = bytesOf(v), f
		}
		if v := f.values["free_mem"]; v != "" && free == 0 {
			free, ff = bytesOf(v), f
		}
	}
	// PyTorch's message also says what this process holds (reserved by
	// PyTorch, or all of this process's memory): what is neither free nor
	// held by this process is held by others. When this process holds
	// nearly everything, the program itself does not fit, whatever free
	// says.
	own, ownLine, ownOK := st.torchOwnMemory(tf.line)
	torchLine := strings.Contains(tf.text, "total capacity") || strings.Contains(tf.text, "total capacty")
	// NVML's answer for this process is not always a size: PyTorch 2.x
	// under WSL or Windows has printed 'this process has 17179869184.00
	// GiB memory in use' (2^64 bytes, an unset counter). What this process
	// holds cannot exceed the card.
	if ownOK && total > 0 && own > total {
		own, ownLine, ownOK = 0, hit{}, false
	}
	// PyTorch 2.x lists every process on the GPU (from NVML) on the same
	// line, and calls its own 'this process' only when NVML's PID is its
	// own; in a container (another PID namespace) its own row reads
	// 'Process N has X memory in use' like the others. A fact records one
	// match per line, so the rows are read from the line itself.
	procs := map[string]float64{}
	var procOrder []string
	var procLines []lineRef
	addProc := func(pid string, mem float64, h hit) {
		if _, seen := procs[pid]; seen {
			return
		}
		procs[pid] = mem
		procOrder = append(procOrder, pid)
		procLines = append(procLines, quote(h))
	}
	if torchLine {
		for _, m := range torchProcessRE.FindAllStringSubmatch(tf.text, -1) {
			if total == 0 || bytesOf(m[2]) <= total {
				addProc(m[1], bytesOf(m[2]), tf)
			}
		}
	}
	for _, f := range st.factValues("other_pid") {
		if total == 0 || bytesOf(f.values["other_mem"]) <= total {
			addProc(f.values["other_pid"], bytesOf(f.values["other_mem"]), f)
		}
	}
	// 'Of the allocated memory A is allocated by PyTorch, and R is
	// reserved by PyTorch but unallocated': PyTorch's allocator holds
	// A + R of the card.
	var alloc float64
	if m := torchAllocatedRE.FindStringSubmatch(tf.text); torchLine && m != nil {
		alloc = bytesOf(m[1])
		if r := torchUnallocatedRE.FindStringSubmatch(tf.text); r != nil {
			alloc += bytesOf(r[1])
		}
	}
	// No row is 'this process': the smallest row that covers what PyTorch
	// says it allocated, and is not more than twice that, is this process.
	selfPid := ""
	if !ownOK && alloc > 0 {
		for _, pid := range procOrder {
			if m := procs[pid]; m >= alloc && alloc >= m/2 && (selfPid == "" || m < own) {
				own, ownLine, ownOK, selfPid = m, tf, true, pid
			}
		}
	}
	// With no process rows at all (NVML unavailable), what PyTorch
	// allocated is the least this process holds: enough to call the job
	// its own when it covers nearly the whole card, never to blame others.
	allocOnly := false
	if !ownOK && alloc > 0 && len(procs) == 0 && total > 0 && total-free-alloc < 1<<30 {
		own, ownLine, ownOK, allocOnly = alloc, tf, true, true
	}
	if ownOK && total > 0 {
		others := total - free - own
		if others >= 1<<30 && others >= total/5 && !allocOnly {
			why = fmt.Sprintf("of the GPU's %s, %s was free and this process held %s, so other processes held about %s", gibString(total), gibString(free), gibString(own), gibString(others))
			// PyTorch 2.x names them (from NVML): that is the proof.
			var named float64
			for _, pid := range procOrder {
				if pid != selfPid {
					named += procs[pid]
				}
			}
			proof = named >= 1<<30 && (ownOK || selfPid != "")
			if !proof && others <= own {
				// This process holds more of the card than everything
				// outside it: the job is the card's main user, and what
				// lies outside its allocator (this process's own CUDA
				// context and libraries, the desktop, another job) is the
				// smaller part. The job not fitting stays the likelier
				// reading; it is not settled.
				st.memorySplitUndecided(targets, total, free, own, others, tf, ownLine)
				return
			}
			lines = append(lines, quote(tf))
			if ownLine.line != tf.line {
				lines = append(lines, quote(ownLine))
			}
		} else {
			for _, d := range targets {
				d.ev("torch_memory_held_by_this_process", gibString(own))
				if selfPid != "" {
					d.ev("torch_process_seen_as", "Process "+selfPid)
				}
				d.reasons = append(d.reasons, "explain.gpu_memory_held")
				if !d.is(roleOOM) {
					d.note("PyTorch's own figures leave little for other processes (%s of %s held by this process): the model or batch does not fit this GPU; reduce the batch size or the model.", gibString(own), gibString(total))
					// Not another process: freeing the GPU (the cause's fix)
					// does not help; the detail says what does.
					d.noFix = true
					d.title = "The GPU ran out of memory: this process holds nearly all of it (the model or batch does not fit)"
					continue
				}
				// The job's own figures settle it: no other process holds
				// the memory this job needs.
				d.cause = "gpu_out_of_memory_own_job"
				d.link = st.lib.linkOf(d.cause)
				d.symptom = false
				d.title = "The GPU ran out of memory: this job needs more than the GPU has"
				held := fmt.Sprintf("this process held %s of the GPU's %s (%s free)", gibString(own), gibString(total), gibString(free))
				switch {
				case selfPid != "":
					held = fmt.Sprintf("process %s, which holds what PyTorch allocated and so is this process seen from another PID namespace, held %s of the GPU's %s (%s free)", selfPid, gibString(own), gibString(total), gibString(free))
				case allocOnly:
					held = fmt.Sprintf("PyTorch itself had allocated %s of the GPU's %s (%s free)", gibString(own), gibString(total), gibString(free))
				}
				d.detail = "PyTorch's own figures: " + held + ", so no other process holds the memory this job needs: the job itself does not fit this GPU. Reduce the batch size (or the sequence length, image size or model), or use a GPU with more memory. If much memory is 'reserved by PyTorch but unallocated', PyTorch's message suggests PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation."
				ml := []lineRef{quote(tf)}
				if ownLine.line != tf.line {
					ml = append(ml, quote(ownLine))
				}
				d.ev("memory_lines", ml)
			}
			return // PyTorch's own account outweighs the weaker signs below
		}
	}
	// TensorFlow 1.x logs the free memory when the device starts; the
	// free figure in PyTorch's message is what is left at the failure.
	if why == "" && total > 0 && free > 0 && free < total/2 && !ownOK && !torchLine {
		why = fmt.Sprintf("only %s of %s was free when the program started", gibString(free), gibString(total))
		proof = true
		lines = append(lines, quote(tf))
		if ff.line != tf.line {
			lines = append(lines, quote(ff))
		}
	}
	// PyTorch names the other processes.
	if why == "" {
		var held float64
		var pids []string
		for _, pid := range procOrder {
			if pid == selfPid {
				continue
			}
			held += procs[pid]
			pids = append(pids, pid)
		}
		if held >= 1<<30 {
			why = fmt.Sprintf("process %s held %s", strings.Join(pids, ", "), gibString(held))
			// PyTorch lists every process NVML sees on the GPU and calls
			// its own 'this process' only when it finds its PID there; in
			// a container (another PID namespace) its own row is a
			// 'Process N' too. The rows prove other processes only when
			// this one is identified (its own line, or the row covering
			// what PyTorch allocated).
			proof = ownOK || selfPid != ""
			lines = append(lines, firstN(procLines, 3)...)
		}
	}
	// CuPy says what its pool held when the GPU refused: little (under
	// 1 GiB, the request included) means the memory was held outside the
	// pool. A pool limit the program set refuses by itself: that is no
	// sign of anyone else.
	if l, _, limited := st.firstFact("cupy_limit"); limited {
		for _, d := range targets {
			d.note("CuPy's own pool limit (%s, MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT) refused the allocation, whatever the GPU had free: raise the limit or make the job smaller.", gibString(bytesOf(l)))
		}
	} else if why == "" {
		if s, f, ok := st.firstFact("cupy_so_far"); ok {
			if held := bytesOf(s); held > 0 && held < 1<<30 {
				why = fmt.Sprintf("CuPy's memory pool held only %s, the failed request included, when the GPU refused it", gibString(held))
				lines = append(lines, quote(f))
			}
		}
	}
	// nvidia-smi rows with most memory used.
	if why == "" {
		for _, f := range st.factValues("mem_used") {
			u, t := bytesOf(f.values["mem_used"]+"MiB"), bytesOf(f.values["mem_total"]+"MiB")
			if t > 0 && u > t/2 {
				why = fmt.Sprintf("nvidia-smi shows %s of %s in use", gibString(u), gibString(t))
				lines = append(lines, quote(f))
				// nvidia-smi ran before the program, which then could
				// take only a small part of the GPU (TensorFlow 2's
				// 'Created device ... with N MB memory' is what it found
				// free at start): the memory was held before this
				// program allocated anything.
				for _, s := range st.success {
					if mb := s.values["created_mb"]; mb != "" && s.line > f.line {
						if c := bytesOf(mb + "MiB"); c < t/2 {
							why += fmt.Sprintf(" before the program started, which then could take only %s", gibString(c))
							lines = append(lines, quote(s))
							proof = true
							break
						}
					}
				}
				break
			}
		}
	}
	// TensorFlow 2 logs how much memory it could take for the device.
	if why == "" {
		var t float64
		for _, f := range st.factValues("mem_total") {
			t = bytesOf(f.values["mem_total"] + "MiB")
			break
		}
		if t == 0 {
			t = total
		}
		for _, s := range st.success {
			if mb := s.values["created_mb"]; mb != "" && t > 0 {
				if c := bytesOf(mb + "MiB"); c < t/2 {
					why = fmt.Sprintf("TensorFlow could take only %s of the GPU's %s", gibString(c), gibString(t))
					lines = append(lines, quote(s))
					break
				}
			}
		}
	}
	if why == "" {
		// TensorFlow 1.x logs the device's free memory when it starts:
		// nearly all of it free, and TensorFlow's own allocator then runs
		// out, is the job itself not fitting.
		if total > 0 && free >= total*9/10 && !strings.Contains(tf.text, "total capacity") {
			for _, d := range targets {
				if !d.is(roleOOM) || frameworkOf(d) != FrameworkTensorFlow {
					continue
				}
				d.cause = "gpu_out_of_memory_own_job"
				d.link = st.lib.linkOf(d.cause)
				d.symptom = false
				d.title = "The GPU ran out of memory: this job needs more than the GPU has"
				d.detail = fmt.Sprintf("TensorFlow found %s of the GPU's %s free when it started, so no other process held the memory: the job itself does not fit this GPU. Reduce the batch size (or the input size or model), or use a GPU with more memory.", gibString(free), gibString(total))
				ml := []lineRef{quote(tf)}
				if ff.line != tf.line {
					ml = append(ml, quote(ff))
				}
				d.ev("memory_lines", ml)
				d.reasons = append(d.reasons, "explain.gpu_memory_held")
			}
		}
		return
	}
	// A multi-process job (ctx.distributed_job) whose 'other processes'
	// each hold about what this one holds: most likely its own ranks,
	// all put on this GPU (no torch.cuda.set_device(local_rank)), not
	// another job. Freeing the GPU of them stops the job itself.
	ranks := proof && ownOK && st.has("distributed_job") && siblingRows(procs, procOrder, selfPid, own)
	if ranks {
		proof = false
	}
	for _, d := range targets {
		d.cause = "gpu_out_of_memory_other_process"
		d.link = st.lib.linkOf(d.cause)
		d.weight += 5
		d.ev("memory_lines", lines)
		d.reasons = append(d.reasons, "explain.gpu_memory_held")
		if ranks {
			d.symptom, d.noFix = true, true
			d.title = "The GPU ran out of memory: most likely this job's own processes share one GPU"
			d.detail = "Memory outside this process was in use: " + why + ". The paste runs a multi-process job, and each other process holds about what this one holds: most likely they are this job's own ranks, all placed on the same GPU. Each rank must use its own GPU: call torch.cuda.set_device(local_rank) (or pass device_ids=[local_rank]) before any CUDA work, and launch no more processes than GPUs. nvidia-smi's process list shows whether the processes are this job's."
			d.ev("distributed_lines", firstN(st.contexts["distributed_job"], 1))
			continue
		}
		if !proof {
			// The likelier reading, asked to be confirmed: the signature's
			// next step (nvidia-smi's process list) decides.
			d.symptom, d.noFix = true, true
			d.title = "The GPU ran out of memory: most likely another process holds part of it"
			d.detail = "Memory outside what this program's framework holds was in use: " + why + ". That is most often another process (a second job, a forgotten notebook kernel, the desktop); it can also be this process's own CUDA context, kernels and libraries. nvidia-smi's process list (run while nothing of yours is running) shows who holds it; if nobody does, the job itself does not fit: reduce the batch size or the model."
			continue
		}
		d.symptom = false
		d.noFix = false
		d.title = "The GPU ran out of memory: another process holds it"
		d.detail = "Memory was already taken before this program allocated: " + why + ". Stop the other process or use a free GPU."
	}
}

// siblingRows reports whether every process PyTorch lists beside this
// one (self excepted) holds about what this one holds (within a factor
// of 1.5), the way a job's ranks do; at least one such row.
func siblingRows(procs map[string]float64, order []string, self string, own float64) bool {
	n := 0
	for _, pid := range order {
		if pid == self {
			continue
		}
		if m := procs[pid]; m*3 < own*2 || m*2 > own*3 {
			return false
		}
		n++
	}
	return n > 0
}

// smiGPUs pairs nvidia-smi's GPU rows with their usage rows.
type smiGPU struct {
	index       int
	name        string
	ecc         string
	memUsed     float64
	memTotal    float64
	util        int
	computeMode string
	lines       []lineRef
}

func (st *explainState) smiGPUs() []*smiGPU {
	var out []*smiGPU
	var cur *smiGPU
	for _, f := range st.facts {
		switch {
		case f.sig.is(roleSMIGPURow):
			idx, _ := strconv.Atoi(f.values["gpu"])
			cur = &smiGPU{index: idx, name: f.values["gpu_name"], ecc: f.values["ecc"], util: -1, lines: []lineRef{quote(f)}}
			out = append(out, cur)
		case f.sig.is(roleSMIUsageRow):
			if cur == nil || cur.computeMode != "" {
				cur = &smiGPU{index: len(out), util: -1}
				out = append(out, cur)
			}
			cur.memUsed = bytesOf(f.values["mem_used"] + "MiB")
			cur.memTotal = bytesOf(f.values["mem_total"] + "MiB")
			if u, err := strconv.Atoi(f.values["util"]); err == nil {
				cur.util = u
			}
			cur.computeMode = f.values["compute_mode"]
			cur.lines = append(cur.lines, quote(f))
		}
	}
	return out
}

func reasonComputeMode(st *explainState) {
	gpus := st.smiGPUs()
	var prohibited, busy []*smiGPU
	exclusive := 0
	for _, g := range gpus {
		switch g.computeMode {
		case "Prohibited":
			prohibited = append(prohibited, g)
		case "E. Process", "E. Thread":
			exclusive++
			if g.util > 0 || (g.memTotal > 0 && g.memUsed > g.memTotal/20) {
				busy = append(busy, g)
			}
		}
	}
	describe := func(gs []*smiGPU) ([]string, []lineRef) {
		var ids []string
		var lines []lineRef
		for _, g := range gs {
			s := fmt.Sprintf("GPU %d", g.index)
			if g.memTotal > 0 {
				s += fmt.Sprintf(" (%s of %s used, %d%% busy)", gibString(g.memUsed), gibString(g.memTotal), max(g.util, 0))
			}
			ids = append(ids, s)
			lines = append(lines, g.lines...)
		}
		return ids, lines
	}
	existing := st.draftsWithCause("compute_mode_prohibited")
	attach := func(d *draft, ids []string, lines []lineRef) {
		d.ev("gpus", ids)
		d.ev("nvidia_smi_lines", firstN(lines, maxQuotedLines))
		d.reasons = append(d.reasons, "explain.compute_mode")
	}
	if len(prohibited) > 0 {
		ids, lines := describe(prohibited)
		if len(existing) > 0 {
			attach(existing[0], ids, lines)
			return
		}
		d := st.newDraft("explain.compute_mode", "compute_mode_prohibited", checks.SevError,
			"Compute mode Prohibited: no program may use "+strings.Join(ids, ", "),
			"The administrator set the GPU's compute mode to Prohibited, which refuses every CUDA context.")
		d.lines = firstN(lines, maxQuotedLines)
		d.firstLine = firstLineOf(lines)
		attach(d, ids, lines)
		return
	}
	if len(busy) == 0 {
		return
	}
	ids, lines := describe(busy)
	if len(existing) > 0 {
		attach(existing[0], ids, lines)
		return
	}
	title := "Exclusive Process compute mode, and the GPU is taken: " + strings.Join(ids, ", ")
	if len(busy) == exclusive && exclusive == len(gpus) && len(gpus) > 1 {
		title = "Every GPU is in Exclusive Process mode and already in use"
	}
	d := st.newDraft("explain.compute_mode", "compute_mode_prohibited", checks.SevWarning, title,
		"In Exclusive Process mode a GPU accepts one process; these already run work (memory used, utilisation), so a new program gets 'all CUDA-capable devices are busy or unavailable'. Use a free GPU or the one your job was allocated.")
	d.lines = firstN(lines, maxQuotedLines)
	d.firstLine = firstLineOf(lines)
	// No program in the paste was refused ('busy or unavailable' would be
	// a finding of that cause, attached above): Exclusive Process is the
	// default on many clusters and cloud instances, and the process the
	// table shows is often the user's own job. The mode explains a refusal
	// only where one shows: undecided, no fix.
	d.symptom, d.noFix = true, true
	d.note("No program in the paste was refused the GPU ('all CUDA-capable devices are busy or unavailable'): the process using it may be your own job, and Exclusive Process mode is the default on many clusters.")
	d.next = []string{"nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv   # whose process holds the GPU", "the error the program that failed printed"}
	attach(d, ids, lines)
}

// noDeviceDraft is the finding that CUDA saw no GPU at all, if the paste
// has one.
func (st *explainState) noDeviceDraft() *draft {
	for _, d := range st.drafts {
		if d.is(roleNoCUDADevice) {
			return d
		}
	}
	return nil
}

func reasonVisibleDevices(st *explainState) {
	vals := st.factValues("cvd")
	if len(vals) == 0 {
		return
	}
	last := vals[len(vals)-1]
	raw := strings.Trim(last.values["cvd"], `"'`)
	// doctor's own ask_for echoes the variable in brackets, so that an
	// empty value shows: CUDA_VISIBLE_DEVICES=[0] is the value 0.
	if len(raw) >= 2 && raw[0] == '[' && raw[len(raw)-1] == ']' {
		raw = strings.Trim(strings.TrimSpace(raw[1:len(raw)-1]), `"'`)
	}
	var gpus []host.GPU
	for _, g := range st.smiGPUs() {
		gpus = append(gpus, host.GPU{Index: g.index})
	}
	if len(gpus) == 0 {
		// nvidia-smi -L's list counts the GPUs as well as its table.
		seen := map[int]bool{}
		for _, f := range st.factValues("listed_gpu") {
			if i, err := strconv.Atoi(f.values["listed_gpu"]); err == nil && !seen[i] {
				seen[i] = true
				gpus = append(gpus, host.GPU{Index: i})
			}
		}
	}
	low := strings.ToLower(raw)
	if strings.Contains(low, "gpu-") || strings.Contains(low, "mig-") {
		gpus = nil // nvidia-smi's table shows no UUIDs to check them against
	}
	v := checks.ParseVisibleDevices(raw, true, gpus)
	if len(v.Visible) > 0 {
		// The indexes may be fine, but when CUDA then finds no device
		// at all and no nvidia-smi table shows those indexes exist,
		// the variable names GPUs this machine does not have (a
		// script's hard-coded CUDA_VISIBLE_DEVICES=3 on a one-GPU box).
		// Index 0 is every machine's first GPU: with no GPU found at all
		// it names nothing the machine lacks, so the variable is not
		// the cause.
		if len(gpus) == 0 && raw != "" && !allZero(v.Visible) {
			if nd := st.noDeviceDraft(); nd != nil && strings.HasPrefix(low, "mig-") {
				// A MIG UUID CUDA cannot find: that instance does not
				// exist (destroyed or recreated with a new UUID, MIG
				// disabled, another node).
				cvdNamesMissing(st, last, raw, nd, "mig_misconfigured",
					"CUDA_VISIBLE_DEVICES="+raw+" names a MIG device CUDA did not find",
					"The paste sets CUDA_VISIBLE_DEVICES to a MIG device UUID and CUDA then found no GPU: no MIG instance with that UUID exists here (instances that are destroyed and created again get new UUIDs; with MIG disabled there are none). nvidia-smi -L lists the MIG devices that exist.")
			} else if nd != nil {
				d := cvdNamesMissing(st, last, raw, nd, "cuda_visible_devices_hides_gpu",
					"CUDA_VISIBLE_DEVICES="+raw+" names a GPU CUDA did not find",
					fmt.Sprintf("The paste sets CUDA_VISIBLE_DEVICES to %s and CUDA then found no GPU: the variable most likely names GPUs this machine does not have (indexes count from 0). Unset it or use an index that nvidia-smi lists.", raw))
				// With no GPU found at all and no count of the machine's
				// GPUs, CUDA seeing none whatever the variable says (no
				// driver, a container without GPUs, no NVIDIA GPU) reads
				// the same: the likelier reading, not a fact. nvidia-smi's
				// GPU list decides (the branch below, with gpus known).
				d.symptom = true
				d.next = []string{"nvidia-smi -L   # which GPU indexes exist", "echo $CUDA_VISIBLE_DEVICES"}
			}
		} else if nd := st.noDeviceDraft(); nd != nil && len(gpus) == 0 && nd.symptom && nd.cause == "cuda_visible_devices_hides_gpu" {
			// The variable shown leaves a GPU visible, and no nvidia-smi
			// table shows one: the hidden GPU, the no-device error's
			// commonest reading, is ruled out; the driver seeing no GPU
			// (cudaErrorNoDevice's own words) is the likelier one, still
			// undecided (lspci and nvidia-smi decide).
			nd.cause = "no_nvidia_gpu"
			nd.link = st.lib.linkOf(nd.cause)
			nd.note("CUDA_VISIBLE_DEVICES=%s leaves a GPU visible, so it is not what hides the GPU: the driver reported none to this program (no NVIDIA GPU on this machine or node, a container without GPUs, or the kernel module not loaded; lspci and nvidia-smi tell which).", raw)
			nd.ev("cuda_visible_devices", raw)
		}
		return
	}
	shown := raw
	if shown == "" {
		shown = `""`
	}
	// Slurm's gres/gpu plugin sets CUDA_VISIBLE_DEVICES=NoDevFiles for a
	// job it allocated no GPU (src/plugins/gres/gpu/gres_gpu.c,
	// job_set_env: the branch with no GPU bitmap and no GPU count), and a
	// Slurm job that asked for no GPU runs with none visible: the
	// variable is the scheduler's answer, not a setting to unset (unset,
	// the program either still finds no GPU under the job's cgroup device
	// constraint or uses GPUs allocated to other jobs).
	if nodev := strings.EqualFold(raw, "NoDevFiles"); nodev || st.has("slurm_job") && !st.has("slurm_gpu_request") {
		d := st.newDraft("explain.cuda_visible_devices", "scheduler_no_gpu_allocated", checks.SevError,
			"The Slurm job was given no GPU (CUDA_VISIBLE_DEVICES="+shown+")",
			fmt.Sprintf("The paste shows CUDA_VISIBLE_DEVICES=%s in a job that was allocated no GPU: Slurm allocates GPUs only to a job that asks for them (#SBATCH --gres=gpu:1, or --gpus=1, on a GPU partition) and then sets CUDA_VISIBLE_DEVICES to the allocated GPUs; with no GPU allocated it sets NoDevFiles or leaves none visible. Unsetting the variable does not give the job a GPU: request one.", shown))
		d.lines = []lineRef{quote(last)}
		d.firstLine = last.line
		d.weight = 20
		d.noFix = true
		// Decided by Slurm's own NoDevFiles, or by the job's request
		// shown without a GPU in it; a GPU request in the paste leaves
		// it open (another step, another node).
		d.symptom = st.has("slurm_gpu_request") || !nodev && !slurmRequestShown(st)
		d.ev("cuda_visible_devices", raw)
		if st.has("slurm_job") {
			d.ev("slurm_lines", firstN(st.contexts["slurm_job"], 2))
		}
		markCVDEcho(d, last)
		d.reasons = append(d.reasons, "explain.slurm_no_gpu")
		return
	}
	d := st.newDraft("explain.cuda_visible_devices", "cuda_visible_devices_hides_gpu", checks.SevError,
		"CUDA_VISIBLE_DEVICES="+shown+" hides every GPU",
		fmt.Sprintf("The paste sets CUDA_VISIBLE_DEVICES to %s: CUDA then shows the program no GPU (entry %s is not a visible GPU).", shown, v.Invalid))
	d.lines = []lineRef{quote(last)}
	d.firstLine = last.line
	d.weight = 20
	d.ev("cuda_visible_devices", raw)
	markCVDEcho(d, last)
}

// eccXids are the Xids of memory errors, with their severity.
var eccXids = map[int]checks.Severity{48: checks.SevError, 63: checks.SevWarning, 64: checks.SevError, 92: checks.SevWarning, 94: checks.SevWarning, 95: checks.SevError}

func reasonXid(st *explainState) {
	for _, d := range st.draftsOf(roleXid) {
		code, err := strconv.Atoi(d.values["xid"])
		if err != nil {
			continue
		}
		x := knowledge.LookupXid(code)
		d.title = fmt.Sprintf("Xid %d: %s", code, x.Name)
		d.detail = x.Text
		d.ev("xid_kind", x.Kind)
		d.ev("xid_action", x.Action)
		if code == 154 {
			if act, op, sev, ok := knowledge.Xid154Action(d.values["message"]); ok {
				d.title = "Xid 154: the driver asks for " + act
				d.detail = fmt.Sprintf("The driver recommends: %s. %s", act, x.Text)
				d.ev("recovery_action", act)
				d.ev("xid_action", op)
				if sev == "error" {
					d.severity = checks.SevError
				} else {
					d.severity = checks.SevWarning
				}
				d.reasons = append(d.reasons, "explain.xid")
				continue
			}
		}
		d.reasons = append(d.reasons, "explain.xid")
		if sev, ok := eccXids[code]; ok {
			d.cause, d.severity = "gpu_ecc_errors", sev
			d.link = st.lib.linkOf(d.cause)
			continue
		}
		switch {
		case x.Serious():
			d.severity = checks.SevError
		case x.Kind == "application":
			d.severity = checks.SevWarning
			d.weight = 0
			d.detail += " This Xid points at the program (or a library it uses), not at the GPU."
			softwareXid(d)
		case x.Kind == "monitor" && (d.values["pid"] != "" || d.values["process"] != ""):
			// Xid 43 (GPU stopped processing) names the process whose
			// channel the driver stopped: the program's fault, as the
			// application Xid logged with it says.
			d.severity = checks.SevWarning
			d.weight = 0
			softwareXid(d)
		default:
			d.severity = checks.SevWarning
		}
		if code == 119 || code == 120 {
			// A GSP firmware timeout or error: the driver's and the GSP
			// firmware's fault far more often than a part's; the usual
			// remedies are a newer driver or, with the proprietary kernel
			// modules, running without GSP firmware (NVIDIA driver README,
			// GSP Firmware chapter: NVreg_EnableGpuFirmware=0).
			d.noFix = true
			d.note("Xid %d is the GSP firmware not answering the driver: most often a driver or firmware problem rather than a failing part. A reboot clears it; if it recurs, install a newer driver, or with the proprietary kernel modules turn GSP firmware off (options nvidia NVreg_EnableGpuFirmware=0 in /etc/modprobe.d, then reboot; the open modules need it). Before any RMA, see whether it follows the driver or the card.", code)
		}
		if code == 79 {
			d.fixes = append(d.fixes, checks.Fix{ID: checks.FixPCIeReseat, Title: "Check the GPU's seating, riser, power and cooling", Risk: checks.RiskDangerous, Manual: true,
				Steps: []string{"Power off; reseat the GPU (and riser); check its power cables and airflow", "Recurring Xid 79: ask the vendor"}})
		}
	}
}

// softwareXid makes an Xid the driver logs against the program (its
// pid and name; NVIDIA's Xid catalog: resolution RESTART_APP) a reading
// without the hardware fix: restarting the program clears it, and the
// program or a library is the likelier culprit (an out-of-range address,
// a page fault in its own memory). Undecided: the same Xid repeating
// across programs would point at the GPU.
func softwareXid(d *draft) {
	d.symptom = true
	d.noFix = true
	d.next = []string{
		"CUDA_LAUNCH_BLOCKING=1 python <script>   # the error at the kernel that failed",
		"compute-sanitizer python <script>",
		"sudo dmesg -T | grep -i xid   # the same Xid from other programs points at the GPU",
	}
}

func reasonBlackwell(st *explainState) {
	var drafts []*draft
	cc := ""
	_, _, tfSeen := st.firstFact("tf_version")
	for _, d := range st.draftsWithCause("unsupported_compute_capability") {
		// Another framework's wording (roleCCOtherFramework): TensorFlow's
		// known failures on a GPU say nothing about it.
		if d.is(roleCCOtherFramework) {
			if !tfSeen {
				return // a paste of another framework: TensorFlow's table does not apply
			}
			continue
		}
		drafts = append(drafts, d)
		if v := knowledge.Version(d.values["cc"]); len(v) >= 2 && v.Major() >= 10 {
			cc = v[:2].String()
		}
	}
	if cc == "" || len(drafts) == 0 {
		return
	}
	tf, _, ok := st.firstFact("tf_version")
	which := "TensorFlow " + tf
	if !ok {
		tf = knowledge.TFBuilds()[0].TF // the newest release
	}
	fail, known := knowledge.KnownCCFailure(tf, cc)
	if !known {
		return
	}
	if !ok {
		which = fmt.Sprintf("TensorFlow %s to %s (the paste names no version)", fail.Min, fail.Max)
	}
	var steps, unverified []string
	for _, w := range fail.Works {
		if w.Mark.Verified() {
			steps = append(steps, w.Text+" ("+w.Source+")")
		} else {
			unverified = append(unverified, w.Text)
		}
	}
	for _, d := range drafts {
		d.severity = checks.SevError
		d.detail = fmt.Sprintf("%s on compute capability %s. %s.", which, cc, fail.What)
		if len(unverified) > 0 {
			d.detail += " Not verified: " + strings.Join(unverified, "; ") + "."
		}
		d.ev("known_failure_source", fail.Source)
		d.ev("known_failure_mark", string(fail.Mark))
		d.fixes = nil
		if len(steps) > 0 {
			d.fixes = []checks.Fix{{ID: checks.FixOlderTensorFlow, Title: "Use a TensorFlow build that supports this GPU", Risk: checks.RiskSafe, Manual: true, Steps: steps}}
		}
		d.onlyFixes = true
		d.reasons = append(d.reasons, "explain.blackwell")
	}
}

func reasonECCCount(st *explainState) {
	for _, g := range st.smiGPUs() {
		n, err := strconv.Atoi(g.ecc)
		if err != nil || n == 0 {
			continue
		}
		d := st.newDraft(fmt.Sprintf("explain.ecc_count/gpu%d", g.index), "gpu_ecc_errors", checks.SevWarning,
			fmt.Sprintf("GPU %d reports %d uncorrected ECC errors", g.index, n),
			"nvidia-smi's 'Volatile Uncorr. ECC' counts uncorrectable memory errors since the driver loaded.")
		d.lines = g.lines[:1]
		d.firstLine = firstLineOf(g.lines)
		d.ev("uncorrected_ecc", n)
	}
}

func reasonWindowsTF(st *explainState) {
	if !st.has("windows") {
		return
	}
	tfv, f, ok := st.firstFact("tf_version")
	if !ok {
		return
	}
	if parseVer(tfv).cmp(ver{2, 11}) < 0 {
		return
	}
	if ds := st.draftsWithCause("tf_windows_native_gpu_unsupported"); len(ds) > 0 {
		ds[0].ev("tf_version", tfv)
		ds[0].reasons = append(ds[0].reasons, "explain.windows_tf")
		return
	}
	d := st.newDraft("explain.windows_tf", "tf_windows_native_gpu_unsupported", checks.SevError,
		"TensorFlow "+tfv+" on native Windows has no GPU support",
		"TensorFlow 2.10 was the last release with GPU support on native Windows; later releases run on the CPU there. Use WSL 2, or TensorFlow 2.10 with CUDA 11.2 and cuDNN 8.1.")
	d.lines = append([]lineRef{quote(f)}, firstN(st.contexts["windows"], 2)...)
	d.firstLine = f.line
	d.weight = 15
	d.ev("tf_version", tfv)
}

func reasonMIG(st *explainState) {
	migOn := false
	var lines []lineRef
	for _, f := range st.factValues("mig") {
		if strings.EqualFold(f.values["mig"], "Enabled") {
			migOn = true
			lines = append(lines, quote(f))
		}
	}
	// nvidia-smi -L listing MIG instances says the same.
	instances := st.factValues("mig_device")
	for _, f := range instances {
		migOn = true
		if len(lines) < maxQuotedLines {
			lines = append(lines, quote(f))
		}
	}
	if !migOn {
		return
	}
	for _, d := range st.draftsOf(roleInvalidDeviceOrdinal) {
		if len(instances) == 0 || !d.symptom {
			continue
		}
		// The instances exist (nvidia-smi -L lists them), so MIG is
		// not misconfigured: a CUDA process enumerates a single MIG
		// device (NVIDIA MIG User Guide, CUDA device enumeration), so
		// any index but 0 is out of range. Pick the instance with
		// CUDA_VISIBLE_DEVICES=MIG-<UUID> and use device 0.
		// Decided when the paste shows the program asking for an index
		// past 0; otherwise the reading stays open.
		asked := false
		for _, f := range st.facts {
			if v, ok := f.values["gpu_index"]; ok && v != "" && v != "0" {
				asked = true
			}
		}
		d.symptom = !asked
		d.noFix = true
		d.title = "The program asked for a MIG device index CUDA does not enumerate (invalid device ordinal)"
		d.note("nvidia-smi -L lists MIG instances, so they exist; but a CUDA process enumerates one MIG device only (NVIDIA MIG User Guide, CUDA device enumeration), so it has device 0 and no other. Select the instance with CUDA_VISIBLE_DEVICES=MIG-<UUID from nvidia-smi -L> and use cuda:0 (device 0) in the program; run one process per MIG instance to use several.")
		d.ev("mig_lines", lines)
		d.reasons = append(d.reasons, "explain.mig")
	}
	for _, d := range st.drafts {
		if d.is(roleNoCUDADevice, roleTFNoGPU, roleInvalidDeviceOrdinal) && d.symptom {
			d.cause = "mig_misconfigured"
			d.link = st.lib.linkOf(d.cause)
			d.symptom = false
			d.noFix = false
			d.title = "MIG is enabled but the program sees no GPU instance"
			d.ev("mig_lines", lines)
			d.reasons = append(d.reasons, "explain.mig")
		}
	}
}

func reasonVersions(st *explainState) {
	for _, d := range st.draftsWithCause("python_version_unsupported") {
		if py, f, ok := st.firstFact("python"); ok {
			d.ev("python", py)
			d.ev("python_line", quote(f))
			newest := st.lib.newestTF()
			rng := newest.Python
			tfName := "TensorFlow " + newest.TF
			if tfv, _, ok := st.firstFact("tf_version"); ok {
				if r, ok := st.lib.tfRow(tfv); ok {
					rng, tfName = r.Python, "TensorFlow "+tfv
				}
			}
			d.ev("supported_python", rng)
			d.note("%s supports Python %s; this Python is %s.", tfName, rng, py)
		}
	}
	for _, d := range st.draftsOf(roleComponentOutdated) {
		for _, k := range []string{"jax_built", "jax_minimum", "jax_installed"} {
			if v, _, ok := st.firstFact(k); ok {
				d.ev(k, v)
			}
		}
	}
}

func reasonMultipleTF(st *explainState) {
	var dists []string
	var lines []lineRef
	for _, f := range st.factValues("tf_dist") {
		dist := strings.ReplaceAll(strings.ToLower(f.values["tf_dist"]), "_", "-")
		if dist == "tensorflow-intel" || contains(dists, dist) {
			continue
		}
		dists = append(dists, dist)
		lines = append(lines, quote(f))
	}
	if len(dists) < 2 {
		return
	}
	d := st.newDraft("explain.multiple_tf", "multiple_tf_installs_conflict", checks.SevError,
		"Several TensorFlow distributions are installed: "+strings.Join(dists, ", "),
		"These distributions install into the same tensorflow package folder and overwrite each other's files; which build runs is unpredictable. Uninstall all of them, then install one.")
	d.lines = lines
	d.firstLine = firstLineOf(lines)
	d.weight = 15
	d.ev("distributions", dists)
}

func reasonTFVersionAnswer(st *explainState) {
	sig := st.lib.withRole(roleTFVersionFact)
	var added []hit
	for i, f := range st.facts {
		var dist string
		switch {
		case strings.EqualFold(f.values["framework"], "tf") || strings.EqualFold(f.values["framework"], "tensorflow"):
			dist = "tensorflow"
		case strings.EqualFold(f.values["pip_show_name"], "tensorflow") || strings.EqualFold(f.values["pip_show_name"], "tensorflow-gpu") ||
			strings.EqualFold(f.values["pip_show_name"], "tensorflow-cpu"):
			dist = strings.ToLower(f.values["pip_show_name"])
		default:
			continue
		}
		for _, g := range st.facts[i+1:] {
			if g.line > f.line+3 {
				break
			}
			v := g.values["bare_version"]
			if v == "" {
				v = g.values["pip_show_version"]
			}
			if v != "" {
				added = append(added, hit{sig: sig, line: g.line, text: g.text, values: map[string]string{"tf_version": v, "tf_dist": dist}})
				break
			}
		}
	}
	if len(added) == 0 {
		return
	}
	st.facts = append(st.facts, added...)
	sort.SliceStable(st.facts, func(i, j int) bool { return st.facts[i].line < st.facts[j].line })
}

func reasonSecureBoot(st *explainState) {
	state, f, ok := st.firstFact("secure_boot")
	if !ok || !strings.EqualFold(state, "enabled") {
		return
	}
	for _, d := range st.drafts {
		if d.link.Order() <= checks.LinkKernel.Order() && !d.symptom && (d.severity == checks.SevError) {
			return // a more specific kernel-level cause is already named
		}
	}
	for _, d := range st.drafts {
		if !d.symptom || (d.cause != "driver_missing" && d.cause != "kernel_module_not_built") {
			continue
		}
		d.cause = "secure_boot_unsigned_module"
		d.link = st.lib.linkOf(d.cause)
		// The likelier reading, not a verdict: a signed module (a
		// distribution's prebuilt one, a DKMS build signed with an enrolled
		// MOK key) loads under Secure Boot, and a module not built for the
		// running kernel fails the same way. The kernel log decides
		// (kernel.module_signature_rejected).
		d.symptom, d.noFix = true, true
		d.note("Secure Boot is enabled on this machine, so an unsigned NVIDIA module would be refused at load; the kernel log ('Key was rejected by service', 'Loading of unsigned module is rejected') confirms it, and a module that is signed or was not built for this kernel reads the same without it.")
		d.ev("secure_boot_line", quote(f))
		d.reasons = append(d.reasons, "explain.secure_boot_state")
	}
}

// torchOwnMemory is what PyTorch's out-of-memory message (on line ln, or
// the first such message) says this process holds: 2.x's 'this process has
// X memory in use', else 1.x's 'X reserved in total by PyTorch'.
func (st *explainState) torchOwnMemory(ln int) (float64, hit, bool) {
	var best hit
	found := false
	for _, key := range []string{"self_mem", "torch_reserved", "torch_cached_extra"} {
		for _, f := range st.factValues(key) {
			if !found || (f.line == ln && best.line != ln) {
				best, found = f, true
			}
		}
		if found {
			own := bytesOf(best.values[key])
			if key == "torch_cached_extra" {
				// PyTorch 1.0-1.3: 'cached' is what the allocator holds
				// beyond what is allocated (amount_cached - amount_allocated).
				own += bytesOf(best.values["torch_allocated_old"])
			}
			return own, best, true
		}
	}
	return 0, hit{}, false
}

// PyTorch 2.x's out-of-memory message (c10/cuda/CUDACachingAllocator.cpp):
// one 'Process N has X memory in use' per other process on the GPU, and
// 'Of the allocated memory X is allocated by PyTorch'.
var (
	torchProcessRE     = regexp.MustCompile(`Process (\d+) has ([0-9.]+ (?:[KMGT]iB|bytes)) memory in use`)
	torchAllocatedRE   = regexp.MustCompile(`Of the allocated memory ([0-9.]+ (?:[KMGT]iB|bytes)) is allocated by PyTorch`)
	torchUnallocatedRE = regexp.MustCompile(`and ([0-9.]+ (?:[KMGT]iB|bytes)) is reserved by PyTorch but unallocated`)
)

// memorySplitUndecided: PyTorch's figures show memory outside this
// process's allocator (a gigabyte or more, a fifth of the card or more),
// but this process holds more than that. The out-of-memory finding keeps
// its cause, undecided: the job not fitting is the likelier reading, and
// nvidia-smi's process list decides.
func (st *explainState) memorySplitUndecided(targets []*draft, total, free, own, others float64, tf, ownLine hit) {
	ml := []lineRef{quote(tf)}
	if ownLine.line != tf.line {
		ml = append(ml, quote(ownLine))
	}
	for _, d := range targets {
		d.ev("torch_memory_held_by_this_process", gibString(own))
		d.ev("memory_outside_this_process", gibString(others))
		d.ev("memory_lines", ml)
		d.reasons = append(d.reasons, "explain.gpu_memory_held")
		d.note("PyTorch's own figures: of the GPU's %s, %s was free and this process held %s; the other %s lies outside PyTorch's allocator. That is less than this process holds: it may be this process's own CUDA context and libraries (an extension that allocates on its own), the desktop, or another process. Most likely the job itself does not fit: reduce the batch size (or the input size or model). nvidia-smi's process list, run while nothing of yours is running, shows whether another process holds memory.", gibString(total), gibString(free), gibString(own), gibString(others))
	}
}

// reasonMemoryOrphaned: nvidia-smi shows a GPU with gigabytes of memory in
// use, idle, and no process (or far too little) in its process table: a
// process this nvidia-smi cannot see holds it (another container or PID
// namespace, or a killed program whose context was never released).
func reasonMemoryOrphaned(st *explainState) {
	// Under WSL 2 nvidia-smi lists no processes and Windows' own use of
	// the GPU shows as memory in use: nothing here is orphaned.
	if len(st.success) > 0 || st.has("wsl") || len(st.draftsWithCause("gpu_out_of_memory_other_process")) > 0 {
		return
	}
	tableShown := false
	for _, f := range st.facts {
		if f.values["smi_processes"] != "" || f.values["smi_no_processes"] != "" {
			tableShown = true
			break
		}
	}
	if !tableShown {
		return
	}
	listed := map[int]float64{}
	for _, f := range st.factValues("proc_mem_mib") {
		g, _ := strconv.Atoi(f.values["gpu"])
		listed[g] += bytesOf(f.values["proc_mem_mib"] + "MiB")
	}
	for _, g := range st.smiGPUs() {
		if g.memTotal == 0 || g.util > 0 {
			continue
		}
		unaccounted := g.memUsed - listed[g.index]
		if unaccounted < 1<<30 || unaccounted < g.memTotal/4 {
			continue
		}
		d := st.newDraft(fmt.Sprintf("explain.gpu_memory_orphaned/gpu%d", g.index), "gpu_out_of_memory_other_process", checks.SevWarning,
			fmt.Sprintf("GPU %d: %s of %s in use by no process nvidia-smi lists", g.index, gibString(g.memUsed), gibString(g.memTotal)),
			"The GPU is idle yet its memory is taken, and nvidia-smi's process table does not account for it: a process it cannot see holds the memory "+
				"(one in another container or PID namespace, or a killed program whose CUDA context was never released). New programs get only what is left and run out of memory. "+
				"Find the holder with `sudo fuser -v /dev/nvidia*` (or `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` on the host) and stop it.")
		d.lines = firstN(g.lines, maxQuotedLines)
		d.firstLine = firstLineOf(g.lines)
		d.weight = 8
		d.ev("memory_used", gibString(g.memUsed))
		d.ev("memory_listed_for_processes", gibString(listed[g.index]))
		d.reasons = append(d.reasons, "explain.gpu_memory_orphaned")
		if st.has("container") {
			// Inside a container nvidia-smi lists no process at all: NVML
			// reports host PIDs, which the container's PID namespace does
			// not show, its own programs included: the driver is not aware
			// of PID namespaces (NVIDIA maintainers in NVIDIA/nvidia-docker
			// #179 and #1483). The memory may be this container's own idle
			// program: the likelier reading, not a fact.
			d.symptom, d.noFix = true, true
			d.note("The paste comes from a container, where nvidia-smi lists no processes at all (its PID namespace hides the host's PIDs, the container's own programs included): the memory may be held by a program of this container, such as a notebook kernel that still holds it. nvidia-smi on the host lists who holds it.")
			d.next = []string{"nvidia-smi   # on the host: the process table there lists every holder", "ps aux   # in the container: an idle python or notebook kernel still holding the GPU"}
		}
	}
}

// cudnnVersionOf reads cuDNN's integer version: 8.x as major*1000 +
// minor*100 + patch (8004 = 8.0.4), 9.x and later as major*10000 +
// minor*100 + patch (90100 = 9.1.0).
func cudnnVersionOf(s string) ver {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return nil
	}
	if n >= 10000 {
		return ver{n / 10000, (n % 10000) / 100, n % 100}
	}
	return ver{n / 1000, (n % 1000) / 100, n % 100}
}

func reasonCudnnLoadedVsBuild(st *explainState) {
	var targets []*draft
	for _, d := range st.drafts {
		if d.sig == nil {
			continue
		}
		if d.is(roleCudnnHandle) {
			targets = append(targets, d)
		}
	}
	if len(targets) == 0 || len(st.draftsWithCause("cudnn_version_mismatch")) > 0 {
		return
	}
	raw, lf, ok := st.firstFact("loaded_cudnn")
	if !ok {
		return
	}
	loaded := cudnnVersionOf(raw)
	tf, tff, ok := st.firstFact("tf_version")
	if !ok || len(loaded) < 2 {
		return
	}
	b, ok := knowledge.TFBuildAnyFor(tf)
	if !ok {
		return
	}
	built := parseVer(b.CUDNN)
	if len(built) < 2 {
		return
	}
	if loaded.major() == built.major() && loaded[:2].cmp(built[:2]) >= 0 {
		return
	}
	lines := []lineRef{quote(lf), quote(tff)}
	d := st.newDraft("explain.cudnn_loaded_vs_build", "cudnn_version_mismatch", checks.SevError,
		fmt.Sprintf("cuDNN %s is loaded but TensorFlow %s was built with cuDNN %s", loaded, tf, b.CUDNN),
		fmt.Sprintf("TensorFlow %s was built with cuDNN %s (tested build configurations, %s); the cuDNN that loaded is %s, so cuDNN calls fail. Another cuDNN (a system copy, a conda package, another framework's) is found first: install cuDNN %s for this release, or put its copy first on the loader path.", tf, b.CUDNN, b.Mark, loaded, b.CUDNN))
	d.lines = lines
	d.firstLine = firstLineOf(lines)
	d.weight = 18
	d.ev("loaded_cudnn", loaded.String())
	d.ev("build_cudnn", b.CUDNN)
	d.ev("tf_version", tf)
	for _, t := range targets {
		t.reasons = append(t.reasons, "explain.cudnn_loaded_vs_build")
	}
	d.reasons = append(d.reasons, "explain.cudnn_loaded_vs_build")
}

// allZero reports whether every visible entry is the index 0.
func allZero(visible []int) bool {
	for _, x := range visible {
		if x != 0 {
			return false
		}
	}
	return len(visible) > 0
}

// envRoot is the environment folder an interpreter path or a site-packages
// folder belongs to: /x/envs/tf/bin/python3 and
// /x/envs/tf/lib/python3.10/site-packages give /x/envs/tf;
// C:\x\envs\tf\python.exe, C:\x\envs\tf\Scripts\python.exe and
// C:\x\envs\tf\Lib\site-packages give c:/x/envs/tf. "" when the path has
// none of these shapes or is a per-user site folder (~/.local), which any
// interpreter of that Python version reads.
func envRoot(p string) string {
	p = strings.Trim(strings.TrimSpace(p), `'"`)
	p = strings.ReplaceAll(strings.ReplaceAll(p, `\\`, `/`), `\`, `/`)
	windows := len(p) > 2 && p[1] == ':'
	if windows {
		p = strings.ToLower(p)
	}
	parts := strings.Split(strings.TrimRight(p, "/"), "/")
	n := len(parts)
	if n < 2 {
		return ""
	}
	last := strings.ToLower(parts[n-1])
	var root []string
	switch {
	case strings.HasPrefix(last, "python") && !strings.HasSuffix(last, "-packages"):
		root = parts[:n-1]
		if k := len(root); k > 0 && (root[k-1] == "bin" || strings.EqualFold(root[k-1], "scripts")) {
			root = root[:k-1]
		}
	case last == "site-packages" || last == "dist-packages":
		root = parts[:n-1]
		if k := len(root); k > 0 && strings.HasPrefix(strings.ToLower(root[k-1]), "python") {
			root = root[:k-1]
		}
		if k := len(root); k > 0 && (root[k-1] == "lib" || root[k-1] == "Lib" || root[k-1] == "lib64") {
			root = root[:k-1]
		} else {
			return ""
		}
	default:
		return ""
	}
	r := strings.Join(root, "/")
	if r == "/usr/local" {
		r = "/usr" // Debian's /usr/bin/python3 reads /usr/local/lib/python3.X/dist-packages too
	}
	if r == "" || strings.HasSuffix(r, "/.local") || r == "~/.local" || strings.Contains(r, "/appdata/roaming/python") {
		return ""
	}
	return r
}

// frameworkDist matches the distributions whose install folder
// explain.python_env compares with the kernel's interpreter.
var frameworkDist = regexp.MustCompile(`(?i)^(?:tensorflow[\w-]*|tf-nightly[\w-]*|torch|jax|jaxlib|cupy[\w-]*|paddlepaddle[\w-]*|onnxruntime[\w-]*|keras)$`)

// reasonPythonEnv: in a notebook paste, the interpreter the kernel runs
// (sys.executable, or which/where python asked from the notebook) lives in
// another environment than the one pip installed the framework into.
func reasonPythonEnv(st *explainState) {
	if !st.has("jupyter") {
		return
	}
	var interps, sites, envShows []hit
	lastQuery, lastName, lastPrompt := -100, -100, -100
	for _, f := range st.facts {
		switch {
		case f.values["env_prompt"] != "":
			lastPrompt = f.line
			envShows = append(envShows, f)
		case f.values["interp_query"] != "":
			lastQuery = f.line
		case f.values["interp_path"] != "":
			same := strings.Contains(f.text, "sys.executable")
			if same || f.line-lastQuery <= 3 {
				interps = append(interps, f)
			}
		case f.values["pip_show_name"] != "":
			lastName = -100
			if frameworkDist.MatchString(f.values["pip_show_name"]) {
				lastName = f.line
				if f.line-lastPrompt <= 2 && len(envShows) > 0 {
					envShows[len(envShows)-1].values = map[string]string{"env_prompt": envShows[len(envShows)-1].values["env_prompt"], "pip_show_name": f.values["pip_show_name"]}
				}
			}
		case f.values["site_path"] != "":
			// pip show's Location counts only under a framework's Name.
			if f.values["site_pkg"] != "" || f.line-lastName <= 12 {
				sites = append(sites, f)
			}
		}
	}
	if len(interps) > 0 && len(sites) == 0 {
		reasonPythonEnvPrompt(st, interps, envShows)
		return
	}
	if len(interps) == 0 || len(sites) == 0 {
		return
	}
	interpRoots := map[string]bool{}
	for _, f := range interps {
		if r := envRoot(f.values["interp_path"]); r != "" {
			interpRoots[r] = true
		}
	}
	var other []hit
	for _, f := range sites {
		r := envRoot(f.values["site_path"])
		if r == "" {
			continue
		}
		if interpRoots[r] {
			return // the kernel's own environment has the package
		}
		other = append(other, f)
	}
	if len(interpRoots) == 0 || len(other) == 0 {
		return
	}
	title := "The notebook's kernel runs another Python than the environment the framework is installed in"
	lines := []lineRef{quote(interps[0]), quote(other[0])}
	for _, d := range st.draftsWithCause("jupyter_kernel_wrong_env") {
		d.lines = append(d.lines, lines...)
		d.reasons = append(d.reasons, "explain.python_env")
		return
	}
	d := st.newDraft("explain.python_env", "jupyter_kernel_wrong_env", checks.SevError, title,
		"The kernel's interpreter ("+interps[0].values["interp_path"]+") is not the Python of "+other[0].values["site_path"]+
			", where pip put the framework: the notebook imports whatever that other interpreter has. Register the environment as a kernel (python -m ipykernel install --user --name <env>) and select it, or install the framework with %pip in the notebook.")
	d.lines = lines
	d.firstLine = firstLineOf(lines)
	d.weight = 16
	d.ev("kernel_python", interps[0].values["interp_path"])
	d.ev("package_folder", other[0].values["site_path"])
}

// reasonNotebookFalse: see explain.notebook_false.
func reasonNotebookFalse(st *explainState) {
	if !st.has("jupyter") {
		return
	}
	var yes *lineRef
	for _, t := range st.contexts["cuda_query_true"] {
		if strings.Contains(t.Text, "Out[") {
			continue // the notebook's own True
		}
		if strings.Contains(t.Text, "is_available") {
			yes = &t
			break
		}
		for _, q := range st.contexts["framework_cuda_query"] {
			if t.Line > q.Line && t.Line-q.Line <= 2 && !strings.HasPrefix(strings.TrimSpace(q.Text), "In [") {
				yes = &t
				break
			}
		}
		if yes != nil {
			break
		}
	}
	if yes == nil {
		return
	}
	for _, d := range st.drafts {
		if !d.symptom || !d.is(roleCUDAQueryFalse) || d.cause != "framework_cpu_only_build" {
			continue
		}
		notebook := false
		for _, l := range d.lines {
			notebook = notebook || strings.Contains(l.Text, "Out[")
		}
		if !notebook {
			continue
		}
		d.cause = "jupyter_kernel_wrong_env"
		d.link = st.lib.linkOf(d.cause)
		d.noFix = true
		d.title = "The notebook says CUDA is not available where another Python on the machine says it is"
		d.detail = "The notebook's kernel answers False while a Python outside the notebook answers True (line " + strconv.Itoa(yes.Line) + "): CUDA works on this machine for that interpreter, so the kernel most likely runs another environment (one without the CUDA build of the framework). Run import sys; print(sys.executable) in the notebook and which python in the terminal; if they differ, register the working environment as a kernel (python -m ipykernel install --user --name <env>) and select it."
		d.lines = append(d.lines, *yes)
		d.reasons = append(d.reasons, "explain.notebook_false")
	}
}

// systemPython matches the system's own interpreters, which belong to no
// environment (conda's or a venv's sys.executable is under its own folder).
var systemPython = regexp.MustCompile(`^/(?:usr/(?:local/)?)?bin/python[\d.]*$`)

// reasonPythonEnvPrompt: without pip's Location, the paste may still show
// where the framework is: pip show found it at a prompt that names an
// activated environment ('(tf) me@box:~$ pip show tensorflow'), while the
// notebook's kernel runs the system Python (/usr/bin/python3), which is in
// no environment. Activation puts the environment's bin first on PATH and
// its name in the prompt (venv's activate, conda activate); its
// interpreter is never /usr/bin/python3. Anything less (a kernel in some
// environment, no prompt) stays the likeliest reading.
func reasonPythonEnvPrompt(st *explainState, interps, envShows []hit) {
	var shown *hit
	for i := range envShows {
		if envShows[i].values["pip_show_name"] != "" {
			shown = &envShows[i]
		}
	}
	if shown == nil {
		return
	}
	for _, f := range interps {
		if !systemPython.MatchString(f.values["interp_path"]) {
			return
		}
	}
	env, pkg, interp := shown.values["env_prompt"], shown.values["pip_show_name"], interps[0].values["interp_path"]
	lines := []lineRef{quote(interps[0]), quote(*shown)}
	detail := "The kernel's interpreter (" + interp + ") is the system Python, in no environment, while pip found " + pkg +
		" in the activated environment (" + env + "): the notebook imports whatever the system Python has. Register the environment as a kernel (python -m ipykernel install --user --name " + env + ", run inside it) and select it, or install the framework with %pip in the notebook."
	for _, d := range st.draftsWithCause("jupyter_kernel_wrong_env") {
		d.lines = append(d.lines, lines...)
		d.reasons = append(d.reasons, "explain.python_env")
		d.symptom, d.noFix = false, false
		d.note("%s", detail)
		d.ev("kernel_python", interp)
		d.ev("package_env", env)
		return
	}
	d := st.newDraft("explain.python_env", "jupyter_kernel_wrong_env", checks.SevError,
		"The notebook's kernel runs another Python than the environment the framework is installed in", detail)
	d.lines = lines
	d.firstLine = firstLineOf(lines)
	d.weight = 16
	d.ev("kernel_python", interp)
	d.ev("package_env", env)
}

// reasonTorchCUDABuild: "CUDA is not available" read as a CPU-only wheel is
// ruled out when the same paste shows the wheel is a CUDA build (a +cuXXX
// version, torch.version.cuda, collect_env's 'CUDA used to build PyTorch');
// the commonest reason left is that the program could not reach a driver.
func reasonTorchCUDABuild(st *explainState) {
	var proof *hit
	for i, f := range st.facts {
		if f.values["torch_cu"] != "" || f.values["torch_cu_dotted"] != "" ||
			(strings.EqualFold(f.values["framework"], "PyTorch") && f.values["required_cuda"] != "") {
			proof = &st.facts[i]
			break
		}
	}
	if proof == nil {
		return
	}
	for _, d := range st.draftsWithCause("framework_cpu_only_build") {
		if !d.symptom || !d.is(roleTorchCUDAUnavailable, roleCUDAQueryFalse) {
			continue
		}
		cause, where := "driver_missing", "the NVIDIA driver is not installed or not loaded"
		have, haveWhy, haveAt, _ := st.driverCUDA()
		need, _, _ := st.requiredCUDA()
		switch {
		case st.has("wsl"):
			cause, where = "wsl_libcuda_not_found", "WSL 2's libcuda (from the Windows driver, in /usr/lib/wsl/lib) is not found"
		case st.has("container"):
			cause, where = "container_runtime_no_gpu", "the container was started without GPU access"
		case have != nil && need != nil && len(have) > 0 && len(need) > 0 && have[0] < need[0]:
			// The paste shows a working driver (nvidia-smi): not missing,
			// but of an older CUDA major than the build's.
			cause, where = "driver_too_old_for_cuda", fmt.Sprintf("the driver (%s) runs an older CUDA major version than the build's CUDA %s", haveWhy, need.String())
			d.lines = append(d.lines, haveAt...)
		case have != nil:
			// A driver answered and runs the build's CUDA major (NVIDIA's
			// minor-version compatibility covers a newer minor): what is
			// left is the program's environment.
			cause, where = "cuda_visible_devices_hides_gpu", fmt.Sprintf("the program does not see the GPU the driver shows (%s; within one CUDA major version the driver runs the build through minor-version compatibility): CUDA_VISIBLE_DEVICES set to an empty or wrong value, or no permission on /dev/nvidia*; paste what decides", haveWhy)
			d.lines = append(d.lines, haveAt...)
		}
		d.cause = cause // the link stays the runtime's: any finding lower on the chain is the better answer
		d.lines = append(d.lines, quote(*proof))
		d.detail = fmt.Sprintf("PyTorch says CUDA is not available, and the installed PyTorch is a CUDA build (%s), so this is not a CPU-only wheel: the commonest reason left is that %s. A driver too old for the build or CUDA_VISIBLE_DEVICES hiding the GPU say so in their own messages.", strings.TrimSpace(proof.text), where)
		d.ev("cuda_build", strings.TrimSpace(proof.text))
		d.reasons = append(d.reasons, "explain.torch_cuda_build")
	}
}

func reasonCVDEcho(st *explainState) {
	sig := st.lib.withRole(roleCVDFact)
	var added []hit
	for i, f := range st.facts {
		if f.values["cvd_echo"] == "" {
			continue
		}
		for _, g := range st.facts[i+1:] {
			if g.line > f.line+1 {
				break
			}
			if v := g.values["cvd_echo_value"]; v != "" && g.line == f.line+1 {
				added = append(added, hit{sig: sig, line: g.line, text: g.text, values: map[string]string{"cvd": v, "cvd_echo": f.values["cvd_echo"]}})
			}
		}
	}
	if len(added) == 0 {
		return
	}
	st.facts = append(st.facts, added...)
	sort.SliceStable(st.facts, func(i, j int) bool { return st.facts[i].line < st.facts[j].line })
}

// markCVDEcho records that the value was read from a command's answer.
// cvdNamesMissing drafts the finding that the CUDA_VISIBLE_DEVICES value
// the paste shows (line last) names devices CUDA did not find, after the
// no-device finding nd.
func cvdNamesMissing(st *explainState, last hit, raw string, nd *draft, cause, title, detail string) *draft {
	d := st.newDraft("explain.cuda_visible_devices", cause, checks.SevError, title, detail)
	d.lines = []lineRef{quote(last)}
	d.firstLine = last.line
	d.weight = 20
	d.ev("cuda_visible_devices", raw)
	markCVDEcho(d, last)
	d.ev("no_device_finding", nd.id)
	return d
}

func markCVDEcho(d *draft, last hit) {
	if last.values["cvd_echo"] != "" {
		d.reasons = append(d.reasons, "explain.cvd_echo")
	}
}

// reasonGPUIndex decides 'invalid device ordinal' when the paste shows
// both the GPU index the program asks for and how many GPUs it has: the
// entries of the last CUDA_VISIBLE_DEVICES assignment (what the program
// sees), else the GPUs nvidia-smi lists. An index at or past that count
// does not exist for the program.
func reasonGPUIndex(st *explainState) {
	var targets []*draft
	for _, d := range st.draftsOf(roleInvalidDeviceOrdinal) {
		if d.cause == "gpu_index_out_of_range" {
			targets = append(targets, d)
		}
	}
	if len(targets) == 0 {
		return
	}
	req := -1
	var reqHit hit
	for _, f := range st.facts {
		for _, key := range []string{"gpu_index", "gpu_index_list"} {
			v, ok := f.values[key]
			if !ok || v == "" {
				continue
			}
			for _, part := range strings.Split(v, ",") {
				if n, err := strconv.Atoi(strings.TrimSpace(part)); err == nil && n > req {
					req, reqHit = n, f
				}
			}
		}
	}
	if req < 0 {
		return
	}
	var gpus []host.GPU
	smi := st.smiGPUs()
	for _, g := range smi {
		gpus = append(gpus, host.GPU{Index: g.index})
	}
	n, why := -1, ""
	var at []lineRef
	if vals := st.factValues("cvd"); len(vals) > 0 {
		last := vals[len(vals)-1]
		raw := strings.Trim(last.values["cvd"], `"'`)
		if low := strings.ToLower(raw); raw != "" && !strings.Contains(low, "gpu-") && !strings.Contains(low, "mig-") {
			if v := checks.ParseVisibleDevices(raw, true, gpus); len(v.Visible) > 0 {
				n = len(v.Visible)
				why = fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s leaves it %s (numbered from 0)", raw, countOf(n, "GPU", "GPUs"))
				at = append(at, quote(last))
			}
		}
	}
	if n < 0 {
		listed := map[string]hit{}
		for _, f := range st.factValues("listed_gpu") {
			listed[f.values["listed_gpu"]] = f
		}
		switch {
		case len(smi) > 0:
			n = len(smi)
			why = fmt.Sprintf("nvidia-smi shows %s", countOf(n, "GPU", "GPUs"))
			at = append(at, smi[0].lines...)
		case len(listed) > 0:
			n = len(listed)
			why = fmt.Sprintf("nvidia-smi -L lists %s", countOf(n, "GPU", "GPUs"))
			for _, f := range st.factValues("listed_gpu") {
				at = append(at, quote(f))
			}
		}
	}
	if n <= 0 || req < n {
		return
	}
	for _, d := range targets {
		d.symptom = false
		d.weight += 5
		d.title = fmt.Sprintf("The program asks for GPU %d, which does not exist (%s)", req, countOf(n, "GPU is", "GPUs are")+" visible")
		d.detail = fmt.Sprintf("The program selects GPU %d, but %s: GPU indexes count from 0 over the GPUs the program sees, so index %d does not exist and CUDA answers 'invalid device ordinal'. Use an index below %d (cuda:0 on a one-GPU machine), or take the count from the framework (torch.cuda.device_count()).", req, why, req, n)
		d.ev("requested_gpu_index", req)
		d.ev("visible_gpus", n)
		d.ev("index_lines", append([]lineRef{quote(reqHit)}, firstN(at, 3)...))
		d.reasons = append(d.reasons, "explain.gpu_index")
	}
}

// countOf writes n with the singular or plural noun.
func countOf(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
