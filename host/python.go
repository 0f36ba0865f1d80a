package host

// Python is the examined Python environment: its interpreter, version,
// installed distributions and TensorFlow build facts. Filled by the python
// collector (python_collect.go) from the environment's files, without
// starting Python where the files say enough.
type Python struct {
	// Executable is the interpreter that was examined, as found.
	Executable string `json:"executable"`
	// RealExecutable is Executable with symlinks resolved.
	RealExecutable string `json:"real_executable,omitempty"`
	// Source says how it was chosen: "--python", "CONDA_PREFIX",
	// "VIRTUAL_ENV" or "PATH" (plus "pyenv" when a pyenv shim was followed).
	Source string `json:"source"`
	Found  bool   `json:"found"`
	Error  string `json:"error,omitempty"`
	// Version is "3.12.3", or "3.12" when only the minor is known.
	Version string `json:"version,omitempty"`
	// VersionFrom says where the version was read: pyvenv.cfg, conda-meta,
	// executable name, stdlib folder, interpreter.
	VersionFrom string `json:"version_from,omitempty"`
	// Prefix is sys.prefix; BasePrefix the installation a venv was made from.
	Prefix     string `json:"prefix,omitempty"`
	BasePrefix string `json:"base_prefix,omitempty"`
	// Kind is venv, conda, pyenv or system.
	Kind    string `json:"kind,omitempty"`
	EnvName string `json:"env_name,omitempty"`
	// Windows is true for a native Windows interpreter (python.exe, for
	// example under /mnt/c in WSL).
	Windows bool `json:"windows,omitempty"`
	// IncludeSystemSite is a venv's include-system-site-packages.
	IncludeSystemSite bool `json:"include_system_site_packages,omitempty"`
	// SitePaths are the folders on sys.path that hold packages, in import
	// order (PYTHONPATH, user site, the environment's site-packages, ...).
	SitePaths []SitePath `json:"site_paths,omitempty"`
	// StaleSites are site-packages folders of other Python versions in the
	// same prefix (left behind when the environment's Python was changed).
	StaleSites []string `json:"stale_sites,omitempty"`
	// Distributions are the installed distributions, in sys.path order.
	Distributions []Distribution `json:"distributions,omitempty"`
	TensorFlow    *TensorFlow    `json:"tensorflow,omitempty"`
	// CondaPackages are the conda packages of a conda environment that
	// carry CUDA libraries or TensorFlow, with files they list but lack.
	CondaPackages []CondaPackage `json:"conda_packages,omitempty"`
	// Envs are other Python environments found on the machine.
	Envs []PythonEnv `json:"other_envs,omitempty"`
	// Kernels are the Jupyter kernels found and the interpreters they run.
	Kernels []JupyterKernel `json:"jupyter_kernels,omitempty"`
	// Probe is the interpreter run used when the files did not tell the
	// version (never with --quick).
	Probe *Command `json:"probe,omitempty"`
}

// SitePath is one package folder on sys.path.
type SitePath struct {
	Path string `json:"path"`
	// From is pythonpath, user, env, base or system.
	From   string `json:"from"`
	Exists bool   `json:"exists"`
}

// Distribution is one installed Python distribution (a .dist-info or
// .egg-info folder).
type Distribution struct {
	// Name is as METADATA writes it; Key is its normalized form
	// (PEP 503: lower case, runs of -_. as one -).
	Name    string `json:"name"`
	Key     string `json:"key"`
	Version string `json:"version"`
	Site    string `json:"site"`
	Path    string `json:"path"`
	// Installer is the INSTALLER file's content (pip, conda, uv), read for
	// the distributions doctor judges.
	Installer string `json:"installer,omitempty"`
	// Stale is set for distributions in a site folder of another Python.
	Stale bool `json:"stale,omitempty"`
}

// TensorFlow is the TensorFlow that `import tensorflow` loads.
type TensorFlow struct {
	// Version and Dist are of the distribution that owns the package folder
	// that wins on sys.path (tensorflow, tensorflow-cpu, tf-nightly, ...).
	Version string `json:"version,omitempty"`
	Dist    string `json:"dist,omitempty"`
	// Package is the tensorflow/ folder that import finds.
	Package string `json:"package,omitempty"`
	// Importable is false when the package folder is missing (a
	// distribution without its files, or only in a stale site folder).
	Importable bool       `json:"importable"`
	BuildInfo  *BuildInfo `json:"build_info,omitempty"`
	// Objects are TensorFlow's own shared objects: the first is the one that
	// calls dlopen (libtensorflow_framework.so.2), then the objects that
	// loaded it; their RPATH/RUNPATH decide where CUDA libraries are found.
	Objects []*ELFObject `json:"objects,omitempty"`
	// Keras is the installed keras version, if any.
	Keras string `json:"keras,omitempty"`
}

// BuildInfo is tensorflow/python/platform/build_info.py, read as a file.
type BuildInfo struct {
	Path         string `json:"path"`
	IsCUDABuild  *bool  `json:"is_cuda_build,omitempty"`
	IsROCmBuild  *bool  `json:"is_rocm_build,omitempty"`
	CUDAVersion  string `json:"cuda_version,omitempty"`
	CUDNNVersion string `json:"cudnn_version,omitempty"`
	// ComputeCapabilities as the build lists them: "sm_60", "compute_90".
	ComputeCapabilities []string `json:"cuda_compute_capabilities,omitempty"`
	// Fields holds every key the file sets, as text.
	Fields map[string]string `json:"fields,omitempty"`
	Error  string            `json:"error,omitempty"`
}

// CondaPackage is one package of conda-meta/.
type CondaPackage struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Build   string `json:"build,omitempty"`
	Channel string `json:"channel,omitempty"`
	Meta    string `json:"meta"`
	Files   int    `json:"files"`
	// Missing counts the listed files that are gone; MissingFiles names the
	// first few.
	Missing      int      `json:"missing,omitempty"`
	MissingFiles []string `json:"missing_files,omitempty"`
	// CUDAMajor is what its cuda-version dependency pins (0 unknown).
	CUDAMajor int `json:"cuda_major,omitempty"`
}

// PythonEnv is another Python environment found on the machine.
type PythonEnv struct {
	Prefix  string `json:"prefix"`
	Kind    string `json:"kind"` // venv, conda, pyenv, system
	Name    string `json:"name,omitempty"`
	Python  string `json:"python,omitempty"`
	Version string `json:"version,omitempty"`
	// TensorFlow is "dist version" of the TensorFlow installed, "" if none.
	TensorFlow string `json:"tensorflow,omitempty"`
	IPyKernel  bool   `json:"ipykernel,omitempty"`
	// Examined is true for the examined environment itself.
	Examined bool `json:"examined,omitempty"`
}

// JupyterKernel is one kernel.json.
type JupyterKernel struct {
	Name        string `json:"name"`
	Spec        string `json:"spec"` // the kernel.json path
	DisplayName string `json:"display_name,omitempty"`
	Language    string `json:"language,omitempty"`
	// Argv0 is the interpreter as kernel.json names it; Interpreter is where
	// it points ("" when it names a bare command such as "python").
	Argv0       string `json:"argv0,omitempty"`
	Interpreter string `json:"interpreter,omitempty"`
	Exists      bool   `json:"exists"`
	// EnvPrefix is the environment the interpreter belongs to.
	EnvPrefix string `json:"env_prefix,omitempty"`
	// Examined is true when the kernel runs the examined environment.
	Examined bool `json:"examined,omitempty"`
	// TensorFlow is what is installed in the kernel's environment.
	TensorFlow string `json:"tensorflow,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Libraries is how the CUDA libraries resolve, the way the dynamic loader
// and TensorFlow's dso_loader resolve them. The snapshot records facts
// only: which files win for each soname (Resolved). Which of them the
// TensorFlow needs, and with what verification mark, is judged by the
// checks with the knowledge tables of the doctor that reads the snapshot
// (checks.TFLibraries), so a newer doctor re-judges an old snapshot.
type Libraries struct {
	// TFVersion is the installed TensorFlow whose search path was used
	// (TFVersionFrom "installed"). Snapshots recorded before the judgment
	// moved to checks may hold "recommended" or "latest" here, and the
	// judged CUDA, CUDNN, BuildFrom, SonameMark, Needed and Present; the
	// checks recompute all of them.
	TFVersion     string `json:"tf_version,omitempty"`
	TFVersionFrom string `json:"tf_version_from,omitempty"`
	CUDA          string `json:"cuda,omitempty"`
	CUDNN         string `json:"cudnn,omitempty"`
	BuildFrom     string `json:"build_from,omitempty"` // build_info, compat table
	SonameMark    string `json:"soname_mark,omitempty"`
	// Caller is the object whose search path dlopen uses (TensorFlow's
	// framework library, or an assumed one when TensorFlow is absent).
	Caller *ELFObject `json:"caller,omitempty"`
	// SearchPath is the loader's search order for the caller.
	SearchPath    []SearchDir `json:"search_path"`
	LDLibraryPath []string    `json:"ld_library_path,omitempty"`
	Cache         LDCacheInfo `json:"ld_cache"`
	// LdConfDirs are the folders /etc/ld.so.conf names.
	LdConfDirs []string `json:"ld_conf_dirs,omitempty"`
	// Resolved is every soname the gather resolved: each one any
	// TensorFlow build of the knowledge tables may dlopen, the
	// sub-libraries of every libcudnn found, and every other CUDA library
	// present; found or not.
	Resolved []Library `json:"resolved,omitempty"`
	// Needed and Present are the judged split of Resolved (the libraries
	// TensorFlow dlopens, and the others). Recorded in older snapshots;
	// filled by checks.TFLibraries now.
	Needed  []Library `json:"needed,omitempty"`
	Present []Library `json:"present,omitempty"`
	Toolkit Toolkit   `json:"toolkit"`
	XLA     XLAInfo   `json:"xla"`
	// TimingsMS breaks the python collector's time down by step.
	TimingsMS map[string]float64 `json:"timings_ms,omitempty"`
}

// SearchDir is one folder of the loader's search order.
type SearchDir struct {
	Dir string `json:"dir"`
	// From is rpath, ld_library_path, runpath, ld.so.cache or default;
	// Object names the ELF object an rpath/runpath entry comes from.
	From   string `json:"from"`
	Object string `json:"object,omitempty"`
	Entry  string `json:"entry,omitempty"` // as written, $ORIGIN kept
	Exists bool   `json:"exists"`
}

// LDCacheInfo describes the loader cache that was read.
type LDCacheInfo struct {
	Path      string `json:"path"`
	Read      bool   `json:"read"`
	Format    string `json:"format,omitempty"`
	Entries   int    `json:"entries,omitempty"`
	Generator string `json:"generator,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Library is one soname resolved along the search path.
type Library struct {
	Name   string `json:"name"`   // cudart, cublasLt, cudnn_ops_infer
	Soname string `json:"soname"` // libcudart.so.12
	// Mark is the verification mark of the fact that TensorFlow asks for
	// this soname.
	Mark string `json:"mark,omitempty"`
	// Required: TensorFlow registers no GPU without it.
	Required bool `json:"required,omitempty"`
	// Unresolved is set by the checks on a library TensorFlow needs that
	// the snapshot holds no resolution of (recorded with other tables):
	// unknown, not missing.
	Unresolved bool `json:"unresolved,omitempty"`
	// LoadedBy names the library that dlopens this one (cudnn sub-libraries).
	LoadedBy string `json:"loaded_by,omitempty"`
	Found    bool   `json:"found"`
	// Path is the winning file as the loader opens it; RealPath resolves
	// its symlinks.
	Path     string `json:"path,omitempty"`
	RealPath string `json:"real_path,omitempty"`
	Via      string `json:"via,omitempty"` // rpath, ld_library_path, runpath, ld.so.cache, default
	Version  string `json:"version,omitempty"`
	// VersionFrom: file name, wheel, conda package.
	VersionFrom string `json:"version_from,omitempty"`
	Package     string `json:"package,omitempty"` // owning wheel or conda package
	// CUDAMajor is the CUDA major the file was built for (0 unknown);
	// CUDAMajorFrom says how that is known: soname, needed, wheel, conda,
	// path.
	CUDAMajor     int        `json:"cuda_major,omitempty"`
	CUDAMajorFrom string     `json:"cuda_major_from,omitempty"`
	ELF           *ELFObject `json:"elf,omitempty"`
	// MissingDeps are DT_NEEDED entries of the winner that resolve nowhere.
	MissingDeps []string `json:"missing_deps,omitempty"`
	// Shadowed are copies later on the search path; OffPath copies on disk
	// the loader never looks at; Rejected copies it skips (wrong class or
	// machine, not ELF).
	Shadowed []LibCopy `json:"shadowed,omitempty"`
	OffPath  []LibCopy `json:"off_path,omitempty"`
	Rejected []LibCopy `json:"rejected,omitempty"`
	// InConfiguredDir is set when a copy lies in a folder ld.so.conf names
	// but the cache does not list it (ldconfig was not run).
	NotInCache []string `json:"not_in_cache,omitempty"`
}

// LibCopy is another file with a library's soname.
type LibCopy struct {
	Path      string `json:"path"`
	Via       string `json:"via,omitempty"`
	Version   string `json:"version,omitempty"`
	Package   string `json:"package,omitempty"`
	CUDAMajor int    `json:"cuda_major,omitempty"`
	// CUDAMajorFrom as in Library.
	CUDAMajorFrom string `json:"cuda_major_from,omitempty"`
	Reason        string `json:"reason,omitempty"`
}

// Toolkit is the CUDA toolkit on PATH (nvcc). TensorFlow does not use it;
// it is reported, never judged against TensorFlow's CUDA.
type Toolkit struct {
	NVCC        string `json:"nvcc,omitempty"`
	Version     string `json:"version,omitempty"`
	VersionFrom string `json:"version_from,omitempty"`
	// CUDAHome is /usr/local/cuda's target when it exists.
	CUDAHome string `json:"cuda_home,omitempty"`
}

// XLAInfo is where XLA would find ptxas and libdevice.
type XLAInfo struct {
	// Flags is XLA_FLAGS; DataDirFlag the --xla_gpu_cuda_data_dir in it.
	Flags       string         `json:"flags,omitempty"`
	DataDirFlag string         `json:"data_dir_flag,omitempty"`
	PtxasOnPath string         `json:"ptxas_on_path,omitempty"`
	Candidates  []XLACandidate `json:"candidates,omitempty"`
}

// XLACandidate is one CUDA data folder XLA tries.
type XLACandidate struct {
	Dir       string `json:"dir"`
	From      string `json:"from"` // xla_flags, default, tf_relative, conda
	Libdevice bool   `json:"libdevice"`
	Ptxas     bool   `json:"ptxas"`
}
