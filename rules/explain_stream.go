package rules

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// Reading a log as a stream. `train.py 2>&1 | doctor explain` must never
// cut the writer off (a reader that stops early gives it a broken pipe) and
// the tail of a long log is where the traceback is, so the log is read to
// its end, whatever its size, and every line is matched as it arrives. Only
// the evidence is kept (the matcher's hits, bounded per signature), so the
// memory used does not grow with the input.

// LogInput says how much of a log was read.
type LogInput struct {
	Bytes int64 `json:"bytes"` // bytes read, as they came (before any UTF-16 decoding)
	Lines int   `json:"lines"`
}

// sniffBytes is how much of the start of a log decides its encoding and
// whether it is text at all.
const sniffBytes = 64 << 10

// maxSegmentBytes caps what is kept of one line segment before colour
// codes are removed and it is cut to maxLineBytes; the rest of a longer
// segment is read and dropped.
const maxSegmentBytes = 4 * maxLineBytes

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// decodedLog returns a reader of r's text as UTF-8: UTF-16 (what
// PowerShell's `>` writes, with or without a byte-order mark) is decoded
// as it streams, a UTF-8 byte-order mark dropped. Input whose start is not
// text is ErrBinaryLog. The decisions are DecodeLog's, taken on the
// first sniffBytes.
func decodedLog(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, sniffBytes)
	head, err := br.Peek(sniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	var src io.Reader = br
	var bigEndian, isUTF16 bool
	skip := 0
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		isUTF16, skip = true, 2
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		isUTF16, bigEndian, skip = true, true, 2
	case looksUTF16LE(head):
		isUTF16 = true
	}
	// A "UTF-16" start that does not decode to mostly ASCII is binary data
	// that starts like a byte-order mark.
	if isUTF16 {
		if dec := decodeUTF16(head[skip:], bigEndian); dec != "" && mostlyASCII(dec) {
			br.Discard(skip)
			src = &utf16Reader{r: br, bigEndian: bigEndian}
		}
	}
	text := bufio.NewReaderSize(src, sniffBytes)
	start, err := text.Peek(sniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	if bytes.HasPrefix(start, []byte{0xEF, 0xBB, 0xBF}) {
		text.Discard(3)
		start = start[3:]
	}
	if looksBinaryStart(start, len(start) == sniffBytes) {
		return nil, ErrBinaryLog
	}
	return text, nil
}

// looksBinaryStart is looksBinary on the first bytes of a stream; more
// means the stream goes on (a rune cut at the end is not an error).
func looksBinaryStart(b []byte, more bool) bool {
	if more {
		// looksBinary treats a cut rune at the end as an error only when
		// the sample is the whole input; pad to say "there is more".
		return looksBinary(append(b[:len(b):len(b)], 'x'))
	}
	return looksBinary(b)
}

// utf16Reader decodes UTF-16 to UTF-8 as it reads.
type utf16Reader struct {
	r         io.Reader
	bigEndian bool
	in        [8 << 10]byte
	carry     []byte // an odd byte left from the last read
	high      rune   // a high surrogate waiting for its pair
	out       []byte // decoded, not yet returned
	err       error
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.err != nil {
			if u.high != 0 {
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				u.high = 0
				continue
			}
			return 0, u.err
		}
		n := copy(u.in[:], u.carry)
		m, err := u.r.Read(u.in[n:])
		u.err = err
		b := u.in[:n+m]
		u.carry = u.carry[:0]
		for len(b) >= 2 {
			var c uint16
			if u.bigEndian {
				c = uint16(b[0])<<8 | uint16(b[1])
			} else {
				c = uint16(b[1])<<8 | uint16(b[0])
			}
			b = b[2:]
			r := rune(c)
			switch {
			case u.high != 0 && utf16.IsSurrogate(r) && r >= 0xDC00:
				u.out = utf8.AppendRune(u.out, utf16.DecodeRune(u.high, r))
				u.high = 0
				continue
			case u.high != 0:
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				u.high = 0
			}
			if r >= 0xD800 && r < 0xDC00 {
				u.high = r
				continue
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			u.out = utf8.AppendRune(u.out, r)
		}
		u.carry = append(u.carry, b...)
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// readSegments reads r to its end and hands fn every line segment that is
// not blank, with its 1-based line number: a line ends at '\n', and a
// carriage return inside a line (progress bars) starts a new segment under
// the same line number. A segment longer than maxSegmentBytes is cut (the
// matcher looks at maxLineBytes of it). It returns the number of lines and
// whether any segment was not blank.
func readSegments(r io.Reader, fn func(line int, seg string)) (lines int, text bool, err error) {
	buf := make([]byte, 64<<10)
	seg := make([]byte, 0, maxSegmentBytes)
	line := 1
	onLine := false // bytes seen on the current line
	flush := func() {
		if len(bytes.TrimSpace(seg)) > 0 {
			text = true
			fn(line, string(seg))
		}
		seg = seg[:0]
	}
	add := func(b []byte) {
		if room := maxSegmentBytes - len(seg); room > 0 {
			seg = append(seg, b[:min(len(b), room)]...)
		}
	}
	for {
		n, rerr := r.Read(buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			onLine = true
			i := bytes.IndexByte(chunk, '\n')
			part := chunk
			if i >= 0 {
				part, chunk = chunk[:i], chunk[i+1:]
			} else {
				chunk = nil
			}
			for {
				j := bytes.IndexByte(part, '\r')
				if j < 0 {
					add(part)
					break
				}
				add(part[:j])
				flush()
				part = part[j+1:]
			}
			if i >= 0 {
				flush()
				line++
				onLine = false
			}
		}
		if rerr == io.EOF {
			flush()
			lines = line - 1
			if onLine {
				lines++
			}
			return lines, text, nil
		}
		if rerr != nil {
			return line - 1, text, rerr
		}
	}
}
