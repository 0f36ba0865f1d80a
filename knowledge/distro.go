package knowledge

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed data/distro.json
var distroJSON []byte

// DistroSteps is how one distribution (family) does one thing, with the
// source and mark of the steps. Steps of a row that is not Verified are
// advice: printed, never run.
type DistroSteps struct {
	Distros    []string `json:"distros"` // os-release IDs; empty: any other
	ReleaseMin int      `json:"release_min,omitempty"`
	ReleaseMax int      `json:"release_max,omitempty"`
	Steps      []string `json:"steps"`
	Key        string   `json:"key,omitempty"`
	Package    string   `json:"package,omitempty"`
	File       string   `json:"file,omitempty"`
	Mark       Mark     `json:"v"`
	Source     string   `json:"source"`
	Note       string   `json:"note,omitempty"`
}

type distroFile struct {
	Install    []DistroSteps `json:"install_driver"`
	SecureBoot []DistroSteps `json:"secure_boot"`
	Nouveau    []DistroSteps `json:"nouveau_blacklist_by_driver"`
	WSLMinimum struct {
		Version string `json:"version"`
		Mark    Mark   `json:"v"`
		Source  string `json:"source"`
	} `json:"wsl_windows_driver_min"`
}

var distros = func() *distroFile {
	var f distroFile
	if err := json.Unmarshal(distroJSON, &f); err != nil {
		panic(fmt.Sprintf("knowledge: data/distro.json: %v", err))
	}
	return &f
}()

func pickDistro(rows []DistroSteps, id, release string) (DistroSteps, bool) {
	rel := Version(release).Major()
	var fallback *DistroSteps
	for i := range rows {
		r := &rows[i]
		if len(r.Distros) == 0 {
			fallback = r
			continue
		}
		if !containsString(r.Distros, strings.ToLower(id)) {
			continue
		}
		if rel > 0 && (r.ReleaseMin > 0 && rel < r.ReleaseMin || r.ReleaseMax > 0 && rel > r.ReleaseMax) {
			continue
		}
		if rel == 0 && r.ReleaseMin > 0 {
			continue // unknown release: the row without a minimum
		}
		return *r, true
	}
	if fallback != nil {
		return *fallback, true
	}
	return DistroSteps{}, false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// InstallDriverSteps returns how a distribution (os-release ID and
// VERSION_ID) installs the NVIDIA driver.
func InstallDriverSteps(id, release string) (DistroSteps, bool) {
	return pickDistro(distros.Install, id, release)
}

// SecureBootSteps returns how a distribution enrolls the key DKMS signs
// the NVIDIA module with.
func SecureBootSteps(id string) (DistroSteps, bool) {
	return pickDistro(distros.SecureBoot, id, "")
}

// DriverBlacklistsNouveau returns the row saying whether the distribution's
// driver packages blacklist nouveau themselves.
func DriverBlacklistsNouveau(id string) (DistroSteps, bool) {
	for _, r := range distros.Nouveau {
		if containsString(r.Distros, strings.ToLower(id)) {
			return r, true
		}
	}
	return DistroSteps{}, false
}

// WSLMinWindowsDriver is the oldest Windows driver TensorFlow's docs
// accept for WSL 2, with its mark and source.
func WSLMinWindowsDriver() (string, Mark, string) {
	w := distros.WSLMinimum
	return w.Version, w.Mark, w.Source
}
