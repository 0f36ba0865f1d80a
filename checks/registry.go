package checks

// All is every check, in chain order: within a link, earlier checks are more
// fundamental and win the root cause.
var All = []*Check{
	// platform
	WSL1,
	Container,
	Collectors,
	// hardware
	XidErrors,
	ECCErrors,
	PCIeLink,
	// kernel module
	Nouveau,
	KernelModule,
	UVMModule,
	// driver
	WSLDriver,
	NVMLDriver,
	DeviceNodes,
	NvidiaSMI,
	// environment
	CUDAVisibleDevices,
	ComputeMode,
	MIGConfig,
	OtherProcessesMemory,
	DiskSpace,
	// cuda_libraries
	DriverCUDA,
	CUDALibraries,
	CondaFiles,
	LDLibraryPath,
	CUDAMajorMismatch,
	CUDNNVersion,
	XLAData,
	Toolkit,
	// python_tensorflow
	PythonEnvironment,
	TensorFlowInstall,
	TensorFlowConflicts,
	ComputeCapability,
	JupyterKernels,
	// runtime
	VerifyDriver,
	VerifyLibraries,
	VerifyFramework,
	VerifyLadder,
	// performance
	Throttle,
	VerifySpeed,
}
