package verify

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tfdoctor/doctor/host"
)

// ProbeScript is the framework probe, run with `python -c` in the examined
// environment. It is a file of its own so that CI compiles it.
//
//go:embed probe.py
var ProbeScript string

// ProbeSchema is the version of the probe's result line.
const ProbeSchema = "doctor.probe/v1"

const (
	probeResultMark = "DOCTOR_PROBE_RESULT "
	probeStageMark  = "DOCTOR_PROBE_STAGE "
)

// FrameworkNames are how frameworks are called in reports.
var FrameworkNames = map[string]string{"tensorflow": "TensorFlow", "torch": "PyTorch", "jax": "JAX", "cupy": "CuPy"}

// probeRequest is the line the probe reads first.
type probeRequest struct {
	Framework string `json:"framework"`
	Size      int    `json:"size"`
	Runs      int    `json:"runs"`
	Samples   int    `json:"samples"`
	Gate      bool   `json:"gate"`
}

// probeResult is the probe's result line (schema doctor.probe/v1).
type probeResult struct {
	Schema              string            `json:"schema"`
	Status              string            `json:"status"`
	Stage               string            `json:"stage"`
	Python              string            `json:"python"`
	Executable          string            `json:"executable"`
	Prefix              string            `json:"prefix"`
	Installed           []string          `json:"installed"`
	TensorFlowInstalled bool              `json:"tensorflow_installed"`
	Framework           string            `json:"framework"`
	FrameworkVersion    string            `json:"framework_version"`
	Build               map[string]string `json:"build"`
	BuiltWithCUDA       *bool             `json:"built_with_cuda"`
	Devices             []string          `json:"devices"`
	Device              *struct {
		Name              string `json:"name"`
		ComputeCapability string `json:"compute_capability"`
	} `json:"device"`
	ImportS    float64      `json:"import_s"`
	InitS      float64      `json:"init_s"`
	GateWaitS  float64      `json:"gate_wait_s"`
	DurationS  float64      `json:"duration_s"`
	Figure     *probeFigure `json:"figure"`
	Error      string       `json:"error"`
	ErrorType  string       `json:"error_type"`
	Traceback  string       `json:"traceback"`
	lastStage  string
	stageLines int
}

type probeFigure struct {
	DType     string  `json:"dtype"`
	M         int     `json:"m"`
	N         int     `json:"n"`
	K         int     `json:"k"`
	MedianS   float64 `json:"median_s"`
	MinS      float64 `json:"min_s"`
	MaxS      float64 `json:"max_s"`
	Runs      int     `json:"runs"`
	PerSample int     `json:"per_sample"`
	TFLOPS    float64 `json:"tflops"`
	Checked   int     `json:"checked"`
	MaxError  float64 `json:"max_error"`
	Tolerance float64 `json:"tolerance"`
	Correct   bool    `json:"correct"`
	Placement string  `json:"placement"`
}

// startFramework starts the probe in the examined Python.
func (o Options) startFramework(s *step) {
	py, how, err := o.Python, o.pythonFrom, o.pythonErr
	if err != nil {
		s.done = &host.Rung{Name: host.RungFramework, Status: host.RungSkip,
			Summary: "no Python to probe: " + err.Error()}
		return
	}
	samples := o.Samples
	if samples <= 0 || samples > 64 {
		samples = 16
	}
	req, _ := json.Marshal(probeRequest{Framework: o.Framework, Size: o.Size, Runs: o.Runs, Samples: samples,
		Gate: len(o.Rungs) > 1 && o.Rungs[0] != host.RungFramework})
	// "/" as the working folder: a folder named like a framework in the
	// current one would shadow the installed package.
	p, err := startProc([]string{py, "-c", ProbeScript}, o.Environ, "/", append(req, '\n'))
	if err != nil {
		s.done = &host.Rung{Name: host.RungFramework, Status: host.RungFail, Cause: causeComputeFailed,
			Python: py, Summary: "could not start " + py, Error: err.Error()}
		return
	}
	s.proc = p
	s.finish = func(out outcome, pid int) host.Rung {
		r := frameworkResult(out, environMap(o.Environ))
		r.PID = pid
		if r.Python == "" {
			r.Python = py
		}
		if how != "" {
			r.Facts["python_from"] = how
		}
		return r
	}
}

// parseProbeOutput reads the probe's stage lines and result line from its
// standard output. ok is false when no result line was printed (the probe
// crashed or was killed); the last stage is still returned.
func parseProbeOutput(stdout []byte) (res probeResult, ok bool) {
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		l := strings.TrimRight(string(line), "\r")
		switch {
		case strings.HasPrefix(l, probeStageMark):
			res.lastStage = strings.TrimSpace(strings.TrimPrefix(l, probeStageMark))
			res.stageLines++
		case strings.HasPrefix(l, probeResultMark):
			var r probeResult
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l, probeResultMark)), &r); err != nil {
				continue
			}
			if !strings.HasPrefix(r.Schema, ProbeSchema) {
				continue
			}
			switch r.Status {
			case "pass", "fail", "skip":
			default:
				continue
			}
			r.lastStage, r.stageLines = res.lastStage, res.stageLines
			res, ok = r, true
		}
	}
	return res, ok
}

// frameworkResult turns the probe's output into the framework rung.
func frameworkResult(out outcome, env map[string]string) host.Rung {
	r := host.Rung{Name: host.RungFramework, Facts: map[string]string{}}
	r.DurationMS = float64(out.duration.Microseconds()) / 1000
	r.Stderr = tail(out.stderr, 32<<10)
	res, ok := parseProbeOutput(out.stdout)
	if !ok {
		r.Status = host.RungFail
		r.TimedOut = out.timedOut
		stage := res.lastStage
		if stage == "" {
			stage = "start"
		}
		r.API = "stage " + stage
		r.Error = "the framework probe " + out.describe() + " (last stage: " + stage + ")"
		r.Cause = classifyCrash(stage, out, r.Stderr, env)
		r.Summary = "the framework probe did not finish: " + out.describe()
		if stage == "gate" {
			// Killed while waiting for the rung below: not the
			// framework's fault.
			r.Summary = "the framework probe was stopped before its GPU work (the ladder ran out of time)"
		}
		return r
	}
	r.Python = res.Executable
	r.Framework = res.Framework
	r.FrameworkVersion = res.FrameworkVersion
	if res.Python != "" {
		r.Facts["python_version"] = res.Python
	}
	if len(res.Installed) > 0 {
		r.Facts["frameworks_installed"] = strings.Join(res.Installed, ",")
	}
	for k, v := range res.Build {
		r.Facts["build."+k] = v
	}
	if res.BuiltWithCUDA != nil {
		r.Facts["built_with_cuda"] = strconv.FormatBool(*res.BuiltWithCUDA)
	}
	if res.ImportS > 0 {
		r.Facts["import_s"] = fmt.Sprintf("%.2f", res.ImportS)
	}
	if res.InitS > 0 {
		r.Facts["gpu_init_s"] = fmt.Sprintf("%.2f", res.InitS)
	}
	if len(res.Devices) > 0 {
		r.Facts["devices"] = strings.Join(res.Devices, ",")
	}
	if res.Device != nil && res.Device.Name != "" {
		r.Device = &host.RungDevice{Name: res.Device.Name, ComputeCapability: res.Device.ComputeCapability, Count: len(res.Devices)}
	}
	name := FrameworkNames[res.Framework]
	if name == "" {
		name = res.Framework
	}
	if f := res.Figure; f != nil {
		fig := host.Figure{DType: f.DType, M: f.M, N: f.N, K: f.K, TFLOPS: f.TFLOPS,
			MedianMS: 1000 * f.MedianS, MinMS: 1000 * f.MinS, MaxMS: 1000 * f.MaxS,
			Runs: f.Runs, PerSample: f.PerSample, Timing: "forced_completion",
			Checked: f.Checked, MaxError: f.MaxError, Tolerance: f.Tolerance, Correct: f.Correct}
		if r.Device != nil {
			fig.ExpectedTFLOPS, _ = expectedTFLOPS(r.Device.Name, f.DType)
		}
		r.Figures = append(r.Figures, fig)
		if f.Placement != "" {
			r.Facts["placement"] = f.Placement
		}
	}
	prefix := ""
	if res.Framework != "" && res.Framework != "tensorflow" && !res.TensorFlowInstalled {
		prefix = "TensorFlow not installed; "
	}
	switch res.Status {
	case "skip":
		r.Status = host.RungSkip
		r.Cause = causeTFNotInstalled
		r.Summary = res.Error + " in " + res.Executable
		return r
	case "pass":
		r.Status = host.RungPass
		what := "GPU stack verified with " + name + " " + res.FrameworkVersion
		if res.Framework == "tensorflow" {
			what = "TensorFlow " + res.FrameworkVersion + " computes on the GPU"
		}
		if len(r.Figures) > 0 {
			f := r.Figures[0]
			what += fmt.Sprintf(": %s matmul %d³ on %s, %s; result checked", f.DType, f.M, r.Facts["placement"], strings.TrimPrefix(figureText(f), f.DType+" "))
		}
		r.Summary = prefix + what
		return r
	}
	r.Status = host.RungFail
	r.Error = res.Error
	r.Code = res.ErrorType
	r.API = "stage " + res.Stage
	if res.Traceback != "" {
		r.Facts["traceback"] = lastLines(res.Traceback, 12)
	}
	r.Cause = classifyProbeFailure(res, r.Stderr, env)
	switch res.Stage {
	case "import":
		r.Summary = prefix + "import " + res.Framework + " failed: " + firstLine(res.Error)
	case "devices":
		r.Summary = prefix + name + " " + res.FrameworkVersion + " does not see the GPU"
	default:
		r.Summary = prefix + name + " " + res.FrameworkVersion + " failed at " + res.Stage + ": " + firstLine(res.Error)
	}
	return r
}

var (
	// Framework logs name a CUDA error by its driver or runtime API name.
	cudaErrorRE = regexp.MustCompile(`\b(CUDA_ERROR_[A-Z_]+)\b`)
	// PyTorch's warning: "CUDA initialization: ... (Triggered internally
	// at ...)" carries "Error 804: forward compatibility ...".
	cudaRuntimeErrorRE = regexp.MustCompile(`\bError (\d{1,3}): `)
	// TensorFlow's dso_loader: "Could not load dynamic library
	// 'libcudnn.so.8'"; XLA's dlopen wrappers print the soname too.
	missingLibRE = regexp.MustCompile(`(?:Could not load dynamic library|cannot open shared object file|Cannot dlopen)[^\n]*?'?(lib(?:cudart|cublas|cublasLt|cudnn|cufft|cusparse|cusolver)\b)`)
	libNameRE    = regexp.MustCompile(`\blib(cudart|cublasLt|cublas|cudnn|cufft|cusparse|cusolver)\.so`)
	// The loader's words for a driver library that is missing or hidden.
	libcudaRE = regexp.MustCompile(`libcuda\.so(\.1)?: (cannot open shared object file|file too short|invalid ELF header)`)
)

// libCause maps a library's name to its *_missing cause label.
var libCause = map[string]string{
	"cudart": "libcudart_missing", "cublas": "libcublas_missing", "cublasLt": "libcublas_missing",
	"cudnn": "libcudnn_missing", "cufft": "libcufft_missing", "cusparse": "libcusparse_missing",
	"cusolver": "libcusolver_missing",
}

// textSignatures are framework messages that name a cause without a CUDA
// error name (PyTorch's warnings, mostly).
var textSignatures = []struct{ text, cause string }{
	// PyTorch, when cudart finds no libcuda (cudaErrorInsufficientDriver
	// with driver version 0).
	{"Found no NVIDIA driver on your system", causeDriverMissing},
	{"CUDA unknown error", causeCuInitUnknown},
	{"driver on your system is too old", causeDriverTooOld},
	{"CUDA driver version is insufficient", causeDriverTooOld},
	{"forward compatibility was attempted on non supported HW", causeDriverTooOld},
	{"unsupported display driver / cuda driver combination", causeDriverMismatch},
	{"Driver/library version mismatch", causeDriverMismatch},
}

func signatureCause(text string) string {
	for _, s := range textSignatures {
		if strings.Contains(text, s.text) {
			return s.cause
		}
	}
	return ""
}

// classifyProbeFailure picks the cause of a failed probe from its stage,
// the exception and the framework's log. It knows only the commonest
// signatures; doctor explain's log signatures refine it (package rules,
// explainFrameworkFailure, after the checks).
func classifyProbeFailure(res probeResult, stderr string, env map[string]string) string {
	text := res.Error + "\n" + res.Traceback
	e := envFrom(env)
	switch res.Stage {
	case "import":
		if c := missingLibCause(text); c != "" {
			return c
		}
		return causeFrameworkImport
	case "devices", "init":
		if res.BuiltWithCUDA != nil && !*res.BuiltWithCUDA {
			return causeTFCPUOnly
		}
		if c := signatureCause(stderr + "\n" + text); c != "" {
			return c
		}
		if c := cudaErrorCause(stderr+"\n"+text, e); c != "" {
			return c
		}
		if c := missingLibCause(stderr + "\n" + text); c != "" {
			return c
		}
		if e.CVDSet && !visibleDevicesUsable(e.CUDAVisibleDevices) {
			return causeCVDHides
		}
		if strings.Contains(stderr, "Could not find cuda drivers") || strings.Contains(stderr, "Skipping registering GPU devices") {
			return causeTFCPUOnly // the CUDA libraries of [and-cuda] are missing
		}
		return causeComputeFailed
	}
	low := strings.ToLower(text + "\n" + stderr)
	switch {
	case strings.Contains(low, "out of memory") || strings.Contains(low, "resource_exhausted") || strings.Contains(low, "oom when allocating"):
		return causeOOM
	case strings.Contains(low, "ptxas") || strings.Contains(low, "libdevice"):
		return causeXLA
	case strings.Contains(low, "no kernel image is available") || strings.Contains(low, "kernel image is invalid"):
		return causeUnsupportedCC
	}
	if c := cudaErrorCause(text+"\n"+stderr, e); c != "" {
		return c
	}
	if c := signatureCause(text + "\n" + stderr); c != "" {
		return c
	}
	return causeComputeFailed
}

// classifyCrash picks the cause of a probe that printed no result.
func classifyCrash(stage string, out outcome, stderr string, env map[string]string) string {
	if strings.Contains(stderr, "jit-compiled from PTX") || strings.Contains(stderr, "compiled from PTX") {
		return causeUnsupportedCC
	}
	if c := cudaErrorCause(stderr, envFrom(env)); c != "" {
		return c
	}
	switch {
	case out.timedOut && (stage == "import" || stage == "start"):
		return causeFrameworkImport
	case out.timedOut:
		return causeUnresponsive
	case stage == "import":
		if c := missingLibCause(stderr); c != "" {
			return c
		}
		return causeFrameworkImport
	}
	return causeComputeFailed
}

func envFrom(m map[string]string) env {
	v, ok := m["CUDA_VISIBLE_DEVICES"]
	return env{CUDAVisibleDevices: v, CVDSet: ok, WSL: isWSL()}
}

// visibleDevicesUsable is a rough test that CUDA_VISIBLE_DEVICES names at
// least one device: its first entry is a non-negative index or a UUID.
func visibleDevicesUsable(v string) bool {
	first := strings.TrimSpace(strings.Split(v, ",")[0])
	if first == "" {
		return false
	}
	if n, err := strconv.Atoi(first); err == nil {
		return n >= 0
	}
	low := strings.ToLower(first)
	return strings.HasPrefix(low, "gpu-") || strings.HasPrefix(low, "mig-")
}

// cudaErrorCause finds a CUDA error name or number in a log and maps it.
func cudaErrorCause(text string, e env) string {
	if m := cudaErrorRE.FindStringSubmatch(text); m != nil {
		if code := cuResultCode(m[1]); code >= 0 {
			return causeOfCUresult("cuInit", code, e)
		}
	}
	if m := cudaRuntimeErrorRE.FindStringSubmatch(text); m != nil {
		if code, err := strconv.Atoi(m[1]); err == nil && code != 0 {
			if _, known := cuResultNames[code]; known {
				return causeOfCUresult("cuInit", code, e)
			}
		}
	}
	return ""
}

// missingLibCause finds a CUDA library that could not be loaded.
func missingLibCause(text string) string {
	if libcudaRE.MatchString(text) {
		return causeDriverMissing
	}
	if m := missingLibRE.FindStringSubmatch(text); m != nil {
		return libCause[strings.TrimPrefix(m[1], "lib")]
	}
	if strings.Contains(text, "cannot open shared object file") {
		if m := libNameRE.FindStringSubmatch(text); m != nil {
			return libCause[m[1]]
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
