package rules

import (
	"regexp"
	"strings"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/knowledge"
)

// Fitting a finding's fix to what the paste shows: whose program failed
// (a CuPy or PyTorch paste gets none of TensorFlow's fixes even where
// the failing line names no framework), on which platform (native
// Windows has no tensorflow[and-cuda]) and which TensorFlow release (the
// [and-cuda] extra does not exist before 2.14).

func init() {
	reasoners = append(reasoners, fitReasoners...)
}

var fitReasoners = []*reasoner{
	{
		ID: "explain.fixed_later", Title: "The paste's last run shows the GPU working", Link: checks.LinkRuntime, Phase: phaseFindings,
		Causes: []string{"libcudnn_missing", "libcudart_missing"},
		Doc: `A failure whose every line comes before a line showing the GPU in use (TensorFlow
listing GPU:0, a device created) may be fixed already: the paste shows a run after it
that worked (a user's fix between two runs). The finding says so and points at that line.`,
		Run: reasonFixedLater,
	},
	{
		ID: "explain.open_module_old_gpu", Title: "The open kernel module loaded for a GPU older than Turing", Link: checks.LinkKernel, Phase: phaseFindings,
		Causes: []string{"open_kernel_module_unsupported_gpu"},
		Doc: `The driver finds no usable GPU ('No devices were found', the probe failing) while the
paste shows the open flavour of the kernel module loaded (/proc/driver/nvidia/version:
'Open Kernel Module') and lspci lists only NVIDIA GPUs older than Turing (GK, GM, GP, GV
chips): the open modules support Turing and later only (open-gpu-kernel-modules README),
so the proprietary flavour is needed. Decided, as the kernel's own refusal line would.`,
		Run: reasonOpenModuleOldGPU,
	},
	{
		ID: "explain.paste_framework", Title: "Whose program the paste runs, where the failing line does not say", Link: checks.LinkRuntime, Phase: phaseFindings,
		Causes: []string{"unsupported_compute_capability", "libcudart_missing", "libcudnn_missing"},
		Doc: `A failing line that names no framework ('no kernel image is available', 'libcudart.so.11.0:
cannot open shared object file') belongs to the framework the paste runs when it runs
exactly one and it is not TensorFlow: PyTorch code (import torch, torch.zeros(1).cuda()),
CuPy's import failure. Such a finding gets none of TensorFlow's fixes.`,
		Run: reasonPasteFramework,
	},
	{
		ID: "explain.cuda_libs_fix", Title: "The CUDA-library fix for the TensorFlow release and platform shown", Link: checks.LinkLibraries, Phase: phaseFindings,
		Causes: []string{"libcudart_missing", "libcudnn_missing"},
		Doc: `TensorFlow's missing CUDA library is fixed with pip install 'tensorflow[and-cuda]' only on
Linux and from TensorFlow 2.14 (the extra's first release): on native Windows (GPU
support ends with 2.10) the CUDA and cuDNN DLLs of the release's tested build go on PATH;
a release before 2.14 needs the CUDA and cuDNN of its tested build configuration
(tensorflow.org/install/source#gpu, source_windows#gpu). A bare libcudart dlerror that
TensorFlow itself says to ignore without a GPU set up is not decided unless the paste
shows a GPU.`,
		Run: reasonCUDALibsFix,
	},
}

// codeFrameworks are the contexts (signatures/fit.json) marking a paste
// that runs one framework's code.
var codeFrameworks = map[string]string{"pytorch_code": "pytorch", "cupy_code": "cupy"}

// tfOnlyFix reports whether a fix is written for TensorFlow alone.
func tfOnlyFix(f checks.Fix) bool { return tfOnlyFixes[f.ID] || tfStep(f.Title) }

func reasonPasteFramework(st *explainState) {
	if st.has("tensorflow_code") || len(st.factValues("tf_version")) > 0 {
		return
	}
	fw := ""
	for ctx, name := range codeFrameworks {
		if st.has(ctx) {
			if fw != "" {
				return // two frameworks: the line does not say which
			}
			fw = name
		}
	}
	if fw == "" {
		return
	}
	for _, d := range st.drafts {
		if d.benign || d.noFix || frameworkOf(d) != "" || len(d.lineFw) > 0 {
			continue
		}
		tfFix := false
		for _, f := range append(append([]checks.Fix(nil), d.fixes...), st.lib.causes[d.cause].Fixes...) {
			tfFix = tfFix || tfOnlyFix(f)
		}
		if !tfFix {
			continue
		}
		d.framework = fw
		d.ev("framework_from", firstN(st.contexts[fwContext(fw)], 1))
		d.reasons = append(d.reasons, "explain.paste_framework")
		if fw == "cupy" && d.cause == "libcudart_missing" {
			d.note("CuPy's wheels are each built for one CUDA major version (cupy-cuda11x, cupy-cuda12x): install the one for the CUDA this machine has, as CuPy's own message says (docs.cupy.dev, Installation).")
		}
	}
}

func fwContext(fw string) string {
	for ctx, name := range codeFrameworks {
		if name == fw {
			return ctx
		}
	}
	return ""
}

// andCUDAFirst is the first TensorFlow release with the [and-cuda] extra
// (tensorflow/tools/pip_package/setup.py EXTRA_PACKAGES; knowledge
// compat.json and_cuda_pins starts there).
var andCUDAFirst = ver{2, 14}

func reasonCUDALibsFix(st *explainState) {
	gpuShown := st.nvidiaGPUShown()
	ignoreNotice := false
	for _, d := range st.draftsOf(roleTFCudartNotice) {
		for _, l := range d.lines {
			ignoreNotice = ignoreNotice || strings.Contains(strings.ToLower(l.Text), "ignore above cudart dlerror")
		}
	}
	tfv := ""
	if v, _, ok := st.firstFact("tf_version"); ok {
		tfv = v
	}
	for _, d := range st.drafts {
		// TensorFlow's 'Cannot dlopen some GPU libraries' summary is the
		// same failure under the CPU-build label: the same pip fix.
		if d.sig == nil || d.benign || (d.cause != "libcudart_missing" && d.cause != "libcudnn_missing" && !d.is(roleTFDlopenSummary)) {
			continue
		}
		if fw := frameworkOf(d); fw != "" && fw != FrameworkTensorFlow {
			continue
		}
		hasTFFix := false
		for _, f := range st.lib.causes[d.cause].Fixes {
			hasTFFix = hasTFFix || f.ID == checks.FixPipInstallTensorFlow
		}
		if d.cause == "libcudart_missing" && ignoreNotice && !gpuShown && !d.symptom {
			d.symptom = true
			d.note("TensorFlow prints this line on every machine without a GPU set up ('Ignore above cudart dlerror if you do not have a GPU set up on your machine'), and the paste shows no GPU: it matters only if this machine has one.")
			d.reasons = append(d.reasons, "explain.cuda_libs_fix")
		}
		if !hasTFFix || d.noFix || d.onlyFixes {
			continue
		}
		switch {
		case st.has("windows"):
			// The last native-Windows GPU release's build (source_windows.md:
			// tensorflow_gpu-2.10.0, CUDA 11.2, cuDNN 8.1), or an older
			// release's own.
			row, ok := knowledge.TFBuildAnyFor("2.10.0")
			if tfv != "" && parseVer(tfv).cmp(ver{2, 10}) < 0 {
				if r, ok2 := knowledge.TFBuildAnyFor(tfv); ok2 {
					row, ok = r, true
				}
			}
			d.noFix = true
			if ok && row.CUDA != "" && row.CUDNN != "" {
				d.note("On native Windows pip install 'tensorflow[and-cuda]' does not apply (the extra is Linux-only, and TensorFlow's GPU support on native Windows ends with 2.10): install the CUDA %s and cuDNN %s that TensorFlow %s was built with (tensorflow.org/install/source_windows, tested build configurations) and put their bin folders on PATH, or in conda: conda install -c conda-forge cudatoolkit=%s cudnn=%s. Later releases: use WSL 2.", row.CUDA, row.CUDNN, majorMinorOf(row.TF), row.CUDA, row.CUDNN)
			}
			d.reasons = append(d.reasons, "explain.cuda_libs_fix")
		case tfv != "" && parseVer(tfv).cmp(andCUDAFirst) < 0:
			row, ok := knowledge.TFBuildAnyFor(tfv)
			d.noFix = true
			if ok && row.CUDA != "" && row.CUDNN != "" {
				d.note("TensorFlow %s has no [and-cuda] extra (it starts with 2.14: unpinned, pip would upgrade TensorFlow to a release built for another CUDA): install the CUDA %s and cuDNN %s libraries TensorFlow %s was built with (tensorflow.org/install/source#gpu, tested build configurations) and put their lib64 folder on the loader path, or move to TensorFlow 2.14 or later with its [and-cuda] extra.", tfv, row.CUDA, row.CUDNN, majorMinorOf(row.TF))
			}
			d.ev("tf_version", tfv)
			d.reasons = append(d.reasons, "explain.cuda_libs_fix")
		}
	}
}

// newGPUOnBusRE is an lspci NVIDIA line of a Turing or later chip (TU,
// GA, AD, GH, GB): a machine with one is not refused wholesale.
var newGPUOnBusRE = regexp.MustCompile(`(?i)NVIDIA Corporation (?:TU|GA|AD|GH|GB)\d{3}`)

func reasonOpenModuleOldGPU(st *explainState) {
	if !st.has("open_kernel_module") || !st.has("pre_turing_gpu_on_bus") {
		return
	}
	for _, l := range st.contexts["nvidia_gpu_on_bus"] {
		if newGPUOnBusRE.MatchString(l.Text) {
			return
		}
	}
	if len(st.draftsWithCause("open_kernel_module_unsupported_gpu")) > 0 {
		return // the kernel's own line says it
	}
	for _, d := range st.drafts {
		if !d.is(roleSMINoDevices) || !d.symptom {
			continue
		}
		d.cause = "open_kernel_module_unsupported_gpu"
		d.link = st.lib.linkOf(d.cause)
		d.symptom = false
		d.noFix = false
		d.title = "The NVIDIA open kernel module does not drive this GPU (older than Turing)"
		d.detail = "The open flavour of the NVIDIA kernel module is loaded and the GPU is older than Turing: the open modules support Turing and later GPUs only (open-gpu-kernel-modules README, Compatible GPUs), so the driver finds no device it can use. Install the proprietary kernel module flavour of the driver (Ubuntu: nvidia-driver-<branch> rather than nvidia-driver-<branch>-open; the default from the 560 series is the open one), from a branch that still supports this GPU, and reboot."
		d.ev("open_module_lines", firstN(st.contexts["open_kernel_module"], 1))
		d.ev("gpu_lines", firstN(st.contexts["pre_turing_gpu_on_bus"], 2))
		d.reasons = append(d.reasons, "explain.open_module_old_gpu")
	}
}

func reasonFixedLater(st *explainState) {
	lastOK := 0
	var okHit hit
	for _, h := range st.success {
		if h.line > lastOK {
			lastOK, okHit = h.line, h
		}
	}
	if lastOK == 0 {
		return
	}
	for _, d := range st.drafts {
		if d.sig == nil || d.benign || d.severity != checks.SevError || len(d.lines) == 0 || d.count > len(d.lines) {
			continue
		}
		last := 0
		for _, l := range d.lines {
			if l.Line > last {
				last = l.Line
			}
		}
		if last >= lastOK {
			continue
		}
		d.note("Line %d, after this failure, shows the GPU in use (%q): if that run is the same program in the same environment, what was changed in between fixed this.", lastOK, strings.TrimSpace(okHit.text))
		d.ev("later_success_line", quote(okHit))
		d.reasons = append(d.reasons, "explain.fixed_later")
	}
}
