package host

import (
	"regexp"
	"strings"
)

// ParseBuildInfo reads TensorFlow's tensorflow/python/platform/build_info.py
// without running Python. The file is generated; over the releases it has
// taken three shapes, all handled:
//
//	build_info = collections.OrderedDict()        # TF 2.5+
//	build_info['cuda_version'] = '12.2'
//
//	build_info = {'cuda_version': '11.0', ...}    # TF 2.1-2.4
//
//	is_cuda_build = True                          # TF 1.x / 2.0
//	cuda_version_number = '10.0'
//
// Only literals are understood (strings, numbers, True/False/None, lists,
// tuples, dicts and OrderedDict([...]) calls); anything else is skipped.
func ParseBuildInfo(text string) *BuildInfo {
	bi := &BuildInfo{Fields: map[string]string{}}
	p := &pyLit{toks: tokenizePy(text)}
	for p.i < len(p.toks) {
		start := p.i
		t := p.next()
		if t.kind != tokIdent || !p.atLineStart(start) {
			continue
		}
		switch {
		case p.peekIs("="):
			p.next()
			v, ok := p.value(0)
			if !ok {
				continue
			}
			if t.text == "build_info" {
				for k, x := range v.dict {
					bi.set(k, x)
				}
				continue
			}
			bi.set(t.text, v)
		case p.peekIs("[") && t.text == "build_info":
			p.next()
			k := p.next()
			if k.kind != tokString || !p.peekIs("]") {
				continue
			}
			p.next()
			if !p.peekIs("=") {
				continue
			}
			p.next()
			if v, ok := p.value(0); ok {
				bi.set(k.text, v)
			}
		}
	}
	if len(bi.Fields) == 0 {
		bi.Fields = nil
		bi.Error = "no build facts found"
	}
	return bi
}

var winCUDAVersion = regexp.MustCompile(`^64_(\d+)(\d)$`)

func (bi *BuildInfo) set(key string, v pyValue) {
	bi.Fields[key] = v.String()
	switch key {
	case "is_cuda_build":
		if v.kind == tokIdent && (v.text == "True" || v.text == "False") {
			b := v.text == "True"
			bi.IsCUDABuild = &b
		}
	case "is_rocm_build":
		if v.kind == tokIdent && (v.text == "True" || v.text == "False") {
			b := v.text == "True"
			bi.IsROCmBuild = &b
		}
	case "cuda_version", "cuda_version_number":
		bi.CUDAVersion = normBuildVersion(v.text)
	case "cudnn_version", "cudnn_version_number":
		bi.CUDNNVersion = normBuildVersion(v.text)
	case "cuda_compute_capabilities":
		bi.ComputeCapabilities = nil
		for _, x := range v.list {
			if x.kind == tokString || x.kind == tokNumber {
				bi.ComputeCapabilities = append(bi.ComputeCapabilities, x.text)
			}
		}
	}
}

// normBuildVersion turns the Windows form "64_112" into "11.2" and "64_8"
// into "8".
func normBuildVersion(s string) string {
	s = strings.TrimSpace(s)
	if m := winCUDAVersion.FindStringSubmatch(s); m != nil {
		return m[1] + "." + m[2]
	}
	return strings.TrimPrefix(s, "64_")
}

// A tiny reader of Python literals.

type tokKind int

const (
	tokIdent tokKind = iota
	tokString
	tokNumber
	tokPunct
	tokNewline
)

type pyTok struct {
	kind tokKind
	text string
}

func tokenizePy(s string) []pyTok {
	var toks []pyTok
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			if depth == 0 {
				toks = append(toks, pyTok{tokNewline, "\n"})
			}
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\\':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			// Prefixes (r, u, b) were read as identifiers and are harmless.
			q := string(c)
			if strings.HasPrefix(s[i:], q+q+q) {
				q = q + q + q
			}
			j := i + len(q)
			var b strings.Builder
			for j < len(s) && !strings.HasPrefix(s[j:], q) {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				if len(q) == 1 && s[j] == '\n' {
					break
				}
				b.WriteByte(s[j])
				j++
			}
			toks = append(toks, pyTok{tokString, b.String()})
			i = min(j+len(q), len(s))
		case isIdentStart(c):
			j := i
			for j < len(s) && (isIdentStart(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			toks = append(toks, pyTok{tokIdent, s[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == '_' || s[j] == 'e') {
				j++
			}
			toks = append(toks, pyTok{tokNumber, s[i:j]})
			i = j
		default:
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			toks = append(toks, pyTok{tokPunct, string(c)})
			i++
		}
	}
	return toks
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

type pyValue struct {
	kind tokKind // tokString, tokNumber, tokIdent (True/False/None), tokPunct for containers
	text string
	list []pyValue
	dict map[string]pyValue
}

func (v pyValue) String() string {
	if v.kind != tokPunct {
		return v.text
	}
	if v.dict != nil {
		return "{…}"
	}
	parts := make([]string, len(v.list))
	for i, x := range v.list {
		parts[i] = x.String()
	}
	return strings.Join(parts, ",")
}

type pyLit struct {
	toks []pyTok
	i    int
}

func (p *pyLit) next() pyTok {
	if p.i >= len(p.toks) {
		return pyTok{tokNewline, ""}
	}
	t := p.toks[p.i]
	p.i++
	return t
}

func (p *pyLit) peekIs(punct string) bool {
	return p.i < len(p.toks) && p.toks[p.i].kind == tokPunct && p.toks[p.i].text == punct
}

func (p *pyLit) atLineStart(i int) bool { return i == 0 || p.toks[i-1].kind == tokNewline }

// value reads one literal; depth bounds nesting so hostile input cannot
// exhaust the stack.
func (p *pyLit) value(depth int) (pyValue, bool) {
	if depth > 32 {
		return pyValue{}, false
	}
	t := p.next()
	switch t.kind {
	case tokString:
		// Adjacent string literals concatenate.
		for p.i < len(p.toks) && p.toks[p.i].kind == tokString {
			t.text += p.next().text
		}
		return pyValue{kind: tokString, text: t.text}, true
	case tokNumber:
		return pyValue{kind: tokNumber, text: t.text}, true
	case tokIdent:
		if p.peekIs("(") { // a call: OrderedDict([...]), dict(...), tuple
			p.next()
			if p.peekIs(")") {
				p.next()
				return pyValue{kind: tokPunct, dict: map[string]pyValue{}}, true
			}
			arg, ok := p.value(depth + 1)
			if !ok || !p.peekIs(")") {
				return pyValue{}, false
			}
			p.next()
			if arg.dict != nil {
				return arg, true
			}
			d := map[string]pyValue{}
			for _, pair := range arg.list {
				if len(pair.list) == 2 && pair.list[0].kind == tokString {
					d[pair.list[0].text] = pair.list[1]
				}
			}
			return pyValue{kind: tokPunct, dict: d}, true
		}
		return pyValue{kind: tokIdent, text: t.text}, true
	case tokPunct:
		switch t.text {
		case "[", "(":
			closer := "]"
			if t.text == "(" {
				closer = ")"
			}
			v := pyValue{kind: tokPunct, list: []pyValue{}}
			for !p.peekIs(closer) {
				if p.i >= len(p.toks) {
					return pyValue{}, false
				}
				x, ok := p.value(depth + 1)
				if !ok {
					return pyValue{}, false
				}
				v.list = append(v.list, x)
				if p.peekIs(",") {
					p.next()
				} else if !p.peekIs(closer) {
					return pyValue{}, false
				}
			}
			p.next()
			return v, true
		case "{":
			v := pyValue{kind: tokPunct, dict: map[string]pyValue{}}
			for !p.peekIs("}") {
				if p.i >= len(p.toks) {
					return pyValue{}, false
				}
				k, ok := p.value(depth + 1)
				if !ok || !p.peekIs(":") {
					return pyValue{}, false
				}
				p.next()
				x, ok := p.value(depth + 1)
				if !ok {
					return pyValue{}, false
				}
				v.dict[k.text] = x
				if p.peekIs(",") {
					p.next()
				} else if !p.peekIs("}") {
					return pyValue{}, false
				}
			}
			p.next()
			return v, true
		}
	}
	return pyValue{}, false
}
