package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// SnapshotSchema names the version of the Snapshot JSON. A reader accepts
// every snapshot whose schema starts with "doctor.snapshot/v1".
const SnapshotSchema = "doctor.snapshot/v1"

// Snapshot is everything doctor knows about one machine at one moment. It is
// plain data: checks read nothing else, and it can be saved and replayed with
// `doctor --from`. Fields that a collector could not fill stay zero; the
// collector's entry in Collectors says why.
type Snapshot struct {
	Schema      string    `json:"schema"`
	Tool        Tool      `json:"tool"`
	CollectedAt time.Time `json:"collected_at"`
	// Root is the folder file collectors read under ("/" on a real run).
	Root string `json:"root"`

	Platform Platform    `json:"platform"`
	PCI      []PCIDevice `json:"pci"`
	// PCIFunctions counts every function /sys/bus/pci/devices lists, of
	// any vendor: a bus listed with functions and no NVIDIA display
	// function among them is evidence that the machine has no NVIDIA
	// GPU. 0 in snapshots written before the field existed.
	PCIFunctions int               `json:"pci_functions,omitempty"`
	Modules      Modules           `json:"modules"`
	Devices      []DeviceNode      `json:"devices"`
	NVML         NVML              `json:"nvml"`
	NvidiaSMI    Command           `json:"nvidia_smi"`
	Holders      Holders           `json:"device_holders"`
	Env          map[string]string `json:"env"`
	KernelLog    KernelLog         `json:"kernel_log"`
	Disks        []Disk            `json:"disks"`

	// Python is the examined Python environment and what is installed in it.
	Python *Python `json:"python,omitempty"`
	// Libraries is how the CUDA libraries TensorFlow needs resolve.
	Libraries *Libraries `json:"libraries,omitempty"`
	// Verification is the runtime ladder's result; nil with --quick.
	Verification *Verification `json:"verification,omitempty"`

	// Collectors records, per collector, how long it took and whether it
	// failed or timed out.
	Collectors map[string]CollectorStatus `json:"collectors"`
	// Facts records the state of every fact the checks may require:
	// observed, absent (observed not to be there) or unknown. An extension
	// of v1, written by RecordFacts; checks read states through Fact.
	Facts map[string]FactState `json:"facts,omitempty"`
}

// Tool identifies the doctor that wrote a snapshot or report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// CollectorStatus is how one collector ended.
type CollectorStatus struct {
	DurationMS float64 `json:"duration_ms"`
	TimedOut   bool    `json:"timed_out,omitempty"`
	Skipped    string  `json:"skipped,omitempty"` // why it did not run
	Error      string  `json:"error,omitempty"`
	// Cut is true when the collector's deadline was shorter than its own
	// because the run's --timeout had less time left: a timeout then
	// proves nothing about the machine.
	Cut bool `json:"cut_short,omitempty"`
	// State is what the collector's facts are worth: observed, or unknown
	// (skipped, failed, timed out, cut short); StateWhy says why they are
	// unknown. An extension of v1: snapshots without it derive the state
	// from the fields above (Snapshot.Fact).
	State    string `json:"state,omitempty"`
	StateWhy string `json:"state_why,omitempty"`
}

// Platform is the operating system and what it runs in.
type Platform struct {
	OS            string `json:"os"`             // runtime.GOOS of the examined machine
	Distro        string `json:"distro"`         // PRETTY_NAME from os-release
	DistroID      string `json:"distro_id"`      // ID from os-release (ubuntu, debian, ...)
	DistroVersion string `json:"distro_version"` // VERSION_ID
	Kernel        string `json:"kernel"`         // kernel release
	KernelVersion string `json:"kernel_version"` // /proc/version
	Arch          string `json:"arch"`
	Hostname      string `json:"hostname"`
	User          string `json:"user"`
	UID           int    `json:"uid"`
	Home          string `json:"home"`
	// Container is docker, podman, kubernetes, containerd, lxc or "" when
	// none was detected.
	Container      string   `json:"container"`
	ContainerHints []string `json:"container_hints,omitempty"`
	// Virtualization is what /sys/class/dmi says of the machine (KVM,
	// Firecracker, ...), or "".
	Virtualization string `json:"virtualization,omitempty"`
	WSL            WSL    `json:"wsl"`
	// SecureBoot is "enabled", "disabled" or "unknown".
	SecureBoot string `json:"secure_boot"`
}

// WSL is what is known about Windows Subsystem for Linux.
type WSL struct {
	Version int    `json:"version"` // 0 not WSL, 1 or 2
	Kernel  string `json:"kernel,omitempty"`
	DXG     bool   `json:"dev_dxg"`    // /dev/dxg exists
	LibDir  bool   `json:"lib_dir"`    // /usr/lib/wsl/lib exists
	LibCUDA bool   `json:"lib_cuda"`   // /usr/lib/wsl/lib/libcuda.so.1 exists
	LibSMI  bool   `json:"nvidia_smi"` // /usr/lib/wsl/lib/nvidia-smi exists
	LdConf  bool   `json:"ld_conf"`    // an ld.so.conf file names /usr/lib/wsl/lib
}

// PCIDevice is an NVIDIA function on the PCI bus (from /sys/bus/pci).
type PCIDevice struct {
	Address string `json:"address"`
	Vendor  string `json:"vendor"`
	Device  string `json:"device"`
	Class   string `json:"class"`
	Driver  string `json:"driver"` // bound driver: nvidia, nouveau, vfio-pci, ""
	// NUMANode is the value of numa_node, -1 when unknown.
	NUMANode int `json:"numa_node"`
}

// Modules describes the kernel side of the driver.
type Modules struct {
	// ProcVersion is /proc/driver/nvidia/version ("" when absent).
	ProcVersion string `json:"proc_version"`
	// KernelDriverVersion is the version parsed from ProcVersion.
	KernelDriverVersion string          `json:"kernel_driver_version"`
	Loaded              map[string]bool `json:"loaded"` // nvidia, nvidia_uvm, nvidia_drm, nvidia_modeset, nouveau
	// Available lists module files for the running kernel (from modules.dep).
	Available []string `json:"available,omitempty"`
	// DKMS lists nvidia DKMS builds as "version/kernel".
	DKMS []string `json:"dkms,omitempty"`
	// Blacklisted is true when a modprobe.d file blacklists nouveau.
	NouveauBlacklisted bool `json:"nouveau_blacklisted"`
	// UserspaceDriver is the version of the NVIDIA user-space libraries
	// found on disk (libnvidia-ml.so.VERSION), "" when none.
	UserspaceDriver string `json:"userspace_driver"`
	// UserspaceFiles are the libcuda and libnvidia-ml files found in the
	// driver library folders (DriverLibDirs).
	UserspaceFiles []LibFile `json:"userspace_files,omitempty"`
	// Packages are installed dpkg packages that carry an NVIDIA Linux
	// driver (kernel module or libcuda).
	Packages []string `json:"driver_packages,omitempty"`
}

// DeviceNode is one /dev entry the GPU stack needs.
type DeviceNode struct {
	Path     string `json:"path"`
	Exists   bool   `json:"exists"`
	Mode     string `json:"mode,omitempty"`
	UID      int    `json:"uid"`
	GID      int    `json:"gid"`
	Group    string `json:"group,omitempty"`
	Readable bool   `json:"readable"`
	Writable bool   `json:"writable"`
}

// NVML is what the NVIDIA Management Library reports.
type NVML struct {
	Available bool `json:"available"`
	// Error is the NVML return code name when the library could not be
	// initialised (ERROR_LIBRARY_NOT_FOUND, ERROR_DRIVER_NOT_LOADED,
	// ERROR_LIB_RM_VERSION_MISMATCH, ...).
	Error        string `json:"error,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// DriverVersion is the driver version ("580.159.04").
	DriverVersion string `json:"driver_version,omitempty"`
	// CUDADriverVersion is the CUDA version the driver supports, as
	// 1000*major + 10*minor (13000 for 13.0).
	CUDADriverVersion int    `json:"cuda_driver_version,omitempty"`
	NVMLVersion       string `json:"nvml_version,omitempty"`
	GPUs              []GPU  `json:"gpus,omitempty"`
	// Unsupported lists the queries the driver answered "not supported"
	// (normal under WSL2), as "gpu0:query".
	Unsupported []string `json:"unsupported,omitempty"`
}

// CUDAVersionString renders a CUDA version integer (12040) as "12.4".
func CUDAVersionString(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// GPU is one device as NVML sees it. Pointer fields are nil when the driver
// does not support the query.
type GPU struct {
	Index             int          `json:"index"`
	Name              string       `json:"name"`
	UUID              string       `json:"uuid"`
	Serial            string       `json:"serial,omitempty"`
	PCIBusID          string       `json:"pci_bus_id"`
	MemoryTotalMiB    uint64       `json:"memory_total_mib"`
	MemoryUsedMiB     uint64       `json:"memory_used_mib"`
	ComputeCapability string       `json:"compute_capability"` // "9.0"
	ComputeMode       string       `json:"compute_mode"`       // Default, Exclusive_Process, Prohibited, Exclusive_Thread
	Persistence       *bool        `json:"persistence,omitempty"`
	MIG               *MIG         `json:"mig,omitempty"`
	ECC               *ECC         `json:"ecc,omitempty"`
	PCIe              *PCIe        `json:"pcie,omitempty"`
	ThrottleReasons   []string     `json:"throttle_reasons,omitempty"`
	ThrottleMask      *uint64      `json:"throttle_mask,omitempty"`
	TemperatureC      *int         `json:"temperature_c,omitempty"`
	Utilization       *Utilization `json:"utilization,omitempty"`
	Processes         []GPUProcess `json:"processes,omitempty"`
	// ProcessesSupported is false where the driver cannot list processes
	// (WSL2, some vGPU setups).
	ProcessesSupported bool `json:"processes_supported"`
}

// MIG is the multi-instance GPU state.
type MIG struct {
	Current bool `json:"current"`
	Pending bool `json:"pending"`
	// Devices is the number of MIG devices (instances) that exist.
	Devices int `json:"devices"`
}

// ECC holds error-correction counters.
type ECC struct {
	Enabled               bool   `json:"enabled"`
	VolatileUncorrected   uint64 `json:"volatile_uncorrected"`
	AggregateUncorrected  uint64 `json:"aggregate_uncorrected"`
	RetiredPagesSBE       int    `json:"retired_pages_sbe"`
	RetiredPagesDBE       int    `json:"retired_pages_dbe"`
	RetirementPending     bool   `json:"retirement_pending"`
	RemappedCorrectable   int    `json:"remapped_correctable"`
	RemappedUncorrectable int    `json:"remapped_uncorrectable"`
	RemapPending          bool   `json:"remap_pending"`
	RemapFailure          bool   `json:"remap_failure"`
}

// PCIe is the link state: current against the most the GPU and slot allow.
type PCIe struct {
	CurrentGen   int `json:"current_gen"`
	MaxGen       int `json:"max_gen"`
	CurrentWidth int `json:"current_width"`
	MaxWidth     int `json:"max_width"`
}

// Utilization is the last sample of GPU and memory use in percent.
type Utilization struct {
	GPU    int `json:"gpu"`
	Memory int `json:"memory"`
}

// GPUProcess is a compute process on a GPU.
type GPUProcess struct {
	PID     int    `json:"pid"`
	UsedMiB uint64 `json:"used_mib"`
	User    string `json:"user,omitempty"`
	Command string `json:"command,omitempty"`
	// Self is true for doctor's own process.
	Self bool `json:"self,omitempty"`
}

// Command is the outcome of running one external program.
type Command struct {
	Path       string   `json:"path,omitempty"`
	Args       []string `json:"args,omitempty"`
	Found      bool     `json:"found"`
	ExitCode   int      `json:"exit_code"`
	DurationMS float64  `json:"duration_ms"`
	TimedOut   bool     `json:"timed_out,omitempty"`
	// Output holds the first lines of stdout and stderr (errors only, or a
	// short head on success).
	Output []string `json:"output,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// Holders are the processes that hold a GPU device node open.
type Holders struct {
	Processes []Holder `json:"processes,omitempty"`
	// Partial is true when some processes could not be inspected (other
	// users' processes without root).
	Partial bool `json:"partial,omitempty"`
}

// Holder is one process with /dev/nvidia* (or /dev/dxg) open.
type Holder struct {
	PID     int      `json:"pid"`
	User    string   `json:"user,omitempty"`
	Command string   `json:"command,omitempty"`
	Devices []string `json:"devices"`
	Self    bool     `json:"self,omitempty"`
}

// KernelLog is what the kernel ring buffer says about NVIDIA.
type KernelLog struct {
	Readable bool   `json:"readable"`
	Source   string `json:"source,omitempty"`
	Error    string `json:"error,omitempty"`
	// Lines are the recent NVIDIA-related lines (NVRM, nvidia, nouveau,
	// module signature), newest last.
	Lines []string   `json:"lines,omitempty"`
	Xids  []XidEvent `json:"xids,omitempty"`
}

// XidEvent is one "NVRM: Xid" line.
type XidEvent struct {
	PCI  string `json:"pci"`
	Code int    `json:"code"`
	Text string `json:"text"`
}

// Disk is the free space of one path's file system.
type Disk struct {
	Path       string `json:"path"`
	FSType     string `json:"fstype,omitempty"`
	TotalBytes uint64 `json:"total_bytes"`
	FreeBytes  uint64 `json:"free_bytes"`
	Error      string `json:"error,omitempty"`
}

// ErrBadSnapshot is returned (wrapped) for any snapshot that cannot be read.
var ErrBadSnapshot = errors.New("bad snapshot")

// ReadSnapshot decodes a snapshot and checks its schema. Every failure wraps
// ErrBadSnapshot and says in one line what is wrong.
func ReadSnapshot(r io.Reader) (*Snapshot, error) {
	dec := json.NewDecoder(io.LimitReader(r, 256<<20))
	var s Snapshot
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty input", ErrBadSnapshot)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: truncated JSON", ErrBadSnapshot)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: invalid JSON at byte %d: %v", ErrBadSnapshot, se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%w: field %q: expected %s, got JSON %s", ErrBadSnapshot, te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("%w: %v", ErrBadSnapshot, err)
	}
	if s.Schema == "" {
		return nil, fmt.Errorf("%w: no \"schema\" field; is this a doctor snapshot?", ErrBadSnapshot)
	}
	if !schemaCompatible(s.Schema) {
		return nil, fmt.Errorf("%w: schema %q is not %q", ErrBadSnapshot, s.Schema, SnapshotSchema)
	}
	if len(s.Collectors) == 0 {
		// Every snapshot doctor writes records its collectors; one with
		// none holds no evidence, and judging it would read as health.
		return nil, fmt.Errorf("%w: it records no collector (no \"collectors\"), so it holds no evidence to judge", ErrBadSnapshot)
	}
	return &s, nil
}

func schemaCompatible(s string) bool {
	return s == SnapshotSchema || len(s) > len(SnapshotSchema) && s[:len(SnapshotSchema)] == SnapshotSchema && s[len(SnapshotSchema)] == '.'
}

// WriteJSON writes the snapshot as indented JSON.
func (s *Snapshot) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // captured commands and paths stay as they were (2>&1, <redacted>)
	return enc.Encode(s)
}

// LoadSnapshot reads the snapshot saved at path (a recorded machine, a
// support case's file); errors wrap ErrBadSnapshot as ReadSnapshot's do,
// or are the open error.
func LoadSnapshot(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSnapshot(f)
}
