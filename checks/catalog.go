package checks

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Fix IDs are stable: `doctor fix ID` names them on the command line, the
// JSON report carries them, and every package that emits a fix (checks,
// explain, watch) or applies one (fixes) takes it from the catalog below.
const (
	// Applied by doctor --fix.
	FixUnsetCUDAVisibleDevices = "unset-cuda-visible-devices"
	FixLoadNvidiaUVM           = "load-nvidia-uvm"
	FixCreateDeviceNodes       = "create-device-nodes"
	FixDeviceGroup             = "device-group"
	FixBlacklistNouveau        = "blacklist-nouveau"
	FixModprobeNvidia          = "modprobe-nvidia"
	FixDKMSRebuild             = "dkms-rebuild"
	FixInstallDriver           = "install-driver"
	FixWSLRemoveLinuxDriver    = "wsl-remove-linux-driver"
	FixWSLLdConf               = "wsl-ldconf"
	FixStopGPUProcess          = "stop-gpu-process"
	FixTFAllowGrowth           = "tf-allow-growth"
	FixPipInstallTensorFlow    = "pip-install-tensorflow"
	FixPipUninstall            = "pip-uninstall"
	FixLDLibraryPath           = "ld-library-path"
	FixXLACudaDataDir          = "xla-cuda-data-dir"
	FixIpykernelInstall        = "ipykernel-install"
	FixCondaReinstall          = "conda-reinstall"

	// Printed only (Manual): the other side, a reboot, the hardware, the
	// user's own code.
	FixReboot              = "reboot"
	FixWindowsDriver       = "windows-driver"
	FixWSLSetVersion2      = "wsl-set-version-2"
	FixContainerGPUs       = "container-gpus"
	FixSecureBootSign      = "secure-boot-sign"
	FixGPUDrainAndReboot   = "gpu-drain-and-reboot"
	FixPCIeReseat          = "pcie-reseat"
	FixAskAdminComputeMode = "ask-admin-compute-mode"
	FixUseFreeGPU          = "use-free-gpu"
	FixAskAdminMIG         = "ask-admin-mig"
	FixFreeDisk            = "free-disk"
	FixCheckCooling        = "check-cooling"
	FixLdconfig            = "ldconfig"
	FixInstallPython       = "install-python"
	FixNewEnvPython        = "new-env-supported-python"
	FixUseWSL2             = "use-wsl2"
	FixOlderTensorFlow     = "older-tensorflow"
	FixXidAction           = "xid-action"
	FixFrameworkGPUBuild   = "framework-gpu-build"
	FixDevShm              = "dev-shm"
	// doctor watch's advice on the user's training code.
	FixRunDoctor         = "run-doctor"
	FixTFDataParallelMap = "tf-data-parallel-map"
	FixTFDataPrefetch    = "tf-data-prefetch"
	FixTFDataCache       = "tf-data-cache"
	FixTFLargerBatch     = "tf-larger-batch"
	FixTFMixedPrecision  = "tf-mixed-precision"
	FixTFXLA             = "tf-xla-jit-compile"
	FixTFMemoryGrowth    = "tf-memory-growth"
)

// ParamKind is the type of a fix parameter's value.
type ParamKind string

const (
	ParamText ParamKind = "text" // any text, one line
	ParamPath ParamKind = "path" // an absolute path
	ParamInt  ParamKind = "int"  // a non-negative decimal integer
	ParamBool ParamKind = "bool" // "true" or "false"
	ParamList ParamKind = "list" // names separated by spaces (packages)
	ParamEnv  ParamKind = "env"  // an environment kind: venv, conda, system
	// ParamPathList is a colon-separated list of folders (PATH-like).
	ParamPathList ParamKind = "path_list"
)

// Param is one parameter a fix's applier reads from Fix.Params.
type Param struct {
	Name     string    `json:"name"`
	Kind     ParamKind `json:"kind"`
	Required bool      `json:"required,omitempty"`
	Doc      string    `json:"doc"`
}

// FixSpec is one entry of the fix catalog: what is true of a fix whatever
// finding carries it.
type FixSpec struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Risk is the least risk the fix carries: a finding or a plan may
	// raise it, never lower it.
	Risk Risk `json:"risk"`
	// NeedsRoot fixes always need root; others may still need it on a
	// given machine (a process of another user).
	NeedsRoot bool `json:"needs_root"`
	// Manual fixes are only printed: doctor cannot apply them.
	Manual bool    `json:"manual"`
	Params []Param `json:"params,omitempty"`
}

// The parameters a Python-environment fix carries (envParams); the
// interpreter is required where the fix runs it (pyEnvSchema).
var envSchema = []Param{
	{Name: "python", Kind: ParamPath, Doc: "the examined interpreter"},
	{Name: "env_prefix", Kind: ParamPath, Doc: "the environment's prefix (sys.prefix)"},
	{Name: "env_kind", Kind: ParamEnv, Doc: "venv, conda or system"},
}

var pyEnvSchema = append([]Param{{Name: "python", Kind: ParamPath, Required: true,
	Doc: "the interpreter that runs the fix (the new venv's, with create_venv)"}}, envSchema[1:]...)

func withSchema(base []Param, more ...Param) []Param {
	return append(append([]Param{}, base...), more...)
}

// catalog is the one list of fix IDs.
var catalog = []FixSpec{
	{ID: FixUnsetCUDAVisibleDevices, Title: "Stop hiding the GPU (CUDA_VISIBLE_DEVICES)", Risk: RiskSafe,
		Params: withSchema(envSchema)},
	{ID: FixLoadNvidiaUVM, Title: "Load nvidia_uvm and create its device node", Risk: RiskSafe, NeedsRoot: true},
	{ID: FixCreateDeviceNodes, Title: "Create the GPU device nodes", Risk: RiskSafe, NeedsRoot: true},
	{ID: FixDeviceGroup, Title: "Let the user open the GPU device nodes", Risk: RiskModerate, NeedsRoot: true,
		Params: []Param{
			{Name: "group", Kind: ParamText, Required: true, Doc: "the group that owns /dev/nvidia*"},
			{Name: "user", Kind: ParamText, Required: true, Doc: "the user to add to it"},
		}},
	{ID: FixBlacklistNouveau, Title: "Blacklist nouveau and rebuild the initramfs", Risk: RiskModerate, NeedsRoot: true},
	{ID: FixModprobeNvidia, Title: "Load the NVIDIA kernel module", Risk: RiskModerate, NeedsRoot: true},
	{ID: FixDKMSRebuild, Title: "Build the NVIDIA module for the running kernel", Risk: RiskModerate, NeedsRoot: true},
	{ID: FixInstallDriver, Title: "Install the NVIDIA driver", Risk: RiskDangerous, NeedsRoot: true},
	{ID: FixWSLRemoveLinuxDriver, Title: "Remove the Linux NVIDIA driver from WSL", Risk: RiskModerate, NeedsRoot: true,
		Params: []Param{{Name: "packages", Kind: ParamList, Doc: "the driver packages to remove"}}},
	{ID: FixWSLLdConf, Title: "Add /usr/lib/wsl/lib to the loader's path", Risk: RiskSafe, NeedsRoot: true},
	{ID: FixStopGPUProcess, Title: "Stop a process that holds the GPU", Risk: RiskDangerous,
		Params: []Param{
			{Name: "pid", Kind: ParamInt, Required: true, Doc: "the process to stop"},
			{Name: "user", Kind: ParamText, Doc: "its owner"},
			{Name: "command", Kind: ParamText, Doc: "its command line, to check it is still the same process"},
			{Name: "gpu", Kind: ParamInt, Doc: "the GPU it holds"},
		}},
	{ID: FixTFAllowGrowth, Title: "Let TensorFlow allocate GPU memory as needed", Risk: RiskSafe,
		Params: withSchema(envSchema)},
	{ID: FixPipInstallTensorFlow, Title: "Install TensorFlow with its CUDA libraries", Risk: RiskModerate,
		Params: withSchema(pyEnvSchema,
			Param{Name: "requirement", Kind: ParamText, Required: true, Doc: "the pip requirement, e.g. tensorflow[and-cuda]==2.20.0"},
			Param{Name: "create_venv", Kind: ParamPath, Doc: "the system interpreter to make the new venv (python) with"},
			Param{Name: "force_reinstall", Kind: ParamBool, Doc: "reinstall though the same version is present"},
		)},
	{ID: FixPipUninstall, Title: "Uninstall conflicting TensorFlow distributions", Risk: RiskModerate,
		Params: withSchema(pyEnvSchema,
			Param{Name: "packages", Kind: ParamList, Required: true, Doc: "the distributions to uninstall"})},
	{ID: FixLDLibraryPath, Title: "Take foreign CUDA folders off LD_LIBRARY_PATH", Risk: RiskModerate,
		Params: withSchema(envSchema,
			Param{Name: "value", Kind: ParamPathList, Doc: `the new value ("" to unset)`},
			Param{Name: "remove", Kind: ParamPathList, Doc: "the folders taken off"})},
	{ID: FixXLACudaDataDir, Title: "Give XLA a CUDA folder with ptxas and libdevice", Risk: RiskSafe,
		Params: withSchema(envSchema,
			Param{Name: "dir", Kind: ParamPath, Doc: "the CUDA folder for --xla_gpu_cuda_data_dir"},
			Param{Name: "requirement", Kind: ParamText, Doc: "the pip wheel that brings ptxas, when no folder has it"})},
	{ID: FixIpykernelInstall, Title: "Register the environment as a Jupyter kernel", Risk: RiskSafe,
		Params: withSchema(pyEnvSchema,
			Param{Name: "name", Kind: ParamText, Required: true, Doc: "the kernel name"},
			Param{Name: "display_name", Kind: ParamText, Doc: "the name Jupyter shows"})},
	{ID: FixCondaReinstall, Title: "Reinstall conda packages in the environment", Risk: RiskModerate,
		Params: withSchema(envSchema,
			Param{Name: "packages", Kind: ParamList, Required: true, Doc: "the package specs to reinstall"},
			Param{Name: "channel", Kind: ParamText, Doc: "the channel to install from (-c), e.g. conda-forge"})},

	{ID: FixReboot, Title: "Reboot the machine", Risk: RiskDangerous, Manual: true},
	{ID: FixWindowsDriver, Title: "Install or update the NVIDIA driver on Windows, then restart WSL", Risk: RiskSafe, Manual: true},
	{ID: FixWSLSetVersion2, Title: "Convert the distribution to WSL 2", Risk: RiskModerate, Manual: true},
	{ID: FixContainerGPUs, Title: "Start the container with GPU access", Risk: RiskSafe, Manual: true},
	{ID: FixSecureBootSign, Title: "Enroll a Machine Owner Key and sign the module (or turn Secure Boot off)", Risk: RiskModerate, NeedsRoot: true, Manual: true},
	{ID: FixGPUDrainAndReboot, Title: "Drain the GPU and reboot", Risk: RiskDangerous, Manual: true},
	{ID: FixPCIeReseat, Title: "Check how the GPU is seated (PCIe slot, riser, power)", Risk: RiskSafe, Manual: true},
	{ID: FixAskAdminComputeMode, Title: "Ask the administrator to set the Default compute mode", Risk: RiskSafe, Manual: true},
	{ID: FixUseFreeGPU, Title: "Use a free GPU, or wait for the job that holds it", Risk: RiskSafe, Manual: true},
	{ID: FixAskAdminMIG, Title: "Create a MIG instance or disable MIG (administrator)", Risk: RiskModerate, Manual: true},
	{ID: FixFreeDisk, Title: "Free disk space", Risk: RiskSafe, Manual: true},
	{ID: FixCheckCooling, Title: "Check cooling and power", Risk: RiskSafe, Manual: true},
	{ID: FixLdconfig, Title: "Rebuild the loader cache", Risk: RiskSafe, NeedsRoot: true, Manual: true},
	{ID: FixInstallPython, Title: "Install Python 3 or name the interpreter", Risk: RiskSafe, Manual: true},
	{ID: FixNewEnvPython, Title: "Use a Python version the TensorFlow release supports", Risk: RiskSafe, Manual: true},
	{ID: FixUseWSL2, Title: "Run TensorFlow in WSL 2 (native Windows has no GPU support after TF 2.10)", Risk: RiskSafe, Manual: true},
	{ID: FixOlderTensorFlow, Title: "Use a TensorFlow build that supports this GPU, or a newer GPU", Risk: RiskSafe, Manual: true},
	{ID: FixXidAction, Title: "Act on an Xid error", Risk: RiskSafe, Manual: true,
		Params: []Param{{Name: "xid", Kind: ParamInt, Required: true, Doc: "the Xid code"}}},
	{ID: FixFrameworkGPUBuild, Title: "Install the framework's CUDA build (PyTorch, JAX, ONNX Runtime, bitsandbytes)", Risk: RiskSafe, Manual: true},
	{ID: FixDevShm, Title: "Give the job a large enough, writable /dev/shm", Risk: RiskSafe, Manual: true},
	{ID: FixRunDoctor, Title: "Run doctor in the job's environment", Risk: RiskSafe, Manual: true},
	{ID: FixTFDataParallelMap, Title: "Run the input pipeline's map() on several cores", Risk: RiskSafe, Manual: true},
	{ID: FixTFDataPrefetch, Title: "Prepare the next batches while the GPU trains", Risk: RiskSafe, Manual: true},
	{ID: FixTFDataCache, Title: "Cache the decoded dataset after the first epoch", Risk: RiskSafe, Manual: true},
	{ID: FixTFLargerBatch, Title: "Use larger batches", Risk: RiskSafe, Manual: true},
	{ID: FixTFMixedPrecision, Title: "Train in mixed precision", Risk: RiskSafe, Manual: true},
	{ID: FixTFXLA, Title: "Compile the training step with XLA", Risk: RiskSafe, Manual: true},
	{ID: FixTFMemoryGrowth, Title: "Let TensorFlow grow its GPU memory instead of taking it all", Risk: RiskSafe, Manual: true},
}

var catalogByID = func() map[string]*FixSpec {
	m := make(map[string]*FixSpec, len(catalog))
	for i := range catalog {
		m[catalog[i].ID] = &catalog[i]
	}
	return m
}()

// LookupFix returns the catalog entry of a fix ID.
func LookupFix(id string) (FixSpec, bool) {
	s, ok := catalogByID[id]
	if !ok {
		return FixSpec{}, false
	}
	return *s, true
}

// FixCatalog returns every catalog entry, applicable fixes first, each
// group sorted by ID.
func FixCatalog() []FixSpec {
	out := append([]FixSpec{}, catalog...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Manual != out[j].Manual {
			return !out[i].Manual
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Rank orders risks: safe 0, moderate 1, dangerous 2 ("" counts as safe).
func (r Risk) Rank() int {
	switch r {
	case RiskModerate:
		return 1
	case RiskDangerous:
		return 2
	}
	return 0
}

// MaxRisk returns the riskier of a and b ("" counts as safe).
func MaxRisk(a, b Risk) Risk {
	if a == "" {
		a = RiskSafe
	}
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Normalize raises a fix's risk and needs-root to its catalog entry's
// minimum and marks a printed-only fix manual. It never lowers anything.
func Normalize(fx Fix) Fix {
	s, ok := catalogByID[fx.ID]
	if !ok {
		return fx
	}
	fx.Risk = MaxRisk(fx.Risk, s.Risk)
	fx.NeedsRoot = fx.NeedsRoot || s.NeedsRoot
	fx.Manual = fx.Manual || s.Manual
	return fx
}

// CheckFix reports how fx breaks the catalog: an unknown ID, a risk or
// needs-root below the entry's, a printed-only fix not marked manual, a
// parameter that is not declared, missing when required, or of the wrong
// kind.
func CheckFix(fx Fix) error { return checkFix(fx, true) }

// CheckPrinted is CheckFix for a fix that is only shown (a log explained
// by doctor explain): its required parameters may be absent, since
// nothing applies it.
func CheckPrinted(fx Fix) error { return checkFix(fx, false) }

func checkFix(fx Fix, strict bool) error {
	s, ok := catalogByID[fx.ID]
	if !ok {
		return fmt.Errorf("fix %q is not in the fix catalog (checks/catalog.go)", fx.ID)
	}
	var errs []string
	if fx.Risk.Rank() < s.Risk.Rank() || fx.Risk == "" {
		errs = append(errs, fmt.Sprintf("risk %q is below the catalog's %q", fx.Risk, s.Risk))
	}
	if s.NeedsRoot && !fx.NeedsRoot {
		errs = append(errs, "the catalog says it needs root")
	}
	if s.Manual && !fx.Manual {
		errs = append(errs, "the catalog says it is printed only (manual)")
	}
	declared := map[string]Param{}
	for _, p := range s.Params {
		declared[p.Name] = p
		if _, ok := fx.Params[p.Name]; strict && p.Required && !ok {
			errs = append(errs, fmt.Sprintf("parameter %q is missing", p.Name))
		}
	}
	keys := make([]string, 0, len(fx.Params))
	for k := range fx.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := declared[k]
		if !ok {
			errs = append(errs, fmt.Sprintf("parameter %q is not declared", k))
			continue
		}
		if err := p.check(fx.Params[k]); err != nil {
			errs = append(errs, fmt.Sprintf("parameter %q: %v", k, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("fix %s: %s", fx.ID, strings.Join(errs, "; "))
	}
	return nil
}

func (p Param) check(v string) error {
	if strings.ContainsAny(v, "\n\x00") {
		return fmt.Errorf("%q holds a newline or NUL", v)
	}
	switch p.Kind {
	case ParamPath:
		if !filepath.IsAbs(v) {
			return fmt.Errorf("%q is not an absolute path", v)
		}
	case ParamInt:
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return fmt.Errorf("%q is not a non-negative integer", v)
		}
	case ParamBool:
		if v != "true" && v != "false" {
			return fmt.Errorf("%q is not true or false", v)
		}
	case ParamEnv:
		if v != "venv" && v != "conda" && v != "system" && v != "" {
			return fmt.Errorf("%q is not venv, conda or system", v)
		}
	case ParamPathList:
		for _, d := range strings.Split(v, ":") {
			if d != "" && !filepath.IsAbs(d) {
				return fmt.Errorf("%q is not absolute", d)
			}
		}
	case ParamList:
		if strings.TrimSpace(v) == "" && p.Required {
			return fmt.Errorf("empty")
		}
	}
	return nil
}

// ValidateCatalog checks the catalog itself: unique, well-formed IDs, a
// title and a known risk for each, unique parameter names.
func ValidateCatalog() error {
	var errs []string
	seen := map[string]bool{}
	for _, s := range catalog {
		if s.ID == "" || strings.ContainsAny(s.ID, " \t,=") || strings.ToLower(s.ID) != s.ID {
			errs = append(errs, fmt.Sprintf("bad fix ID %q", s.ID))
		}
		if seen[s.ID] {
			errs = append(errs, fmt.Sprintf("fix %s: duplicate ID", s.ID))
		}
		seen[s.ID] = true
		if s.Title == "" {
			errs = append(errs, fmt.Sprintf("fix %s: no title", s.ID))
		}
		if s.Risk != RiskSafe && s.Risk != RiskModerate && s.Risk != RiskDangerous {
			errs = append(errs, fmt.Sprintf("fix %s: bad risk %q", s.ID, s.Risk))
		}
		names := map[string]bool{}
		for _, p := range s.Params {
			if names[p.Name] || p.Name == "" || p.Doc == "" {
				errs = append(errs, fmt.Sprintf("fix %s: parameter %q is duplicate, unnamed or undocumented", s.ID, p.Name))
			}
			names[p.Name] = true
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid fix catalog:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}
