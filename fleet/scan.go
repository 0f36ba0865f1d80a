package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A fleet is thousands of reports of about 20 KB, nearly all of it
// findings the summary does not read. topLevel walks the report's
// top-level object and hands over the raw value of each key; the values
// the summary reads are then decoded (and validated) by encoding/json, the
// others are skipped with strings and brackets checked but not decoded.
// That is several times faster than decoding the whole report.

// errTruncated is a report that ends inside its top-level object.
var errTruncated = errors.New("truncated JSON")

type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("not JSON (byte %d: %s)", e.off, e.msg) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] ('"').
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errTruncated
		}
		i += j
		// Escaped when preceded by an odd number of backslashes.
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i, nil
		}
	}
}

// skipValue returns the index after the JSON value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errTruncated
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{', '[':
		var stack []byte
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			case '{':
				stack = append(stack, '}')
			case '[':
				stack = append(stack, ']')
			case '}', ']':
				if len(stack) == 0 || stack[len(stack)-1] != c {
					return 0, &syntaxError{i, fmt.Sprintf("unexpected %q", c)}
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errTruncated
	default:
		start := i
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		if i == start {
			return 0, &syntaxError{i, fmt.Sprintf("unexpected %q", c)}
		}
		if i == len(b) {
			return 0, errTruncated
		}
		return i, nil
	}
}

// topLevel calls f with each key of the top-level object of b and the
// raw bytes of its value.
func topLevel(b []byte, f func(key string, val []byte) error) error {
	i := skipSpace(b, 0)
	if i == len(b) {
		return errTruncated
	}
	if b[i] != '{' {
		if b[i] == '[' || b[i] == '"' || b[i] == '-' || b[i] >= '0' && b[i] <= '9' || bytes.HasPrefix(b[i:], []byte("true")) ||
			bytes.HasPrefix(b[i:], []byte("false")) || bytes.HasPrefix(b[i:], []byte("null")) {
			return errors.New("not a doctor report (not a JSON object)")
		}
		return &syntaxError{i, fmt.Sprintf("unexpected %q", b[i])}
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return checkEnd(b, i+1)
	}
	for {
		if i >= len(b) {
			return errTruncated
		}
		if b[i] != '"' {
			return &syntaxError{i, "expected a key"}
		}
		end, err := skipString(b, i)
		if err != nil {
			return err
		}
		key := string(b[i+1 : end-1])
		if bytes.IndexByte(b[i:end], '\\') >= 0 {
			if err := json.Unmarshal(b[i:end], &key); err != nil {
				return &syntaxError{i, err.Error()}
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errTruncated
		}
		if b[i] != ':' {
			return &syntaxError{i, "expected ':'"}
		}
		i = skipSpace(b, i+1)
		start := i
		if i, err = skipValue(b, i); err != nil {
			return err
		}
		if err := f(key, b[start:i]); err != nil {
			return err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return errTruncated
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return checkEnd(b, i+1)
		default:
			return &syntaxError{i, "expected ',' or '}'"}
		}
	}
}

func checkEnd(b []byte, i int) error {
	if i = skipSpace(b, i); i != len(b) {
		return &syntaxError{i, "data after the report"}
	}
	return nil
}
