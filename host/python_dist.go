package host

import (
	"bufio"
	"io"
	"os"
	"path"
	"strings"
)

// Installed distributions are read from their metadata files, the way
// importlib.metadata does, without starting Python.

// NormalizeDistName is PEP 503's normalized form: lower case, and runs of
// "-", "_" and "." as one "-".
func NormalizeDistName(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(strings.TrimSpace(name)) {
		if c == '-' || c == '_' || c == '.' {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(c)
	}
	return b.String()
}

// Metadata is what doctor reads of a METADATA / PKG-INFO file.
type Metadata struct {
	Name         string
	Version      string
	RequiresDist []string
}

// ParseMetadata reads the header block of a core-metadata file (RFC 822
// style: "Key: value" lines, continuation lines start with white space, the
// body follows the first empty line).
func ParseMetadata(r io.Reader) Metadata {
	var m Metadata
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // continuation of a long header (Description, License)
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "name":
			if m.Name == "" {
				m.Name = v
			}
		case "version":
			if m.Version == "" {
				m.Version = v
			}
		case "requires-dist":
			if len(m.RequiresDist) < 512 {
				m.RequiresDist = append(m.RequiresDist, v)
			}
		}
	}
	return m
}

// distFromDirName splits "name-version.dist-info" (the fallback when the
// metadata file is unreadable).
func distFromDirName(base string) (string, string) {
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".dist-info"), ".egg-info")
	if i := strings.Index(base, "-"); i > 0 {
		v := base[i+1:]
		if j := strings.Index(v, "-py"); j > 0 { // egg-info: name-1.0-py3.11
			v = v[:j]
		}
		return base[:i], v
	}
	return base, ""
}

// scanSite lists the distributions installed in one site folder.
func (g *gatherer) scanSite(site string) []Distribution {
	ents, err := os.ReadDir(g.fs(site))
	if err != nil {
		return nil
	}
	var out []Distribution
	for _, e := range ents {
		n := e.Name()
		var meta string
		switch {
		case strings.HasSuffix(n, ".dist-info"):
			meta = site + "/" + n + "/METADATA"
		case strings.HasSuffix(n, ".egg-info"):
			if e.IsDir() {
				meta = site + "/" + n + "/PKG-INFO"
			} else {
				meta = site + "/" + n
			}
		default:
			continue
		}
		d := Distribution{Site: site, Path: site + "/" + n}
		// The folder's name carries name and version (PEP 427); the
		// metadata file is read for the distributions doctor judges, and
		// where the name does not parse.
		d.Name, d.Version = distFromDirName(n)
		if d.Version == "" || judgedDist(NormalizeDistName(d.Name)) {
			if f, err := os.Open(g.fs(meta)); err == nil {
				m := ParseMetadata(io.LimitReader(f, 256<<10))
				f.Close()
				if m.Name != "" {
					d.Name, d.Version = m.Name, m.Version
				}
			}
		}
		d.Key = NormalizeDistName(d.Name)
		out = append(out, d)
	}
	return out
}

// tfDistKeys are the distributions that install the tensorflow package.
var tfDistKeys = map[string]bool{
	"tensorflow": true, "tensorflow-cpu": true, "tensorflow-gpu": true, "tensorflow-intel": true,
	"tf-nightly": true, "tf-nightly-cpu": true, "tf-nightly-gpu": true, "tensorflow-macos": true,
	"tensorflow-rocm": true, "intel-tensorflow": true, "tensorflow-cpu-aws": true, "tensorflow-aarch64": true,
}

// IsTFDist reports whether a normalized distribution name installs the
// tensorflow package.
func IsTFDist(key string) bool { return tfDistKeys[key] }

// judgedDist reports whether doctor reads more of a distribution
// (INSTALLER, RECORD): TensorFlow, Keras, NVIDIA wheels, ipykernel.
func judgedDist(key string) bool {
	return tfDistKeys[key] || key == "keras" || key == "ipykernel" || strings.HasPrefix(key, "nvidia-")
}

// readInstaller fills Installer from the INSTALLER file.
func (g *gatherer) readInstaller(d *Distribution) {
	if !strings.HasSuffix(d.Path, ".dist-info") {
		return
	}
	if s, err := g.readSmall(d.Path+"/INSTALLER", 256); err == nil {
		d.Installer = strings.TrimSpace(s)
	}
}

// wheelFiles maps the shared objects that nvidia-* wheels install (from
// their RECORD files) to "dist version", keyed by machine path.
func (g *gatherer) wheelFiles(dists []Distribution) map[string]string {
	owners := map[string]string{}
	for _, d := range dists {
		if d.Stale || !strings.HasPrefix(d.Key, "nvidia-") || !strings.HasSuffix(d.Path, ".dist-info") {
			continue
		}
		f, err := os.Open(g.fs(d.Path + "/RECORD"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(io.LimitReader(f, 4<<20))
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			line := sc.Text()
			file, _, _ := strings.Cut(line, ",")
			if !strings.Contains(file, ".so") {
				continue
			}
			owners[path.Clean(d.Site+"/"+file)] = d.Name + " " + d.Version
		}
		f.Close()
	}
	return owners
}

// readSmall reads at most n bytes of a file under the root.
func (g *gatherer) readSmall(p string, n int64) (string, error) {
	f, err := os.Open(g.fs(p))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	return string(b), err
}
