package host

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// jupyterKernels reads every kernel.json in Jupyter's data folders (user,
// system, and each known environment's share/jupyter) and finds the
// environment each Python kernel runs.
func (g *gatherer) jupyterKernels(examinedPrefix string, envs []PythonEnv) []JupyterKernel {
	var dirs []string
	for _, p := range filepath.SplitList(g.getenv("JUPYTER_PATH")) {
		if path.IsAbs(p) {
			dirs = append(dirs, path.Join(p, "kernels"))
		}
	}
	if d := g.getenv("JUPYTER_DATA_DIR"); path.IsAbs(d) {
		dirs = append(dirs, path.Join(d, "kernels"))
	} else if h := g.getenv("HOME"); h != "" {
		dirs = append(dirs, path.Join(h, ".local/share/jupyter/kernels"))
	}
	if examinedPrefix != "" {
		dirs = append(dirs, path.Join(examinedPrefix, "share/jupyter/kernels"))
	}
	for _, e := range envs {
		dirs = append(dirs, path.Join(e.Prefix, "share/jupyter/kernels"))
	}
	dirs = append(dirs, "/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels")

	tfOf := map[string]string{}
	for _, e := range envs {
		tfOf[e.Prefix] = e.TensorFlow
	}
	var out []JupyterKernel
	seen := map[string]bool{}
	for _, dir := range uniqueStrings(dirs) {
		ents, err := os.ReadDir(g.fs(dir))
		if err != nil {
			continue
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, e := range ents {
			spec := path.Join(dir, e.Name(), "kernel.json")
			if seen[spec] || len(out) >= 64 {
				continue
			}
			seen[spec] = true
			b, err := g.readSmall(spec, 1<<20)
			if err != nil {
				continue
			}
			k := JupyterKernel{Name: e.Name(), Spec: spec}
			var kj struct {
				Argv        []string `json:"argv"`
				DisplayName string   `json:"display_name"`
				Language    string   `json:"language"`
			}
			if err := json.Unmarshal([]byte(b), &kj); err != nil {
				k.Error = "kernel.json is not valid JSON: " + err.Error()
				out = append(out, k)
				continue
			}
			k.DisplayName, k.Language = kj.DisplayName, kj.Language
			if k.Language != "" && !strings.EqualFold(k.Language, "python") {
				continue
			}
			if len(kj.Argv) == 0 {
				k.Error = "kernel.json has no argv"
				out = append(out, k)
				continue
			}
			k.Argv0 = kj.Argv[0]
			switch {
			case path.IsAbs(k.Argv0):
				k.Interpreter = k.Argv0
				_, err := os.Stat(g.fs(k.Argv0))
				k.Exists = err == nil
				if k.Exists {
					k.EnvPrefix = g.describeEnv(k.Argv0).prefix
				}
			default:
				// "python": Jupyter runs its own interpreter (for the
				// native kernel) or the first on its PATH; a kernelspec
				// inside an environment's share/ belongs to that one.
				k.Exists = true
				if pre, ok := strings.CutSuffix(dir, "/share/jupyter/kernels"); ok && pre != "/usr" && pre != "/usr/local" {
					k.EnvPrefix = pre
				}
			}
			k.Examined = k.EnvPrefix != "" && k.EnvPrefix == examinedPrefix
			k.TensorFlow = tfOf[k.EnvPrefix]
			if k.TensorFlow == "" && k.EnvPrefix != "" {
				if e, ok := g.quickEnv(k.EnvPrefix); ok {
					k.TensorFlow = e.TensorFlow
				}
			}
			out = append(out, k)
		}
	}
	return out
}
