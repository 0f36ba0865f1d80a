package verify

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// environMap turns KEY=VALUE pairs into a map (the last one wins).
func environMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

// cudaMajors are the CUDA major versions whose cuBLAS doctor looks for, the
// newest first.
var cudaMajors = []int{13, 12, 11}

// cublasCandidates lists the libcublas files to try, best first: the one
// the library resolution picked; then the pip wheels in the examined
// Python's site-packages (where TensorFlow's [and-cuda] extra puts them and
// where TensorFlow's own RPATH looks first); then the sonames on the
// dynamic loader's default path.
func cublasCandidates(explicit, python string, environ []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(explicit)
	for _, p := range wheelCublas(python, environMap(environ)) {
		add(p)
	}
	for _, m := range cudaMajors {
		add(fmt.Sprintf("libcublas.so.%d", m))
	}
	return out
}

// wheelCublas finds site-packages/nvidia/cublas/lib/libcublas.so.N of the
// interpreter's environment (its prefix is the folder above bin/, as the
// interpreter path was given: a venv's python is a link to the base
// interpreter) and of the user's site, the newest CUDA major first.
func wheelCublas(python string, env map[string]string) []string {
	var roots []string
	if python != "" {
		roots = append(roots, filepath.Dir(filepath.Dir(python)))
	}
	if home := env["HOME"]; home != "" {
		roots = append(roots, filepath.Join(home, ".local"))
	}
	type found struct {
		path  string
		major int
	}
	var fs []found
	for _, root := range roots {
		for _, sp := range []string{"site-packages", "dist-packages"} {
			matches, _ := filepath.Glob(filepath.Join(root, "lib", "python3*", sp, "nvidia", "cu*", "lib", "libcublas.so.*"))
			for _, m := range matches {
				if maj, ok := sonameMajor(filepath.Base(m), "libcublas.so."); ok {
					fs = append(fs, found{m, maj})
				}
			}
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].major > fs[j].major })
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.path
	}
	return out
}

// sonameMajor reads N from "libcublas.so.N" (and rejects longer versions
// like libcublas.so.12.4.5, which are the same file under another name).
func sonameMajor(base, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(base, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}
