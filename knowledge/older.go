package knowledge

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
)

//go:embed data/compat_older.json
var olderJSON []byte

// olderFile holds the rows older than compat.json covers (TensorFlow
// before 2.4, CUDA before 11.0), from secondary copies of the same
// primary tables. Together with compat.json they are one table: no row is
// in both.
type olderFile struct {
	TensorFlowBuilds struct {
		Source string    `json:"source"`
		Rows   []TFBuild `json:"rows"`
	} `json:"tensorflow_builds"`
	Driver struct {
		Source string          `json:"source"`
		Rows   []ToolkitDriver `json:"rows"`
	} `json:"cuda_driver"`
}

var older = func() *olderFile {
	var f olderFile
	if err := json.Unmarshal(olderJSON, &f); err != nil {
		panic(fmt.Sprintf("knowledge: data/compat_older.json: %v", err))
	}
	return &f
}()

// TFBuildAnyFor is TFBuildFor, then the builds before 2.4 (by
// major.minor): what explain needs for a log of any age. The checks judge
// installed TensorFlow with the tested builds (TFBuildFor) only.
func TFBuildAnyFor(version string) (TFBuild, bool) {
	if b, ok := TFBuildFor(version); ok {
		return b, true
	}
	v := Version(version)
	if len(v) < 2 {
		return TFBuild{}, false
	}
	for _, r := range older.TensorFlowBuilds.Rows {
		if rv := Version(r.TF); len(rv) >= 2 && rv[0] == v[0] && rv[1] == v[1] {
			return r, true
		}
	}
	return TFBuild{}, false
}

// GADrivers are the minimum Linux drivers of the first (GA) release of
// each CUDA minor version, newest first: compat.json's GA rows, then the
// older ones.
func GADrivers() []ToolkitDriver {
	var out []ToolkitDriver
	for _, r := range compat.Driver.Rows {
		if r.Release == "GA" {
			out = append(out, r)
		}
	}
	out = append(out, older.Driver.Rows...)
	sort.SliceStable(out, func(i, j int) bool { return CompareVersions(Version(out[i].CUDA), Version(out[j].CUDA)) > 0 })
	return out
}
