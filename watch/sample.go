package watch

import "time"

// GPUs reads the GPUs while a job is watched. The real one is NVML through
// go-nvml (NVML); tests feed canned samples through the same interface.
type GPUs interface {
	// Open starts a session and returns what does not change while
	// watching. A driver that cannot be reached is an error (a
	// *host.NVMLError for NVML's own codes).
	Open() (Inventory, error)
	// Sample reads every GPU once. Queries the driver does not support
	// leave their field nil and are named in GPUSample.Unsupported.
	Sample() ([]GPUSample, error)
	// Close ends the session.
	Close()
}

// Inventory is what the driver says once, at the start.
type Inventory struct {
	Driver string    `json:"driver,omitempty"`
	GPUs   []GPUInfo `json:"gpus"`
}

// GPUInfo is one GPU's fixed facts.
type GPUInfo struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid,omitempty"`
	// Minor is N in /dev/nvidiaN (-1 when unknown): it ties a process that
	// holds the device node open to this GPU.
	Minor             int     `json:"minor"`
	ComputeCapability string  `json:"compute_capability,omitempty"` // "9.0"
	MemoryTotalMiB    uint64  `json:"memory_total_mib"`
	MaxSMClockMHz     int     `json:"max_sm_clock_mhz,omitempty"`
	MaxMemClockMHz    int     `json:"max_mem_clock_mhz,omitempty"`
	PowerLimitW       float64 `json:"power_limit_w,omitempty"`
}

// GPUSample is one reading of one GPU. Nil fields were not reported.
type GPUSample struct {
	Index int `json:"index"`
	// Util is the percent of the last sample period during which a kernel
	// ran (nvidia-smi's GPU-Util, dmon's sm column).
	Util        *int     `json:"util,omitempty"`
	MemUtil     *int     `json:"mem_util,omitempty"` // memory controller busy, percent
	MemUsedMiB  *uint64  `json:"mem_used_mib,omitempty"`
	SMClockMHz  *int     `json:"sm_clock_mhz,omitempty"`
	MemClockMHz *int     `json:"mem_clock_mhz,omitempty"`
	PowerW      *float64 `json:"power_w,omitempty"`
	TempC       *int     `json:"temp_c,omitempty"`
	// ClockEvents is NVML's clocks-event-reasons mask (why the clocks are
	// below their top: idle, power cap, thermal, ...).
	ClockEvents *uint64 `json:"clock_events,omitempty"`
	// Procs are the compute processes; ProcsKnown is false when the driver
	// cannot list them (WSL2, some vGPU setups).
	Procs      []GPUProc `json:"procs,omitempty"`
	ProcsKnown bool      `json:"procs_known"`
	// ProcUtilKnown is true when the driver reports per-process
	// utilisation; GPUProc.SMUtil is set then.
	ProcUtilKnown bool `json:"proc_util_known"`
	// Unsupported names queries the driver does not support; Errors names
	// queries that failed this time ("query: ERROR_X (message)").
	Unsupported []string `json:"unsupported,omitempty"`
	Errors      []string `json:"errors,omitempty"`
}

// GPUProc is one compute process on one GPU.
type GPUProc struct {
	PID     int    `json:"pid"`
	UsedMiB uint64 `json:"used_mib"`
	// SMUtil and MemUtil are this process's share over the interval,
	// percent (nil when the driver does not report per-process use).
	SMUtil  *int `json:"sm_util,omitempty"`
	MemUtil *int `json:"mem_util,omitempty"`
	// Foreign is true when the PID is not in this /proc: the driver names
	// processes by the host's PIDs, and doctor runs in another PID
	// namespace (a container). Such a process cannot be told apart from
	// the job, so it is never counted as a competitor.
	Foreign bool `json:"foreign,omitempty"`
}

// JobSample is the watched job (a process and its descendants, or every
// GPU process) over one interval.
type JobSample struct {
	// Alive is false once the watched PID has exited.
	Alive bool  `json:"alive"`
	PIDs  []int `json:"pids"`
	// Threads counts the threads of every process of the job.
	Threads int `json:"threads"`
	// CPUPercent is CPU time over wall time, in percent of one core,
	// summed over the job's processes (200 = two cores busy).
	CPUPercent float64 `json:"cpu_percent"`
	// BusiestThreadPercent is the busiest single thread, percent of one
	// core: near 100 means a single-threaded loop is the limit.
	BusiestThreadPercent float64 `json:"busiest_thread_percent"`
	// IOWaitPercent is the time the job's tasks waited for block I/O, in
	// percent of the interval, summed (needs kernel delay accounting; nil
	// when it is off).
	IOWaitPercent *float64 `json:"iowait_percent,omitempty"`
	// ReadBps and WriteBps count every byte read and written (files,
	// pipes, sockets; /proc/PID/io rchar, wchar); DiskReadBps and
	// DiskWriteBps only what reached the storage layer.
	ReadBps      float64 `json:"read_bps"`
	WriteBps     float64 `json:"write_bps"`
	DiskReadBps  float64 `json:"disk_read_bps"`
	DiskWriteBps float64 `json:"disk_write_bps"`
	// IOUnreadable is true when /proc/PID/io could not be read (another
	// user's process without privileges).
	IOUnreadable bool `json:"io_unreadable,omitempty"`
	// DeviceNodes are the GPU device nodes the job holds open
	// (/dev/nvidia0, /dev/dxg); read only while NVML does not list it.
	DeviceNodes []string `json:"device_nodes,omitempty"`
}

// SystemSample is the whole machine over one interval.
type SystemSample struct {
	// CPUPercent is the busy share of all CPUs; IOWaitPercent the share of
	// all CPUs idle while I/O was outstanding.
	CPUPercent    float64 `json:"cpu_percent"`
	IOWaitPercent float64 `json:"iowait_percent"`
}

// Sample is one tick of the watch.
type Sample struct {
	At time.Time `json:"at"`
	// Elapsed is seconds since the watch started.
	Elapsed  float64      `json:"elapsed_s"`
	GPUs     []GPUSample  `json:"gpus"`
	GPUError string       `json:"gpu_error,omitempty"`
	Job      JobSample    `json:"job"`
	System   SystemSample `json:"system"`
	// Cost is how long taking this sample took, in milliseconds.
	CostMS float64 `json:"cost_ms"`
}

// Series is everything one watch saw: the input of Analyze.
type Series struct {
	// PID is the watched process (0: every GPU process).
	PID     int    `json:"pid"`
	Command string `json:"command,omitempty"`
	// Self is doctor's own PID, never counted as a competitor.
	Self     int       `json:"self"`
	Interval float64   `json:"interval_s"`
	Duration float64   `json:"duration_s"` // as asked
	Started  time.Time `json:"started"`
	// Ended says why sampling stopped early ("" when the duration ran out).
	Ended string `json:"ended,omitempty"`
	// CPUs is how many cores the job may use (affinity and cgroup quota);
	// HostCPUs the machine's logical CPUs.
	CPUs       float64 `json:"cpus"`
	CPUsSource string  `json:"cpus_source,omitempty"`
	HostCPUs   int     `json:"host_cpus"`
	// DelayAccounting is the kernel's task_delayacct switch: without it the
	// job's I/O wait cannot be measured (nil: unknown).
	DelayAccounting *bool     `json:"delay_accounting,omitempty"`
	Inventory       Inventory `json:"inventory"`
	// GPUError is set when the GPUs could not be read at all.
	GPUError string   `json:"gpu_error,omitempty"`
	Samples  []Sample `json:"samples"`
	// Commands names the processes seen (job and GPU processes).
	Commands map[int]string `json:"commands,omitempty"`
	// SelfCPUPercent is doctor's own CPU time over the sampling, percent of
	// one core (nil when not measured); SetupMS the time to open NVML and
	// take the baseline.
	SelfCPUPercent *float64 `json:"self_cpu_percent,omitempty"`
	SetupMS        float64  `json:"setup_ms"`
}
