package checks

// Fix IDs are stable: `doctor fix ID` names them on the command line, and
// package fixes maps each ID it can apply to an applier. Params keys that an
// applier reads are listed with each ID.
const (
	// Applied by doctor --fix.
	FixUnsetCUDAVisibleDevices = "unset-cuda-visible-devices" // disable the line that sets it
	FixLoadNvidiaUVM           = "load-nvidia-uvm"            // root: modprobe nvidia-uvm; nvidia-modprobe -u -c=0
	FixCreateDeviceNodes       = "create-device-nodes"        // root: nvidia-modprobe -c=0 -u
	FixDeviceGroup             = "device-group"               // root: usermod -aG Params[group] Params[user]
	FixBlacklistNouveau        = "blacklist-nouveau"          // root: modprobe.d file + initramfs; reboot announced
	FixModprobeNvidia          = "modprobe-nvidia"            // root: modprobe nvidia
	FixDKMSRebuild             = "dkms-rebuild"               // root: headers + dkms autoinstall
	FixInstallDriver           = "install-driver"             // root, dangerous: distribution driver install
	FixWSLRemoveLinuxDriver    = "wsl-remove-linux-driver"    // root: apt-get remove Params[packages]; ldconfig
	FixWSLLdConf               = "wsl-ldconf"                 // root: /etc/ld.so.conf.d/ld.wsl.conf; ldconfig
	FixStopGPUProcess          = "stop-gpu-process"           // dangerous, per PID: Params[pid], [user], [command]
	FixTFAllowGrowth           = "tf-allow-growth"            // TF_FORCE_GPU_ALLOW_GROWTH=true in activate.d
	// Python environment fixes (upper links). Params: python (the examined
	// interpreter), env_prefix (sys.prefix), env_kind (venv, conda, system).
	FixPipInstallTensorFlow = "pip-install-tensorflow" // Params[requirement], e.g. tensorflow[and-cuda]==2.20.0
	FixPipUninstall         = "pip-uninstall"          // Params[packages] (space separated)
	FixLDLibraryPath        = "ld-library-path"        // activate.d/deactivate.d scripts; Params[value] the new value ("" to unset)
	FixXLACudaDataDir       = "xla-cuda-data-dir"      // XLA_FLAGS=--xla_gpu_cuda_data_dir=Params[dir] in activate.d, or pip nvcc wheel Params[requirement]
	FixIpykernelInstall     = "ipykernel-install"      // python -m ipykernel install --user --name Params[name]
	FixCondaReinstall       = "conda-reinstall"        // conda install --force-reinstall Params[packages] in Params[env_prefix]

	// Printed only (Manual): the other side, a reboot, the hardware.
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
)
