package rules

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/tfdoctor/doctor/checks"
)

// A cause's fixes (causes.json) are written for TensorFlow, doctor's
// subject: 'pip install tensorflow[and-cuda]', allow-growth, TF's Python
// ranges. A finding whose evidence is another framework's (a PyTorch OOM,
// a Paddle cuDNN warning, an OpenCV build without CUDA) must not print
// them. Its framework is the signature's (or a value case's) `framework`
// attribute; an undeclared signature takes it from its matched lines when
// they name exactly one framework and it is not TensorFlow.

// FrameworkTensorFlow is the framework whose fixes the causes carry.
const FrameworkTensorFlow = "tensorflow"

// frameworks are the values a signature's framework attribute may take;
// "other" is a finding of no framework (a source build, a pip package)
// that TensorFlow's fixes do not fit either.
var frameworks = map[string]bool{
	FrameworkTensorFlow: true, "pytorch": true, "jax": true, "paddle": true, "opencv": true,
	"cupy": true, "onnxruntime": true, "mxnet": true, "other": true,
}

// tfOnlyFixes are catalog fixes that only make sense for TensorFlow.
var tfOnlyFixes = map[string]bool{
	checks.FixPipInstallTensorFlow: true, checks.FixTFAllowGrowth: true, checks.FixPipUninstall: true,
	checks.FixNewEnvPython: true, checks.FixUseWSL2: true, checks.FixOlderTensorFlow: true,
	checks.FixTFMemoryGrowth: true,
}

// fixFrameworks limits a fix to the frameworks its steps are written for.
var fixFrameworks = map[string][]string{
	checks.FixFrameworkGPUBuild: {"pytorch", "jax", "onnxruntime"},
}

// lineFrameworks names a framework from a matched line (the first match
// of each expression counts). any lists lower-case words one of which
// every match contains: a cheap test before the expression runs.
var lineFrameworks = []struct {
	name string
	any  []string
	re   *regexp.Regexp
}{
	{FrameworkTensorFlow, []string{"tensorflow", "tf.", "stream_executor", "keras"}, regexp.MustCompile(`(?i)tensorflow|\btf\.|stream_executor|\bkeras\b`)},
	{"pytorch", []string{"torch", "xformers", "bitsandbytes", "flash", "deepspeed", "apex", "detectron2", "mmcv"}, regexp.MustCompile(`(?i)\btorch|pytorch|xformers|bitsandbytes|flash[_-]?attn|deepspeed|\bapex\b|torchvision|detectron2|mmcv`)},
	{"paddle", []string{"paddle"}, regexp.MustCompile(`(?i)paddle`)},
	{"opencv", []string{"opencv", "cv2"}, regexp.MustCompile(`(?i)opencv|\bcv2\b`)},
	{"jax", []string{"jax"}, regexp.MustCompile(`(?i)\bjax(?:lib)?\b`)},
	{"cupy", []string{"cupy"}, regexp.MustCompile(`(?i)\bcupy(?:_backends)?\b`)},
	{"onnxruntime", []string{"onnxruntime"}, regexp.MustCompile(`(?i)onnxruntime`)},
	{"mxnet", []string{"mxnet"}, regexp.MustCompile(`(?i)\bmxnet\b`)},
	// GPU libraries and programs that are none of the frameworks above: a
	// finding on their lines gets neither TensorFlow's fixes nor the
	// PyTorch/JAX/ONNX Runtime reinstall (FFmpeg's h264_nvenc, LightGBM,
	// XGBoost, faiss, dlib, CatBoost, CTranslate2, llama.cpp/ggml).
	{"other", []string{"lightgbm", "xgboost", "faiss", "ffmpeg", "_nvenc", "_cuvid", "dlib", "catboost", "ctranslate2", "llama.cpp", "llama_cpp", "ggml"}, regexp.MustCompile(`(?i)\blightgbm\b|xgboost|\bfaiss\b|ffmpeg|\w_(?:nvenc|cuvid)\b|\bdlib\b|catboost|ctranslate2|llama[._]cpp|\bggml`)},
}

// lineFrameworksOf returns the frameworks a line names.
func lineFrameworksOf(text string) []string {
	var out []string
	low := strings.ToLower(text)
	for _, lf := range lineFrameworks {
		hit := false
		for _, w := range lf.any {
			if strings.Contains(low, w) {
				hit = true
				break
			}
		}
		if hit && lf.re.MatchString(text) {
			out = append(out, lf.name)
		}
	}
	return out
}

// frameworkOf is the framework of a draft's evidence ("" when unknown:
// TensorFlow's fixes stay, doctor's subject).
func frameworkOf(d *draft) string {
	if d.framework != "" {
		return d.framework
	}
	if len(d.lineFw) == 1 {
		for name := range d.lineFw {
			return name
		}
	}
	return ""
}

// tfStep reports whether a fix step is written for TensorFlow alone.
func tfStep(s string) bool {
	l := strings.ToLower(s)
	return (strings.Contains(l, "tensorflow") || strings.Contains(l, "tf 2.")) && !strings.Contains(l, "pytorch")
}

// fixesFor keeps the fixes that fit framework fw: none of TensorFlow's
// for another framework's finding, and no TensorFlow step inside a
// generic fix (a fix left without steps is dropped).
func fixesFor(fw string, fixes []checks.Fix) []checks.Fix {
	if fw == "" || fw == FrameworkTensorFlow {
		return fixes
	}
	out := fixes[:0:0]
	for _, f := range fixes {
		if tfOnlyFixes[f.ID] {
			continue
		}
		if only, ok := fixFrameworks[f.ID]; ok && !contains(only, fw) {
			continue
		}
		if tfStep(f.Title) {
			continue
		}
		steps := make([]string, 0, len(f.Steps))
		for _, s := range f.Steps {
			if sf := stepFramework(s); !tfStep(s) && (sf == "" || sf == fw) {
				steps = append(steps, s)
			}
		}
		if len(f.Steps) > 0 && len(steps) == 0 {
			continue
		}
		f.Steps = steps
		out = append(out, f)
	}
	return out
}

// stepLeads are the heads of a fix step written for one framework
// ('JAX: python -m pip install -U "jax[cuda12]"'); bitsandbytes runs on
// PyTorch.
var stepLeads = []struct{ lead, fw string }{
	{"PyTorch:", "pytorch"}, {"bitsandbytes:", "pytorch"}, {"JAX:", "jax"}, {"ONNX Runtime:", "onnxruntime"},
	{"CuPy:", "cupy"}, {"PaddlePaddle:", "paddle"},
}

// stepFramework is the framework a fix step is written for ("" for
// every framework): a JAX finding gets no PyTorch reinstall.
func stepFramework(s string) string {
	s = strings.TrimSpace(s)
	for _, l := range stepLeads {
		if strings.HasPrefix(s, l.lead) {
			return l.fw
		}
	}
	return ""
}

// frameworkNames are the frameworks as a title names them.
var frameworkNames = map[string]string{
	FrameworkTensorFlow: "TensorFlow", "pytorch": "PyTorch", "jax": "JAX", "paddle": "PaddlePaddle",
	"opencv": "OpenCV", "cupy": "CuPy", "onnxruntime": "ONNX Runtime", "mxnet": "MXNet",
}

// frameworkWords are what a title already naming the framework contains.
var frameworkWords = map[string][]string{
	FrameworkTensorFlow: {"tensorflow", "keras", "xla"}, "pytorch": {"torch"}, "jax": {"jax"},
	"paddle": {"paddle"}, "opencv": {"opencv"}, "cupy": {"cupy"}, "onnxruntime": {"onnx"}, "mxnet": {"mxnet"},
}

// properNouns keep their capital after a framework's name.
var properNouns = map[string]bool{
	"Windows": true, "Linux": true, "Python": true, "Docker": true, "Slurm": true, "Kubernetes": true,
	"Microsoft": true, "Jupyter": true, "Ubuntu": true, "Debian": true, "Fedora": true, "Apple": true,
	"Intel": true, "Colab": true, "Kaggle": true, "Conda": true, "Anaconda": true,
}

// titleLeadRE is a title that already says whose message it is: a name
// and a colon ('vLLM: ...').
var titleLeadRE = regexp.MustCompile(`^[\w.+-]+(?: [\w.+-]+)?: `)

// titleWithFramework names the framework whose message a finding is at the
// head of its title ('PyTorch: the GPU ran out of memory'), unless the
// title already names it or says whose message it is.
func titleWithFramework(fw, title string) string {
	name := frameworkNames[fw]
	if name == "" || title == "" || titleLeadRE.MatchString(title) {
		return title
	}
	low := strings.ToLower(title)
	for _, w := range frameworkWords[fw] {
		if strings.Contains(low, w) {
			return title
		}
	}
	// Lower the first letter of an ordinary word ('The' -> 'the', 'A' ->
	// 'a'), not of a name or an acronym ('CUDA', 'TensorRT', 'Windows').
	first, _, _ := strings.Cut(title, " ")
	if first == "" { // a title that starts with a space has no first word to lower
		return name + ": " + strings.TrimSpace(title)
	}
	r := []rune(title)
	word := unicode.IsUpper(r[0]) && !properNouns[first]
	for _, c := range []rune(first)[1:] {
		if !unicode.IsLower(c) {
			word = false
			break
		}
	}
	if word {
		r[0] = unicode.ToLower(r[0])
	}
	return name + ": " + string(r)
}
