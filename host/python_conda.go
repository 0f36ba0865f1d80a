package host

import (
	"encoding/json"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// condaRelevant matches conda package names that carry CUDA libraries,
// the CUDA compiler pieces XLA needs, or TensorFlow.
var condaRelevant = regexp.MustCompile(`^(cudnn|cudatoolkit|nccl|tensorflow.*|cuda-(cudart|nvcc|nvvm|runtime|libraries|nvrtc|cupti|toolkit|version|nvcc-tools|nvvm-tools).*|libcublas.*|libcufft.*|libcurand.*|libcusolver.*|libcusparse.*|libnvjitlink.*)$`)

var cudaVersionDep = regexp.MustCompile(`^(?:cuda-version|cudatoolkit|__cuda)\s*[>=~ ]*\s*(\d+)`)

// condaPackages reads the conda-meta records of the packages doctor
// judges, checks that the files they list still exist, and maps the
// shared objects they installed to "name version (conda)".
func (g *gatherer) condaPackages(prefix string) ([]CondaPackage, map[string]string) {
	dir := path.Join(prefix, "conda-meta")
	ents, err := os.ReadDir(g.fs(dir))
	if err != nil {
		return nil, nil
	}
	owners := map[string]string{}
	var out []CondaPackage
	for _, e := range ents {
		name, ver, build, ok := splitCondaMetaName(e.Name())
		if !ok || !condaRelevant.MatchString(name) {
			continue
		}
		meta := path.Join(dir, e.Name())
		p := CondaPackage{Name: name, Version: ver, Build: build, Meta: meta}
		b, err := os.ReadFile(g.fs(meta))
		if err != nil || len(b) > 64<<20 {
			out = append(out, p)
			continue
		}
		var rec struct {
			Channel string   `json:"channel"`
			Files   []string `json:"files"`
			Depends []string `json:"depends"`
		}
		if json.Unmarshal(b, &rec) != nil {
			out = append(out, p)
			continue
		}
		p.Channel = rec.Channel
		p.Files = len(rec.Files)
		for _, f := range rec.Files {
			full := path.Join(prefix, f)
			if !g.exists(full) {
				p.Missing++
				if len(p.MissingFiles) < 10 {
					p.MissingFiles = append(p.MissingFiles, full)
				}
				continue
			}
			if strings.Contains(path.Base(f), ".so") {
				owners[full] = name + " " + ver + " (conda)"
			}
		}
		for _, dep := range rec.Depends {
			if m := cudaVersionDep.FindStringSubmatch(dep); m != nil {
				p.CUDAMajor, _ = strconv.Atoi(m[1])
				break
			}
		}
		if p.CUDAMajor == 0 {
			switch {
			case name == "cudatoolkit" || strings.HasPrefix(name, "cuda-cudart") || strings.HasPrefix(name, "libcublas") || strings.HasPrefix(name, "cuda-nvcc"):
				p.CUDAMajor = leadingInt(ver)
			case strings.Contains(build, "cuda11"):
				p.CUDAMajor = 11
			case strings.Contains(build, "cuda12"):
				p.CUDAMajor = 12
			case strings.Contains(build, "cuda13"):
				p.CUDAMajor = 13
			}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, owners
}

func leadingInt(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		if n > 1<<20 {
			break
		}
	}
	return n
}
