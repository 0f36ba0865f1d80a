package fixes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// conda keeps the variables `conda env config vars set` sets in
// $PREFIX/conda-meta/state, a JSON object {"env_vars": {"NAME": "value"}},
// written by Python's json.dumps(state, ensure_ascii=False): one line,
// ", " and ": " separators. The value "***unset***" makes activation unset
// the variable.

const condaUnsetMarker = "***unset***"

// member is one key of a JSON object, its value kept as raw bytes so that
// untouched members are written back exactly.
type member struct {
	key string
	raw json.RawMessage
}

// decodeObject reads a JSON object keeping its key order.
func decodeObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := t.(string)
		if !ok {
			return nil, errors.New("bad object key")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{k, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}

// encodeObject writes members the way Python's json.dumps does by default.
func encodeObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(encodeString(m.key))
		b.WriteString(": ")
		b.Write(m.raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func encodeString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// condaStateVar returns the value conda's state file sets for name.
func condaStateVar(data []byte, name string) (string, bool, error) {
	top, err := decodeObject(data)
	if err != nil {
		return "", false, err
	}
	for _, m := range top {
		if m.key != "env_vars" {
			continue
		}
		vars, err := decodeObject(m.raw)
		if err != nil {
			return "", false, fmt.Errorf("env_vars: %w", err)
		}
		for _, v := range vars {
			if v.key == name {
				var s string
				if err := json.Unmarshal(v.raw, &s); err != nil {
					return "", false, fmt.Errorf("env_vars.%s: not a string", name)
				}
				return s, s != condaUnsetMarker, nil
			}
		}
	}
	return "", false, nil
}

// condaStateRemove returns data without name in env_vars, every other
// member kept as it was.
func condaStateRemove(data []byte, name string) ([]byte, error) {
	top, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	for i, m := range top {
		if m.key != "env_vars" {
			continue
		}
		vars, err := decodeObject(m.raw)
		if err != nil {
			return nil, fmt.Errorf("env_vars: %w", err)
		}
		kept := vars[:0:0]
		for _, v := range vars {
			if v.key != name {
				kept = append(kept, v)
			}
		}
		top[i].raw = encodeObject(kept)
	}
	return encodeObject(top), nil
}
