package verify

import (
	"fmt"
	"os"
	"strings"
)

// cuResultNames are the CUresult codes doctor names itself, for drivers too
// old to have cuGetErrorName and for parsing framework logs. Values are from
// the CUDA driver API (cuda.h); the runtime API uses the same numbers for the
// ones that matter here (cudaErrorNoDevice is 100, cudaErrorInsufficientDriver
// 35, cudaErrorSystemDriverMismatch 803, ...).
var cuResultNames = map[int]string{
	0:   "CUDA_SUCCESS",
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	34:  "CUDA_ERROR_STUB_LIBRARY",
	35:  "CUDA_ERROR_INSUFFICIENT_DRIVER",
	46:  "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	200: "CUDA_ERROR_INVALID_IMAGE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	214: "CUDA_ERROR_ECC_UNCORRECTABLE",
	218: "CUDA_ERROR_INVALID_PTX",
	220: "CUDA_ERROR_NVLINK_UNCORRECTABLE",
	221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	300: "CUDA_ERROR_INVALID_SOURCE",
	301: "CUDA_ERROR_FILE_NOT_FOUND",
	302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
	303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE",
	401: "CUDA_ERROR_ILLEGAL_STATE",
	500: "CUDA_ERROR_NOT_FOUND",
	600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	709: "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
	715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS",
	717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	718: "CUDA_ERROR_INVALID_PC",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	800: "CUDA_ERROR_NOT_PERMITTED",
	801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	805: "CUDA_ERROR_MPS_CONNECTION_FAILED",
	806: "CUDA_ERROR_MPS_RPC_FAILURE",
	807: "CUDA_ERROR_MPS_SERVER_NOT_READY",
	808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
	809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
	810: "CUDA_ERROR_MPS_CLIENT_TERMINATED",
	909: "CUDA_ERROR_TIMEOUT",
	999: "CUDA_ERROR_UNKNOWN",
}

// cuResultName names a CUresult code.
func cuResultName(code int) string {
	if n, ok := cuResultNames[code]; ok {
		return n
	}
	return fmt.Sprintf("CUDA_ERROR_%d", code)
}

// cuResultCode is the inverse of cuResultName for the known names; -1 when
// unknown.
func cuResultCode(name string) int {
	for c, n := range cuResultNames {
		if n == name {
			return c
		}
	}
	return -1
}

// Cause labels the ladder reports (DESIGN.md; gpu_compute_failed,
// framework_import_failed and driver_unresponsive were added by doctor and
// are documented in knowledge.Causes).
const (
	causeDriverMissing   = "driver_missing"
	causeWSLLibcuda      = "wsl_libcuda_not_found"
	causeCVDHides        = "cuda_visible_devices_hides_gpu"
	causeCuInitUnknown   = "cuinit_unknown_error"
	causeDriverTooOld    = "driver_too_old_for_cuda"
	causeDriverMismatch  = "driver_library_mismatch"
	causeLDPath          = "ld_library_path_pollution"
	causeOOM             = "gpu_out_of_memory_other_process"
	causeComputeMode     = "compute_mode_prohibited"
	causeECC             = "gpu_ecc_errors"
	causeUnsupportedCC   = "unsupported_compute_capability"
	causeCublasMissing   = "libcublas_missing"
	causeUnresponsive    = "driver_unresponsive"
	causeTFNotInstalled  = "tf_not_installed"
	causeTFCPUOnly       = "tf_cpu_only_build_installed"
	causeXLA             = "xla_ptxas_or_libdevice_missing"
	causeComputeFailed   = "gpu_compute_failed"
	causeFrameworkImport = "framework_import_failed"
	causeDeviceNodePerm  = "device_node_permission"
)

// env is the part of the process environment the cause mapping reads.
type env struct {
	// CUDAVisibleDevices is the variable's value; Set whether it is set.
	CUDAVisibleDevices string
	CVDSet             bool
	// WSL is true under Windows Subsystem for Linux.
	WSL bool
}

// currentEnv reads env from this process.
func currentEnv() env {
	v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	return env{CUDAVisibleDevices: v, CVDSet: ok, WSL: isWSL()}
}

func isWSL() bool {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	s := strings.ToLower(string(b))
	return strings.Contains(s, "microsoft") || strings.Contains(s, "wsl")
}

// causeOfLoadFailure labels a libcuda that could not be loaded.
func causeOfLoadFailure(e env) string {
	if e.WSL {
		return causeWSLLibcuda
	}
	return causeDriverMissing
}

// causeOfCUresult maps a CUDA driver API result to a cause label. api is the
// failing call: the same code means different things at cuInit and at a
// kernel launch.
func causeOfCUresult(api string, code int, e env) string {
	switch code {
	case 100: // NO_DEVICE
		if e.CVDSet {
			return causeCVDHides
		}
		return causeDriverMissing
	case 101: // INVALID_DEVICE: an ordinal past the visible devices
		if e.CVDSet {
			return causeCVDHides
		}
		return causeComputeFailed
	case 999: // UNKNOWN
		if api == "cuInit" || api == "cuDevicePrimaryCtxRetain" {
			return causeCuInitUnknown
		}
		return causeComputeFailed
	case 35: // INSUFFICIENT_DRIVER
		return causeDriverTooOld
	case 222: // UNSUPPORTED_PTX_VERSION: PTX newer than the driver
		return causeDriverTooOld
	case 804: // COMPAT_NOT_SUPPORTED_ON_DEVICE: a forward-compatibility libcuda on a GPU that does not allow it
		return causeDriverTooOld
	case 803: // SYSTEM_DRIVER_MISMATCH
		return causeDriverMismatch
	case 34: // STUB_LIBRARY: the toolkit's stub libcuda was loaded instead of the driver's
		return causeLDPath
	case 2: // OUT_OF_MEMORY
		return causeOOM
	case 46: // DEVICE_UNAVAILABLE: exclusive-process mode held by another process, or prohibited
		return causeComputeMode
	case 214: // ECC_UNCORRECTABLE
		return causeECC
	case 209: // NO_BINARY_FOR_GPU
		return causeUnsupportedCC
	case 221: // JIT_COMPILER_NOT_FOUND: libnvidia-ptxjitcompiler is missing from the driver install
		return causeDriverMissing
	case 304: // OPERATING_SYSTEM: often a device node that cannot be opened
		return causeDeviceNodePerm
	case 3, 4:
		if api == "cuInit" {
			return causeCuInitUnknown
		}
	}
	return causeComputeFailed
}

// cuResultHint is a short explanation for codes whose name alone does not
// say what to do.
func cuResultHint(code int, e env) string {
	switch code {
	case 100:
		if e.CVDSet {
			return fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every GPU from this process", e.CUDAVisibleDevices)
		}
		return "the driver sees no CUDA GPU (no kernel module bound to one, or a container started without GPU access)"
	case 999:
		return "cuInit failed inside the driver: often after suspend/resume or with /dev/nvidia-uvm missing"
	case 803:
		return "the driver's user-space libraries and the loaded kernel module differ in version (reboot after a driver upgrade)"
	case 804:
		return "a CUDA forward-compatibility libcuda was loaded on a GPU that does not support it"
	case 34:
		return "the CUDA toolkit's stub libcuda (lib64/stubs) was loaded instead of the driver's"
	case 46:
		return "the GPU is in exclusive-process or prohibited compute mode and not available to this process"
	case 221:
		return "libnvidia-ptxjitcompiler.so.1 is missing from the driver installation"
	case 802:
		return "the system is not ready for CUDA (on NVSwitch systems: nvidia-fabricmanager is not running)"
	}
	return ""
}

// cublasStatusNames are cublasStatus_t codes (cublas_api.h).
var cublasStatusNames = map[int]string{
	0:  "CUBLAS_STATUS_SUCCESS",
	1:  "CUBLAS_STATUS_NOT_INITIALIZED",
	3:  "CUBLAS_STATUS_ALLOC_FAILED",
	7:  "CUBLAS_STATUS_INVALID_VALUE",
	8:  "CUBLAS_STATUS_ARCH_MISMATCH",
	11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED",
	14: "CUBLAS_STATUS_INTERNAL_ERROR",
	15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

func cublasStatusName(code int) string {
	if n, ok := cublasStatusNames[code]; ok {
		return n
	}
	return fmt.Sprintf("CUBLAS_STATUS_%d", code)
}

// causeOfCublasStatus maps a cuBLAS status to a cause label. libMajor is
// the CUDA major version cuBLAS was built for and driverCUDA the CUDA
// version the driver supports (1000·major + 10·minor): a library newer than
// the driver fails to initialise.
func causeOfCublasStatus(code, libMajor, driverCUDA int) string {
	if code == 1 && libMajor > 0 && driverCUDA > 0 && libMajor > driverCUDA/1000 {
		return causeDriverTooOld
	}
	switch code {
	case 3:
		return causeOOM
	case 8, 15:
		return causeUnsupportedCC
	}
	return causeComputeFailed
}
