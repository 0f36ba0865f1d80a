package checks

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// Checks of the CUDA libraries link: the libraries TensorFlow dlopens,
// resolved the way the dynamic loader resolves them from TensorFlow's own
// shared objects (host/libs.go), and the driver they need.

func libsCollected(p *Pass) (*host.Libraries, *host.Python, bool) {
	py, ok := pythonCollected(p)
	if !ok {
		return nil, nil, false
	}
	if p.Snap.Libraries == nil {
		p.Skip("the CUDA libraries were not resolved")
		return nil, nil, false
	}
	return TFLibraries(p.Snap), py, true
}

// TFLibraries judges the snapshot's resolved libraries with the knowledge
// tables of this doctor: which TensorFlow (the installed one, else the
// newest release for the examined Python), the CUDA and cuDNN it was built
// with (build_info.py, else the table), and which of the resolved
// libraries it dlopens (Needed, with the mark and required flag of the
// table) or not (Present). A needed soname the snapshot did not resolve
// is Unresolved: not checked, never missing. Snapshots recorded before
// the gather stopped judging hold Needed and Present instead of Resolved;
// they are judged again from those. nil when s has no libraries.
func TFLibraries(s *host.Snapshot) *host.Libraries {
	raw := s.Libraries
	if raw == nil {
		return nil
	}
	l := *raw
	l.Needed, l.Present, l.CUDA, l.CUDNN, l.BuildFrom = nil, nil, "", "", ""
	py := s.Python
	var bi *host.BuildInfo
	switch {
	case py != nil && py.TensorFlow != nil && py.TensorFlow.Importable && py.TensorFlow.Version != "":
		l.TFVersion, l.TFVersionFrom = py.TensorFlow.Version, "installed"
		bi = py.TensorFlow.BuildInfo
	case raw.TFVersionFrom == "installed" && raw.TFVersion != "":
		// Kept: the Python facts are not in this snapshot.
	default:
		pyv := ""
		if py != nil {
			pyv = py.Version
		}
		if row, ok := knowledge.TFForPython(pyv, 0); ok {
			l.TFVersion, l.TFVersionFrom = row.TF, "recommended"
		} else {
			l.TFVersion, l.TFVersionFrom = knowledge.TFBuilds()[0].TF, "latest"
		}
	}
	if row, ok := knowledge.TFBuildFor(l.TFVersion); ok {
		l.CUDA, l.CUDNN, l.BuildFrom = row.CUDA, row.CUDNN, "compat table"
	}
	buildCUDA, buildCUDNN := "", ""
	if bi != nil {
		buildCUDA, buildCUDNN = bi.CUDAVersion, bi.CUDNNVersion
	}
	if buildCUDA != "" {
		l.CUDA, l.BuildFrom = buildCUDA, "build_info"
		if bv := knowledge.Version(buildCUDNN); len(bv) > 0 && (len(bv) > 1 || bv.Major() != knowledge.Version(l.CUDNN).Major()) {
			l.CUDNN = buildCUDNN
		}
	}
	needs, mark := knowledge.TFNeeds(l.TFVersion, buildCUDA, buildCUDNN, knowledge.Version(l.CUDA).Major())
	l.SonameMark = string(mark)

	pool := raw.Resolved
	if len(pool) == 0 { // recorded before Resolved
		pool = append(append([]host.Library{}, raw.Needed...), raw.Present...)
	}
	bySoname := map[string]host.Library{}
	for _, lib := range pool {
		if _, dup := bySoname[lib.Soname]; !dup {
			bySoname[lib.Soname] = lib
		}
	}
	needed := map[string]bool{}
	take := func(name, soname string, mark knowledge.Mark, required bool, loadedBy string) host.Library {
		lib, ok := bySoname[soname]
		if !ok {
			lib = host.Library{Name: name, Soname: soname, Unresolved: true}
		}
		lib.Mark, lib.Required, lib.LoadedBy = string(mark), required, loadedBy
		needed[soname] = true
		return lib
	}
	for _, n := range needs {
		l.Needed = append(l.Needed, take(n.Name, n.Soname, n.Mark, n.Required, ""))
	}
	// cuDNN's sub-libraries are dlopened by libcudnn itself.
	for _, main := range l.Needed {
		if main.Name != "cudnn" || !main.Found {
			continue
		}
		major := knowledge.Version(strings.TrimPrefix(main.Soname, "libcudnn.so.")).Major()
		subs, smark := knowledge.CudnnSublibraries(major)
		for _, sub := range subs {
			l.Needed = append(l.Needed, take(sub, "lib"+sub+".so."+fmt.Sprint(major), smark, false, main.Soname))
		}
		break
	}
	for _, lib := range pool {
		if needed[lib.Soname] || !(lib.Found || len(lib.OffPath) > 0 || len(lib.Shadowed) > 0 || len(lib.Rejected) > 0 || len(lib.NotInCache) > 0) {
			continue
		}
		needed[lib.Soname] = true // once
		lib.Mark, lib.Required = "", false
		l.Present = append(l.Present, lib)
	}
	sort.SliceStable(l.Present, func(i, j int) bool { return l.Present[i].Soname < l.Present[j].Soname })
	return &l
}

// tfUsesGPU reports whether an installed TensorFlow is a build that would
// load CUDA libraries (not CPU-only, not ROCm).
func tfUsesGPU(py *host.Python) bool {
	if !tfInstalled(py) {
		return false
	}
	if _, cpu := cpuOnlyDists[host.NormalizeDistName(py.TensorFlow.Dist)]; cpu {
		return false
	}
	if bi := py.TensorFlow.BuildInfo; bi != nil {
		if bi.IsCUDABuild != nil && !*bi.IsCUDABuild || bi.IsROCmBuild != nil && *bi.IsROCmBuild {
			return false
		}
	}
	return true
}

// libCause is the cause label of a missing library.
func libCause(name string) string {
	switch {
	case name == "cudart":
		return "libcudart_missing"
	case name == "cublas" || name == "cublasLt":
		return "libcublas_missing"
	case name == "cufft":
		return "libcufft_missing"
	case name == "cusparse" || name == "nvJitLink":
		return "libcusparse_missing"
	case name == "cusolver":
		return "libcusolver_missing"
	case strings.HasPrefix(name, "cudnn"):
		return "libcudnn_missing"
	}
	return ""
}

// describeLib is one line about a resolved library.
func describeLib(l host.Library) string {
	if !l.Found {
		return l.Soname + ": not found"
	}
	var extra []string
	if l.Version != "" {
		extra = append(extra, l.Version)
	}
	if l.CUDAMajor > 0 {
		extra = append(extra, fmt.Sprintf("CUDA %d", l.CUDAMajor))
	}
	extra = append(extra, l.Via)
	if len(l.Shadowed) > 0 {
		extra = append(extra, fmt.Sprintf("shadows %d", len(l.Shadowed)))
	}
	return fmt.Sprintf("%s → %s (%s)", l.Soname, l.Path, strings.Join(extra, ", "))
}

// anyMajorFound reports whether some copy of lib<name>.so.* (any major)
// is on the search path: if none is, a missing library is certain however
// its soname was inferred.
func anyMajorFound(l *host.Libraries, name string) []string {
	var out []string
	for _, x := range append(append([]host.Library{}, l.Needed...), l.Present...) {
		if x.Name == name && x.Found {
			out = append(out, x.Soname)
		}
	}
	return out
}

// repairLibsFix is how to bring back TensorFlow's libraries in the
// examined environment.
func repairLibsFix(s *host.Snapshot, l *host.Libraries, py *host.Python, lib host.Library) []Fix {
	var fixes []Fix
	// A conda package that should hold the file but lost it.
	for _, cp := range py.CondaPackages {
		if cp.Missing > 0 && condaCause(cp.Name) == libCause(lib.Name) {
			fixes = append(fixes, condaReinstallFix(py, cp))
		}
	}
	if len(lib.NotInCache) > 0 {
		fixes = append(fixes, Fix{ID: FixLdconfig, Title: "Rebuild the loader cache", Risk: RiskSafe, NeedsRoot: true, Manual: true,
			Steps: []string{"sudo ldconfig   # " + strings.Join(lib.NotInCache, ", ") + " lies in a folder /etc/ld.so.conf names but the cache does not list it"}})
	}
	version := l.TFVersion
	if b, ok := knowledge.TFBuildFor(version); !ok || !b.SupportsPython(py.Version) {
		version = mustPin(s)
	}
	if version != "" {
		fixes = append(fixes, pipInstallTF(s, version, false))
	}
	return fixes
}

// CUDALibraries resolves every library TensorFlow dlopens and reports the
// missing ones; without TensorFlow it lists what is present.
var CUDALibraries = &Check{
	ID:       "libs.cuda_libraries",
	Link:     LinkLibraries,
	Title:    "CUDA libraries TensorFlow loads",
	Causes:   []string{"libcudart_missing", "libcublas_missing", "libcudnn_missing", "libcufft_missing", "libcusparse_missing", "libcusolver_missing"},
	Requires: []string{"python", "libraries"},
	Doc: `TensorFlow dlopens lib<name>.so.<major> (libcudart, libcublas, libcublasLt,
libcufft, libcusolver, libcusparse, libcudnn; knowledge.md 3.1-3.2) from its
own libtensorflow_framework.so.2. The loader searches, in order: that
library's RPATH (only when it has no RUNPATH), LD_LIBRARY_PATH, its RUNPATH
($ORIGIN/../nvidia/<lib>/lib: the pip nvidia-* wheels of tensorflow[and-cuda]),
/etc/ld.so.cache, the default folders. doctor does the same search, reads
each winner's ELF header, version and dependencies, and lists the copies it
shadows. A missing library means TensorFlow logs "Cannot dlopen some GPU
libraries" and registers no GPU. Sonames inferred from unverified table rows
only give warnings unless no copy of any version exists.`,
	Run: runCUDALibraries,
}

func runCUDALibraries(p *Pass) {
	l, py, ok := libsCollected(p)
	if !ok {
		return
	}
	s := p.Snap
	// Every CUDA library found, TensorFlow's or not, with the file that
	// wins and what it shadows.
	var present []string
	all := append(append([]host.Library{}, l.Needed...), l.Present...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Soname < all[j].Soname })
	for _, x := range all {
		switch {
		case x.Found:
			present = append(present, describeLib(x))
		case len(x.OffPath) > 0:
			present = append(present, fmt.Sprintf("%s: on disk (%s) but not on the loader's path", x.Soname, x.OffPath[0].Path))
		}
	}
	var needed []string
	for _, x := range l.Needed {
		needed = append(needed, describeLib(x))
	}
	if !tfInstalled(py) {
		ev := Ev{"tensorflow": l.TFVersion, "tf_version_from": l.TFVersionFrom, "cuda": l.CUDA, "needed": needed, "present": present}
		p.Info("healthy", fmt.Sprintf("TensorFlow not installed: TensorFlow %s (CUDA %s) would load %s", l.TFVersion, l.CUDA, strings.Join(summarize(l.Needed, tfCUDA(l).Major()), ", ")),
			"pip install 'tensorflow[and-cuda]' brings these libraries as nvidia-* wheels.", ev).ID = p.check.ID + "/needed"
		if len(present) > 0 {
			how := "Each resolved as TensorFlow's dlopen would: LD_LIBRARY_PATH, the RUNPATH its wheel carries ($ORIGIN/../nvidia/*/lib; assumed, TensorFlow is not installed), /etc/ld.so.cache, the default folders."
			p.Info("healthy", fmt.Sprintf("%s present in this environment", plural(len(present), "CUDA library", "CUDA libraries")),
				how+"\n"+strings.Join(present, "\n"), Ev{"present": present, "search_path": searchPathLines(l)}).ID = p.check.ID + "/present"
		}
		return
	}
	if !tfUsesGPU(py) {
		p.Skip("the installed TensorFlow is not a CUDA build (see python.tensorflow)")
		return
	}
	missing := 0
	var unresolved []string
	for _, lib := range l.Needed {
		cause := libCause(lib.Name)
		if cause == "" || (!lib.Required && lib.LoadedBy == "") {
			continue
		}
		if lib.Unresolved {
			unresolved = append(unresolved, lib.Soname)
			continue
		}
		id := p.check.ID + "/" + lib.Name
		ev := Ev{"soname": lib.Soname, "mark": lib.Mark, "tensorflow": l.TFVersion, "search_path": searchPathLines(l)}
		if !lib.Found {
			missing++
			others := anyMajorFound(l, lib.Name)
			var offPath []string
			for _, c := range lib.OffPath {
				offPath = append(offPath, c.Path)
			}
			ev["other_versions_found"], ev["off_path"] = others, offPath
			detail := fmt.Sprintf("TensorFlow %s dlopens %s; no folder on the loader's search path has it.", l.TFVersion, lib.Soname)
			if lib.LoadedBy != "" {
				detail = fmt.Sprintf("%s loads %s; no folder on its search path has it.", lib.LoadedBy, lib.Soname)
			}
			if len(offPath) > 0 {
				detail += " A copy exists off the path: " + strings.Join(offPath, ", ") + "."
			}
			if len(others) > 0 {
				detail += " Other versions are present: " + strings.Join(others, ", ") + "."
			}
			sev := SevWarning
			if knowledge.Mark(lib.Mark).Verified() || len(others) == 0 && lib.LoadedBy == "" {
				sev = SevError
			}
			if sev == SevWarning {
				detail += " (The soname comes from an unverified table row.)"
			}
			f := p.add(sev, cause, lib.Soname+" not found", detail, ev, repairLibsFix(s, l, py, lib))
			f.ID = id
			continue
		}
		if len(lib.MissingDeps) > 0 {
			missing++
			ev["path"], ev["missing_deps"] = lib.Path, lib.MissingDeps
			p.Error(cause, fmt.Sprintf("%s cannot load: its dependency %s is missing", lib.Soname, strings.Join(lib.MissingDeps, ", ")),
				fmt.Sprintf("%s (found at %s) needs %s, which resolves nowhere from its search path; the loader refuses the whole library.", lib.Soname, lib.Path, strings.Join(lib.MissingDeps, ", ")),
				ev, repairLibsFix(s, l, py, lib)...).ID = id
		}
	}
	if len(unresolved) > 0 {
		p.Skip(fmt.Sprintf("the snapshot holds no resolution of %s (recorded with other compatibility tables); gather again to check them",
			strings.Join(unresolved, ", "))).ID = p.check.ID + "/unresolved"
	}
	if missing == 0 && len(unresolved) == 0 {
		p.OKf(fmt.Sprintf("%s resolve for TensorFlow %s", plural(countFound(l.Needed), "library", "libraries"), l.TFVersion),
			Ev{"needed": needed, "present": present, "search_path": searchPathLines(l)})
	}
}

func countFound(ls []host.Library) int {
	n := 0
	for _, l := range ls {
		if l.Found {
			n++
		}
	}
	return n
}

// summarize lists sonames with their state: "libcudart.so.12 (missing)",
// "libcudnn.so.9 (found, a CUDA 13 build)".
func summarize(ls []host.Library, cudaMajor int) []string {
	var out []string
	for _, l := range ls {
		if l.Name == "cuda" || l.LoadedBy != "" {
			continue
		}
		st := "missing"
		if l.Found {
			st = "found"
			if l.CUDAMajor != 0 && cudaMajor != 0 && l.CUDAMajor != cudaMajor {
				st = fmt.Sprintf("found, a CUDA %d build", l.CUDAMajor)
			}
		}
		out = append(out, fmt.Sprintf("%s (%s)", l.Soname, st))
	}
	return out
}

func searchPathLines(l *host.Libraries) []string {
	var out []string
	for _, d := range l.SearchPath {
		line := d.From + ": " + d.Dir
		if !d.Exists {
			line += " (missing)"
		}
		out = append(out, line)
	}
	return out
}

// tfCUDA is the CUDA major.minor TensorFlow was built for.
func tfCUDA(l *host.Libraries) knowledge.VersionNumber {
	return knowledge.Version(l.CUDA)
}

// DriverCUDA judges whether the driver runs the CUDA that TensorFlow's
// build (or the TensorFlow doctor recommends) needs.
var DriverCUDA = &Check{
	ID:       "libs.driver_cuda",
	Link:     LinkLibraries,
	Title:    "Driver runs TensorFlow's CUDA",
	Causes:   []string{"driver_too_old_for_cuda"},
	Requires: []string{"python", "libraries", "driver.nvml"},
	Doc: `A CUDA application needs a driver that supports its CUDA major: newer
drivers run older CUDA majors (backward compatibility), and within a major
any build runs on the major's minimum driver with a limited feature set
(minor-version compatibility: CUDA 12.x on >= 525.60.13, 11.x on >=
450.80.02, 13.x on >= 580.65.06; NVIDIA release notes, Table 2). So a
driver for CUDA 13.0 runs TensorFlow's CUDA 12 builds. The CUDA toolkit on
PATH (nvcc) does not matter here: TensorFlow brings its own libraries.`,
	Run: func(p *Pass) {
		l, py, ok := libsCollected(p)
		if !ok {
			return
		}
		s := p.Snap
		dMaj, dMin, from := driverCUDA(s)
		if dMaj == 0 {
			p.Skip("the driver's CUDA version is unknown (no NVML, no driver version)")
			return
		}
		need := tfCUDA(l)
		what := fmt.Sprintf("TensorFlow %s's CUDA %s build", l.TFVersion, l.CUDA)
		installed := tfUsesGPU(py)
		if !installed {
			// Judge the release doctor recommends, before any driver limit.
			if c, ok := tfChoose(s, 0); ok {
				row := c.Build
				need, what = knowledge.Version(row.CUDA), fmt.Sprintf("TensorFlow %s (CUDA %s)", row.TF, row.CUDA)
			}
		}
		if len(need) == 0 {
			p.Skip("TensorFlow's CUDA version is unknown")
			return
		}
		drv := driverVersion(s)
		dStr := fmt.Sprintf("%d.%d", dMaj, dMin)
		ev := Ev{"driver": drv, "driver_cuda": dStr, "driver_cuda_from": from, "tensorflow_cuda": need.String(), "tensorflow": l.TFVersion}
		// Libraries that load and were built for a newer CUDA than the
		// driver runs.
		for _, lib := range l.Needed {
			if lib.Found && lib.CUDAMajor > dMaj && lib.Name != "cuda" && lib.CUDAMajorFrom != "path" {
				p.Error("driver_too_old_for_cuda", fmt.Sprintf("%s is a CUDA %d library; the driver supports CUDA %s", lib.Soname, lib.CUDAMajor, dStr),
					fmt.Sprintf("%s (%s) needs a CUDA %d driver.", lib.Path, lib.CUDAMajorFrom, lib.CUDAMajor), ev, driverFix(s, py)...).ID = p.check.ID + "/" + lib.Name
			}
		}
		mc, _ := knowledge.MinorCompatFor(need.Major())
		switch {
		case dMaj > need.Major():
			p.OKf(fmt.Sprintf("driver %s (CUDA %s) runs %s (a newer driver runs older CUDA majors)", drv, dStr, what), ev)
		case dMaj == need.Major() && dMin >= need.Minor():
			p.OKf(fmt.Sprintf("driver %s (CUDA %s) runs %s", drv, dStr, what), ev)
		case dMaj == need.Major():
			ev["minor_compat_floor"] = mc.LinuxFloor
			if drv == "" || mc.LinuxFloor == "" || knowledge.CompareVersions(knowledge.Version(drv), knowledge.Version(mc.LinuxFloor)) >= 0 {
				p.Info("healthy", fmt.Sprintf("driver %s (CUDA %s) runs %s through minor-version compatibility", drv, dStr, what),
					"Within a CUDA major, builds for a newer minor run on the major's minimum driver with a limited feature set; PTX compiled by a newer toolkit cannot be JIT-compiled by this driver.", ev)
				return
			}
			fallthrough
		default:
			title := fmt.Sprintf("The driver (CUDA %s) is too old for %s", dStr, what)
			detail := fmt.Sprintf("%s needs a driver for CUDA %d (Linux >= %s).", what, need.Major(), orDefault(mc.LinuxFloor, "?"))
			if !installed {
				if c, ok := tfChoose(s, dMaj); ok {
					detail += fmt.Sprintf(" TensorFlow %s (CUDA %s) runs on this driver; the suggested install uses it.", c.Build.TF, c.Build.CUDA)
				}
				p.Warn("driver_too_old_for_cuda", title, detail, ev, driverFix(s, py)...)
				return
			}
			p.Error("driver_too_old_for_cuda", title, detail, ev, driverFix(s, py)...)
		}
	},
}

func driverFix(s *host.Snapshot, py *host.Python) []Fix {
	fixes := []Fix{{ID: FixInstallDriver, Title: "Install a newer NVIDIA driver", Risk: RiskDangerous, NeedsRoot: true, Steps: distroInstallDriver(s)}}
	if isWSL2(s) {
		fixes = []Fix{windowsDriverFix()}
	}
	if dMaj, _, _ := driverCUDA(s); dMaj > 0 && py != nil && py.Found {
		if c, ok := tfChoose(s, dMaj); ok {
			fixes = append(fixes, pipInstallTF(s, c.Build.TF, tfInstalled(py)))
		}
	}
	return fixes
}

// CUDNNVersion checks that the cuDNN that loads is the major TensorFlow
// was built with, and not an older minor.
var CUDNNVersion = &Check{
	ID:       "libs.cudnn_version",
	Link:     LinkLibraries,
	Title:    "cuDNN version",
	Causes:   []string{"cudnn_version_mismatch"},
	Requires: []string{"python", "libraries", "libs.cuda_libraries"},
	Doc: `TensorFlow checks at start that the loaded cuDNN has the major it was
built with and an equal or higher minor ("Loaded runtime CuDNN library:
8.8.0 but source was compiled with: 8.9.4"); convolutions then fail with
"DNN library is not found". An older cuDNN usually wins because
LD_LIBRARY_PATH, a conda env or another framework's copy comes first on the
search path. The version is read from the winning file's real name, or from
the wheel or conda package that installed it.`,
	Run: func(p *Pass) {
		l, py, ok := libsCollected(p)
		if !ok {
			return
		}
		if !tfUsesGPU(py) {
			p.Skip("no CUDA build of TensorFlow installed")
			return
		}
		s := p.Snap
		want := knowledge.Version(l.CUDNN)
		var lib *host.Library
		for i := range l.Needed {
			if l.Needed[i].Name == "cudnn" {
				lib = &l.Needed[i]
			}
		}
		if lib == nil || !lib.Found {
			p.Skip("libcudnn not found (see libs.cuda_libraries)")
			return
		}
		have := knowledge.Version(lib.Version)
		ev := Ev{"built_with": l.CUDNN, "built_from": l.BuildFrom, "loaded": lib.Version, "loaded_from": lib.VersionFrom, "path": lib.Path, "via": lib.Via}
		if len(have) == 0 || len(want) == 0 {
			p.Info("healthy", fmt.Sprintf("cuDNN %s loads from %s (version not known)", lib.Soname, lib.Path), "", ev)
			return
		}
		ok2 := have.Major() == want.Major() && (len(want) < 2 || len(have) < 2 || have.Minor() >= want.Minor())
		if ok2 {
			p.OKf(fmt.Sprintf("cuDNN %s loads (TensorFlow %s was built with %s)", lib.Version, l.TFVersion, l.CUDNN), ev)
			return
		}
		title := fmt.Sprintf("cuDNN %s loads, TensorFlow %s was built with %s", lib.Version, l.TFVersion, l.CUDNN)
		detail := fmt.Sprintf("%s (%s, via %s) is older than the cuDNN TensorFlow needs; convolutions fail with \"DNN library is not found\".", lib.Path, lib.VersionFrom, lib.Via)
		var better []string
		for _, c := range lib.Shadowed {
			if v := knowledge.Version(c.Version); v.Major() == want.Major() && (len(want) < 2 || v.Minor() >= want.Minor()) {
				better = append(better, fmt.Sprintf("%s (%s)", c.Path, c.Version))
			}
		}
		if len(better) > 0 {
			detail += " A fitting copy is shadowed: " + strings.Join(better, ", ") + "."
		}
		var fixes []Fix
		if lib.Via == "ld_library_path" {
			fixes = append(fixes, ldPathFix(s, py, []string{path.Dir(lib.Path)}))
		}
		if len(better) == 0 || lib.Via != "ld_library_path" {
			fixes = append(fixes, cudnnFix(s, l, py)...)
		}
		sev := SevWarning
		if l.BuildFrom == "build_info" && len(knowledge.Version(l.CUDNN)) >= 2 || l.BuildFrom == "compat table" {
			sev = SevError // the TF build table is verified; the loaded version is read from the file
		}
		p.add(sev, "cudnn_version_mismatch", title, detail, ev, fixes)
	},
}

// cudnnFix brings the cuDNN TensorFlow was built with. In a conda env
// that has a cudnn package: the conda-forge build of that major.minor when
// conda-forge has one (it has no 8.5, 8.6 or 8.7). Otherwise the cuDNN
// wheel that tensorflow[and-cuda] pins, when that pin is verified, or
// TensorFlow's own recipe; else a reinstall of tensorflow[and-cuda]==X,
// which lets pip resolve the pins.
func cudnnFix(s *host.Snapshot, l *host.Libraries, py *host.Python) []Fix {
	if py.Kind == "conda" {
		for _, cp := range py.CondaPackages {
			if cp.Name != "cudnn" {
				continue
			}
			if v, m, src, ok := knowledge.CondaForgeCudnn(l.CUDNN); ok && m.Verified() {
				spec := "cudnn=" + v
				params := withParam(envParams(py), "packages", spec)
				params["channel"] = "conda-forge"
				return []Fix{{ID: FixCondaReinstall, Title: "Install the cuDNN TensorFlow was built with in the conda env", Risk: RiskModerate,
					Steps:  []string{condaInstallLine(py.Prefix, "conda-forge", spec, true), ByHand + "conda-forge's cudnn " + v + ": " + src},
					Params: params}}
			}
		}
	}
	if row, ok := knowledge.PinsFor(l.TFVersion); ok {
		for name := range row.Packages {
			if strings.HasPrefix(name, "nvidia-cudnn-") {
				pin, _ := row.PinOf(name)
				if !pin.Mark.Verified() {
					break // an unverified pin never becomes a command
				}
				req := name + "==" + pin.Version
				return []Fix{{ID: FixPipInstallTensorFlow, Title: "Install the cuDNN wheel tensorflow[and-cuda] pins", Risk: RiskModerate,
					Steps:  []string{shQuote(py.Executable) + " -m pip install " + shQuote(req)},
					Params: withParam(envParams(py), "requirement", req)}}
			}
		}
	}
	if r, ok := knowledge.RecipeFor(l.TFVersion); ok && r.Mark.Verified() && len(r.Pip) == 1 {
		req := r.Pip[0]
		return []Fix{{ID: FixPipInstallTensorFlow, Title: "Install the cuDNN wheel TensorFlow's recipe names", Risk: RiskModerate,
			Steps: []string{shQuote(py.Executable) + " -m pip install " + shQuote(req),
				ByHand + "in $CONDA_PREFIX/etc/conda/activate.d/env_vars.sh: " + r.Activate + " (" + r.Source + ")"},
			Params: withParam(envParams(py), "requirement", req)}}
	}
	return []Fix{pipInstallTF(s, l.TFVersion, true)}
}

// condaInstallLine is the command the conda-reinstall plan runs.
func condaInstallLine(prefix, channel, spec string, force bool) string {
	line := "conda install -y"
	if force {
		line += " --force-reinstall"
	}
	line += " -p " + shQuote(prefix)
	if channel != "" {
		line += " -c " + shQuote(channel)
	}
	return line + " " + shQuote(spec)
}

// CUDAMajorMismatch finds libraries that load but were built for another
// CUDA major than TensorFlow.
var CUDAMajorMismatch = &Check{
	ID:       "libs.cuda_major",
	Link:     LinkLibraries,
	Title:    "CUDA libraries match TensorFlow's CUDA",
	Causes:   []string{"cuda_version_mismatch_tf_build"},
	Requires: []string{"python", "libraries"},
	Doc: `Some sonames are shared across CUDA majors: libcusolver.so.11 exists in
CUDA 11 and CUDA 12, libcurand.so.10 in 11, 12 and 13, libcudnn.so.9 in its
cu12 and cu13 builds. The loader takes whichever comes first, and a
library built for another CUDA major then fails to load its own
dependencies or to initialise. doctor tells a file's CUDA major from its
dependencies (DT_NEEDED libcublas.so.11), the wheel that installed it
(-cu12), its conda package, or its path (cuda-11.8).`,
	Run: func(p *Pass) {
		l, py, ok := libsCollected(p)
		if !ok {
			return
		}
		if !tfUsesGPU(py) {
			p.Skip("no CUDA build of TensorFlow installed")
			return
		}
		s := p.Snap
		want := tfCUDA(l).Major()
		if want == 0 {
			p.Skip("TensorFlow's CUDA version is unknown")
			return
		}
		// One finding for all of them: cuDNN's sub-libraries follow their
		// main library, and one folder usually brings several.
		var libsOff []string
		var dirs []string
		var viaLD, direct bool
		var first host.Library
		for _, lib := range l.Needed {
			if !lib.Found || lib.Name == "cuda" || lib.CUDAMajor == 0 || lib.CUDAMajor == want {
				continue
			}
			if len(libsOff) == 0 {
				first = lib
			}
			libsOff = append(libsOff, fmt.Sprintf("%s → %s (CUDA %d: %s; via %s)", lib.Soname, lib.Path, lib.CUDAMajor, lib.CUDAMajorFrom, lib.Via))
			dirs = append(dirs, path.Dir(lib.Path))
			viaLD = viaLD || lib.Via == "ld_library_path"
			direct = direct || lib.CUDAMajorFrom != "path" && lib.Name != "nccl"
		}
		if len(libsOff) == 0 {
			p.OK(fmt.Sprintf("the libraries that load are CUDA %d builds", want))
			return
		}
		dirs = uniq(dirs)
		ev := Ev{"libraries": libsOff, "tensorflow_cuda": l.CUDA, "folders": dirs}
		var fixes []Fix
		if viaLD {
			var ldDirs []string
			for _, lib := range l.Needed {
				if lib.Found && lib.Via == "ld_library_path" && lib.CUDAMajor != 0 && lib.CUDAMajor != want {
					ldDirs = append(ldDirs, path.Dir(lib.Path))
				}
			}
			fixes = append(fixes, ldPathFix(s, py, uniq(ldDirs)))
		} else {
			fixes = append(fixes, repairLibsFix(s, l, py, first)...)
		}
		title := fmt.Sprintf("%s loads from CUDA %d; TensorFlow %s is a CUDA %d build", first.Soname, first.CUDAMajor, l.TFVersion, want)
		if len(libsOff) > 1 {
			title = fmt.Sprintf("%s and %d more load from another CUDA than TensorFlow %s's CUDA %d", first.Soname, len(libsOff)-1, l.TFVersion, want)
		}
		sev := SevWarning
		if direct {
			sev = SevError
		}
		p.add(sev, "cuda_version_mismatch_tf_build", title,
			"These files come first on the search path but were built for another CUDA major:\n"+strings.Join(libsOff, "\n"), ev, fixes)
	},
}

// ldPathFix removes folders from LD_LIBRARY_PATH, narrowest place first.
func ldPathFix(s *host.Snapshot, py *host.Python, remove []string) Fix {
	drop := map[string]bool{}
	for _, d := range remove {
		drop[path.Clean(d)] = true
	}
	var keep []string
	for _, d := range strings.Split(s.Env["LD_LIBRARY_PATH"], ":") {
		if d != "" && !drop[path.Clean(d)] {
			keep = append(keep, d)
		}
	}
	value := strings.Join(keep, ":")
	params := envParams(py)
	params["value"] = value
	params["remove"] = strings.Join(remove, ":")
	set := "unset LD_LIBRARY_PATH"
	if value != "" {
		set = "export LD_LIBRARY_PATH=" + shQuote(value)
	}
	steps := []string{set + "   # this shell"}
	if py.Kind == "conda" {
		steps = append(steps,
			fmt.Sprintf("Write %s/etc/conda/activate.d/doctor-ld-library-path.sh:  export DOCTOR_SAVED_LD_LIBRARY_PATH=\"${LD_LIBRARY_PATH:-}\"; %s", py.Prefix, set),
			fmt.Sprintf("Write %s/etc/conda/deactivate.d/doctor-ld-library-path.sh:  export LD_LIBRARY_PATH=\"${DOCTOR_SAVED_LD_LIBRARY_PATH:-}\"; unset DOCTOR_SAVED_LD_LIBRARY_PATH", py.Prefix))
	}
	steps = append(steps, "Remove "+strings.Join(remove, ", ")+" where LD_LIBRARY_PATH is set (~/.bashrc, ~/.profile, /etc/environment, the job script)")
	return Fix{ID: FixLDLibraryPath, Title: "Take " + strings.Join(remove, ", ") + " out of LD_LIBRARY_PATH", Risk: RiskSafe, Steps: steps, Params: params}
}

// LDLibraryPath finds LD_LIBRARY_PATH folders whose CUDA libraries win
// over the ones TensorFlow's RUNPATH names.
var LDLibraryPath = &Check{
	ID:       "libs.ld_library_path",
	Link:     LinkLibraries,
	Title:    "LD_LIBRARY_PATH",
	Causes:   []string{"ld_library_path_pollution"},
	Requires: []string{"python", "libraries"},
	Doc: `The loader searches LD_LIBRARY_PATH before the RUNPATH of TensorFlow's
libraries, so a CUDA toolkit or an old cuDNN named there (guides tell users
to export /usr/local/cuda/lib64) wins over the nvidia-* wheels that
tensorflow[and-cuda] installed and pinned. Harmless when the versions
agree; the usual cause of cuDNN and CUDA mismatches when they do not. The
fix removes the folders from LD_LIBRARY_PATH, in the conda env's
activate.d script where there is one.`,
	Run: func(p *Pass) {
		l, py, ok := libsCollected(p)
		if !ok {
			return
		}
		s := p.Snap
		if len(l.LDLibraryPath) == 0 {
			p.OK("LD_LIBRARY_PATH not set")
			return
		}
		want := tfCUDA(l).Major()
		var bad, harmless []string
		var dirs []string
		sev := SevInfo
		for _, lib := range l.Needed {
			if !lib.Found || lib.Via != "ld_library_path" || lib.Name == "cuda" {
				continue
			}
			for _, c := range lib.Shadowed {
				if c.Via != "runpath" && c.Via != "rpath" {
					continue
				}
				line := fmt.Sprintf("%s: %s (%s) shadows %s (%s)", lib.Soname, lib.Path, orUnknown(lib.Version), c.Path, orUnknown(c.Version))
				differ := lib.Version == "" || c.Version == "" || lib.Version != c.Version
				mismatch := lib.CUDAMajor != 0 && want != 0 && lib.CUDAMajor != want ||
					lib.Version != "" && c.Version != "" && knowledge.CompareVersions(knowledge.Version(lib.Version), knowledge.Version(c.Version)) < 0
				switch {
				case mismatch:
					bad = append(bad, line)
					sev = SevError
					dirs = append(dirs, path.Dir(lib.Path))
				case differ:
					bad = append(bad, line)
					if sev != SevError {
						sev = SevWarning
					}
					dirs = append(dirs, path.Dir(lib.Path))
				default:
					harmless = append(harmless, line)
				}
				break
			}
		}
		ev := Ev{"LD_LIBRARY_PATH": s.Env["LD_LIBRARY_PATH"], "shadowing": bad, "same_version": harmless}
		if len(bad) == 0 {
			if len(harmless) > 0 {
				p.Info("healthy", "LD_LIBRARY_PATH names copies of the same versions TensorFlow's RUNPATH has", strings.Join(harmless, "\n"), ev)
				return
			}
			p.OKf("LD_LIBRARY_PATH does not shadow TensorFlow's libraries", ev)
			return
		}
		dirs = uniq(dirs)
		title := fmt.Sprintf("LD_LIBRARY_PATH puts %s ahead of TensorFlow's own libraries", strings.Join(dirs, ", "))
		if sev == SevError {
			title = fmt.Sprintf("LD_LIBRARY_PATH puts older or other-CUDA libraries from %s ahead of TensorFlow's", strings.Join(dirs, ", "))
		}
		p.add(sev, "ld_library_path_pollution", title, strings.Join(bad, "\n"), ev, []Fix{ldPathFix(s, py, dirs)})
	},
}

func uniq(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// condaCause maps a conda package to the cause its missing files mean.
func condaCause(name string) string {
	switch {
	case strings.HasPrefix(name, "cudnn"):
		return "libcudnn_missing"
	case strings.HasPrefix(name, "libcublas"):
		return "libcublas_missing"
	case strings.HasPrefix(name, "libcufft"):
		return "libcufft_missing"
	case strings.HasPrefix(name, "libcusparse"), strings.HasPrefix(name, "libnvjitlink"):
		return "libcusparse_missing"
	case strings.HasPrefix(name, "libcusolver"):
		return "libcusolver_missing"
	case name == "cudatoolkit", strings.HasPrefix(name, "cuda-cudart"), strings.HasPrefix(name, "cuda-runtime"):
		return "libcudart_missing"
	case strings.HasPrefix(name, "cuda-nvcc"), strings.HasPrefix(name, "cuda-nvvm"):
		return "xla_ptxas_or_libdevice_missing"
	case strings.HasPrefix(name, "tensorflow"):
		return "tf_not_installed"
	}
	return ""
}

func condaReinstallFix(py *host.Python, cp host.CondaPackage) Fix {
	spec := cp.Name + "=" + cp.Version
	params := withParam(envParams(py), "packages", spec)
	ch := condaChannel(cp.Channel)
	if ch != "" {
		params["channel"] = ch
	}
	return Fix{ID: FixCondaReinstall, Title: "Reinstall the conda package " + cp.Name, Risk: RiskModerate,
		Steps:  []string{condaInstallLine(py.Prefix, ch, spec, true)},
		Params: params}
}

var condaChannelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// condaChannel turns conda-meta's channel ("conda-forge",
// "https://conda.anaconda.org/conda-forge/linux-64", "pkgs/main") into a
// name for -c; "" when it is none doctor passes on.
func condaChannel(c string) string {
	c = strings.TrimSuffix(c, "/")
	if u, ok := strings.CutPrefix(c, "https://conda.anaconda.org/"); ok {
		c, _, _ = strings.Cut(u, "/")
	}
	if condaChannelRE.MatchString(c) {
		return c
	}
	return ""
}

// CondaFiles finds conda packages whose files are gone.
var CondaFiles = &Check{
	ID:       "libs.conda_files",
	Link:     LinkLibraries,
	Title:    "Conda packages complete",
	Causes:   []string{"libcudnn_missing", "libcublas_missing", "libcufft_missing", "libcusparse_missing", "libcusolver_missing", "libcudart_missing", "xla_ptxas_or_libdevice_missing", "tf_not_installed"},
	Requires: []string{"python"},
	Doc: `conda-meta/<package>.json lists every file a conda package installed.
When files are gone (deleted by hand, a cleanup script, a failed
transaction), conda still reports the package as installed, so
"conda install cudnn" does nothing. doctor checks the listed files of the
CUDA, cuDNN and TensorFlow packages; the fix is a forced reinstall.`,
	Run: func(p *Pass) {
		py, ok := pythonCollected(p)
		if !ok {
			return
		}
		if py.Kind != "conda" {
			p.OK("not a conda environment")
			return
		}
		for _, cp := range py.CondaPackages {
			if cp.Missing == 0 {
				continue
			}
			cause := condaCause(cp.Name)
			ev := Ev{"package": cp.Name, "version": cp.Version, "files": cp.Files, "missing": cp.Missing, "missing_files": cp.MissingFiles, "meta": cp.Meta}
			title := fmt.Sprintf("conda package %s %s lacks %d of its %d files", cp.Name, cp.Version, cp.Missing, cp.Files)
			detail := "Missing: " + strings.Join(cp.MissingFiles, ", ")
			if cp.Missing > len(cp.MissingFiles) {
				detail += fmt.Sprintf(" and %d more", cp.Missing-len(cp.MissingFiles))
			}
			id := p.check.ID + "/" + cp.Name
			if cause == "" {
				p.Info("healthy", title, detail+" (not a library TensorFlow loads)", ev).ID = id
				continue
			}
			sev := SevWarning
			for _, f := range cp.MissingFiles {
				if strings.Contains(path.Base(f), ".so") || strings.HasSuffix(f, ".bc") || strings.HasSuffix(f, "/ptxas") || strings.HasSuffix(f, "__init__.py") {
					sev = SevError
				}
			}
			p.add(sev, cause, title, detail, ev, []Fix{condaReinstallFix(py, cp)}).ID = id
		}
		if len(p.findings) == 0 {
			p.OK(fmt.Sprintf("%s complete", plural(len(py.CondaPackages), "CUDA/TensorFlow conda package", "CUDA/TensorFlow conda packages")))
		}
	},
}

// XLAData checks that XLA can find libdevice and ptxas.
var XLAData = &Check{
	ID:       "libs.xla",
	Link:     LinkLibraries,
	Title:    "XLA's ptxas and libdevice",
	Causes:   []string{"xla_ptxas_or_libdevice_missing"},
	Requires: []string{"python", "libraries"},
	Doc: `XLA (jit_compile=True, and Keras 3's default jit_compile="auto" on GPU)
compiles kernels with ptxas and links libdevice.10.bc. It looks in
--xla_gpu_cuda_data_dir (XLA_FLAGS), /usr/local/cuda, /opt/cuda, the
nvidia/cuda_nvcc wheel next to TensorFlow, and a conda env's prefix, and
prefers ptxas on PATH (openxla cuda_root_path.cc). Without libdevice,
XLA-compiled functions fail with "libdevice not found at
./libdevice.10.bc"; without ptxas it falls back to the driver's JIT.`,
	Run: func(p *Pass) {
		l, py, ok := libsCollected(p)
		if !ok {
			return
		}
		if !tfUsesGPU(py) {
			p.Skip("no CUDA build of TensorFlow installed")
			return
		}
		x := l.XLA
		var libdev, ptxas []string
		var cands []string
		for _, c := range x.Candidates {
			cands = append(cands, fmt.Sprintf("%s (%s): libdevice %v, ptxas %v", c.Dir, c.From, c.Libdevice, c.Ptxas))
			if c.Libdevice {
				libdev = append(libdev, c.Dir)
			}
			if c.Ptxas {
				ptxas = append(ptxas, c.Dir)
			}
		}
		ev := Ev{"candidates": cands, "xla_flags": x.Flags, "ptxas_on_path": x.PtxasOnPath}
		site := ""
		if py.TensorFlow != nil && py.TensorFlow.Package != "" {
			site = path.Dir(py.TensorFlow.Package)
		}
		nvccDir := path.Join(site, "nvidia", "cuda_nvcc")
		fix := func() Fix {
			params := envParams(py)
			params["dir"] = nvccDir
			steps := []string{}
			if row, ok := knowledge.PinsFor(l.TFVersion); ok {
				for name := range row.Packages {
					if !strings.HasPrefix(name, "nvidia-cuda-nvcc-") {
						continue
					}
					// A verified pin names the wheel; otherwise pip resolves
					// it from tensorflow[and-cuda]'s own metadata.
					req := "tensorflow[and-cuda]==" + l.TFVersion
					if pin, _ := row.PinOf(name); pin.Mark.Verified() {
						req = name + "==" + pin.Version
					}
					params["requirement"] = req
					steps = append(steps, shQuote(py.Executable)+" -m pip install "+shQuote(req))
				}
			}
			steps = append(steps, "export XLA_FLAGS=--xla_gpu_cuda_data_dir="+shQuote(nvccDir)+"   # doctor --fix writes it to the environment's activate script")
			return Fix{ID: FixXLACudaDataDir, Title: "Give XLA a CUDA data folder with libdevice and ptxas", Risk: RiskSafe, Steps: steps, Params: params}
		}
		if x.DataDirFlag != "" {
			for _, c := range x.Candidates {
				if c.From == "xla_flags" && !c.Libdevice {
					p.Warn("xla_ptxas_or_libdevice_missing", "XLA_FLAGS names "+c.Dir+", which has no nvvm/libdevice/libdevice.10.bc",
						"--xla_gpu_cuda_data_dir must be a folder with nvvm/libdevice/libdevice.10.bc and bin/ptxas.", ev, fix())
					return
				}
			}
		}
		switch {
		case len(libdev) == 0:
			p.Warn("xla_ptxas_or_libdevice_missing", "XLA finds no libdevice: XLA-compiled functions will fail",
				"None of the folders XLA searches has nvvm/libdevice/libdevice.10.bc: "+strings.Join(cands, "; ")+".", ev, fix())
		case len(ptxas) == 0 && x.PtxasOnPath == "":
			p.Warn("xla_ptxas_or_libdevice_missing", "XLA finds no ptxas",
				"XLA falls back to the driver's PTX JIT, which is slower and may fail for PTX newer than the driver.", ev, fix())
		default:
			p.OKf("XLA finds libdevice in "+libdev[0], ev)
		}
	},
}

// Toolkit notes the CUDA toolkit on PATH. TensorFlow does not use it, so a
// version that differs from TensorFlow's is never an error.
var Toolkit = &Check{
	ID:       "libs.toolkit",
	Link:     LinkLibraries,
	Title:    "CUDA toolkit (nvcc)",
	Causes:   []string{"healthy"},
	Requires: []string{"python", "libraries"},
	Doc: `nvcc and /usr/local/cuda are what "nvcc --version" shows and what guides
ask users to match with TensorFlow. TensorFlow does not use the toolkit: it
dlopens its runtime libraries (from the nvidia-* wheels, or whatever the
loader finds first) and only XLA may use the toolkit's ptxas and libdevice.
This check only reports what is there.`,
	Run: func(p *Pass) {
		l, _, ok := libsCollected(p)
		if !ok {
			return
		}
		tk := l.Toolkit
		ev := Ev{"nvcc": tk.NVCC, "version": tk.Version, "version_from": tk.VersionFrom, "cuda_home": tk.CUDAHome, "tensorflow_cuda": l.CUDA}
		if tk.NVCC == "" {
			p.OKf("no CUDA toolkit (nvcc) on PATH; TensorFlow does not need one", ev)
			return
		}
		note := ""
		if v := knowledge.Version(tk.Version); len(v) > 0 && l.CUDA != "" && v.Major() != tfCUDA(l).Major() {
			note = fmt.Sprintf("; TensorFlow %s uses its own CUDA %s libraries, so the difference does not matter", l.TFVersion, l.CUDA)
		}
		p.Info("healthy", fmt.Sprintf("CUDA toolkit %s on PATH (%s)%s", orUnknown(tk.Version), tk.NVCC, note), "", ev)
	},
}
