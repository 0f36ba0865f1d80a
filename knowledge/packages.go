package knowledge

import (
	"strings"
)

// Recipe is TensorFlow's own way of getting CUDA and cuDNN for releases
// without the [and-cuda] extra (before 2.14).
type Recipe struct {
	Min      string   `json:"tf_min"`
	Max      string   `json:"tf_max"`
	Mark     Mark     `json:"v"`
	Conda    []string `json:"conda"`    // conda-forge specs
	Pip      []string `json:"pip"`      // pip requirements
	Activate string   `json:"activate"` // what the env's activate.d script sets
	Source   string   `json:"source"`
}

// Uninstallable is a pip requirement that cannot install (on a Python
// minor, or "" for every Python), and what to use instead ("" for none).
type Uninstallable struct {
	Requirement string `json:"requirement"`
	Python      string `json:"python"`
	Use         string `json:"use"`
	Mark        Mark   `json:"v"`
	Why         string `json:"why"`
	Source      string `json:"source"`
}

type packagesData struct {
	CondaForgeCudnn struct {
		Versions []string `json:"versions"`
		Mark     Mark     `json:"v"`
		Source   string   `json:"source"`
	} `json:"conda_forge_cudnn"`
	Recipes       []Recipe        `json:"recipes"`
	Uninstallable []Uninstallable `json:"pip_uninstallable"`
}

func pkgs() *packagesData { return &compat.Packages }

// CondaForgeCudnn returns the newest conda-forge cudnn build whose version
// starts with want ("8.9" -> "8.9.7.29"), with the list's mark and source;
// ok is false when conda-forge has none (8.6, 8.7).
func CondaForgeCudnn(want string) (version string, mark Mark, source string, ok bool) {
	d := pkgs().CondaForgeCudnn
	for _, v := range d.Versions {
		if versionHasPrefix(v, want) {
			if version == "" || CompareVersions(Version(v), Version(version)) > 0 {
				version = v
			}
		}
	}
	return version, d.Mark, d.Source, version != ""
}

// versionHasPrefix reports whether v starts with the dotted parts of
// prefix ("8.9.7.29" has "8.9" and "8.9.7", not "8.1").
func versionHasPrefix(v, prefix string) bool {
	return v == prefix || strings.HasPrefix(v, prefix+".")
}

// RecipeFor returns TensorFlow's CUDA recipe for a release before 2.14.
func RecipeFor(tf string) (Recipe, bool) {
	v := Version(tf)
	if len(v) < 2 {
		return Recipe{}, false
	}
	for _, r := range pkgs().Recipes {
		if inMinorRange(v, r.Min, r.Max) {
			return r, true
		}
	}
	return Recipe{}, false
}

// PipUninstallable returns the entry for a requirement that cannot install
// on Python py.
func PipUninstallable(req, py string) (Uninstallable, bool) {
	for _, u := range pkgs().Uninstallable {
		if u.Requirement != req {
			continue
		}
		if u.Python == "" || majorMinor(py) == u.Python {
			return u, true
		}
	}
	return Uninstallable{}, false
}

// KnownPipVersion says whether the knowledge records name==version as a
// version that exists, with its mark and source. tensorflow releases come
// from the tested-builds table (X.Y.0) and setup.py (2.15.0.post1);
// nvidia-* wheels from the and-cuda pins (their effective mark) and
// TensorFlow's recipes.
func KnownPipVersion(name, version string) (Mark, string, bool) {
	name = strings.ToLower(name)
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if name == "tensorflow" {
		for _, b := range compat.TensorFlowBuilds.Rows {
			if b.TF == version {
				return b.Mark, compat.TensorFlowBuilds.Source, true
			}
		}
		for _, r := range compat.Pins.Rows {
			if r.TF == version && strings.Contains(version, "post") {
				return r.Mark, r.Source, true
			}
		}
		return MarkU, "", false
	}
	for _, r := range pkgs().Recipes {
		for _, p := range r.Pip {
			if n, v, ok := strings.Cut(p, "=="); ok && n == name && v == version {
				return r.Mark, r.Source, true
			}
		}
	}
	best, src, found := MarkU, "", false
	for _, r := range compat.Pins.Rows {
		if p, ok := r.PinOf(name); ok && p.Version == version {
			if !found || p.Mark.Weaker(best) == best {
				best, src, found = p.Mark, r.Source, true
			}
		}
	}
	return best, src, found
}

// KnownCondaSpec says whether a conda spec "name=version" names a version
// that exists on conda-forge by the knowledge, with its mark and source.
func KnownCondaSpec(spec string) (Mark, string, bool) {
	name, ver, ok := strings.Cut(spec, "=")
	if !ok {
		return MarkU, "", false
	}
	ver = strings.TrimPrefix(ver, "=")
	if name == "cudnn" {
		if _, m, src, ok := CondaForgeCudnn(ver); ok {
			return m, src, true
		}
		return MarkU, "", false
	}
	for _, r := range pkgs().Recipes {
		for _, c := range r.Conda {
			if c == name+"="+ver {
				return r.Mark, r.Source, true
			}
		}
	}
	return MarkU, "", false
}
