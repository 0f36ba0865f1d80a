package host

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
)

// ELFObject is what the dynamic loader reads of one shared object or
// executable: its name, dependencies and search paths.
type ELFObject struct {
	Path    string   `json:"path"`
	Soname  string   `json:"soname,omitempty"`
	Needed  []string `json:"needed,omitempty"`
	RPath   []string `json:"rpath,omitempty"`   // DT_RPATH, as written ($ORIGIN kept)
	RunPath []string `json:"runpath,omitempty"` // DT_RUNPATH, as written
	// HasRunPath is true when DT_RUNPATH exists (even empty): the loader
	// then ignores DT_RPATH.
	HasRunPath bool `json:"has_runpath,omitempty"`
	// NoDefaultLib is DF_1_NODEFLIB: the default folders are not searched.
	NoDefaultLib bool   `json:"nodeflib,omitempty"`
	Class        string `json:"class,omitempty"`   // ELFCLASS64
	Machine      string `json:"machine,omitempty"` // EM_X86_64
	// Assumed is true for an object doctor models but that does not exist
	// (TensorFlow's library when TensorFlow is not installed).
	Assumed bool   `json:"assumed,omitempty"`
	Error   string `json:"error,omitempty"`
}

// EffectiveRPath is the DT_RPATH the loader honours: none when the object
// also has DT_RUNPATH.
func (o *ELFObject) EffectiveRPath() []string {
	if o == nil || o.HasRunPath {
		return nil
	}
	return o.RPath
}

// readELFObject reads the dynamic section of an ELF file. Only the strings
// it needs are read from the dynamic string table: TensorFlow's
// _pywrap_tensorflow_internal.so has a string table of many megabytes,
// which debug/elf's DynString would read whole.
func readELFObject(file, shownPath string) *ELFObject {
	o := &ELFObject{Path: shownPath}
	f, err := elf.Open(file)
	if err != nil {
		o.Error = shortELFError(err)
		return o
	}
	defer f.Close()
	o.Class, o.Machine = f.Class.String(), f.Machine.String()
	ds := f.SectionByType(elf.SHT_DYNAMIC)
	if ds == nil {
		o.Error = "no dynamic section"
		return o
	}
	if int(ds.Link) >= len(f.Sections) || ds.Link == 0 {
		o.Error = "dynamic section has no string table"
		return o
	}
	strtab := f.Sections[ds.Link]
	d, err := ds.Data()
	if err != nil {
		o.Error = shortELFError(err)
		return o
	}
	size := 8
	if f.Class == elf.ELFCLASS64 {
		size = 16
	}
	str := func(off uint64) string {
		if off >= strtab.Size {
			return ""
		}
		var buf bytes.Buffer
		chunk := make([]byte, 256)
		for pos := off; pos < strtab.Size && buf.Len() < 64<<10; pos += uint64(len(chunk)) {
			n, err := strtab.ReadAt(chunk, int64(pos))
			if i := bytes.IndexByte(chunk[:n], 0); i >= 0 {
				buf.Write(chunk[:i])
				return buf.String()
			}
			buf.Write(chunk[:n])
			if err != nil {
				break
			}
		}
		return buf.String()
	}
	for len(d) >= size {
		var tag elf.DynTag
		var val uint64
		if size == 16 {
			tag, val = elf.DynTag(f.ByteOrder.Uint64(d[0:8])), f.ByteOrder.Uint64(d[8:16])
		} else {
			tag, val = elf.DynTag(f.ByteOrder.Uint32(d[0:4])), uint64(f.ByteOrder.Uint32(d[4:8]))
		}
		d = d[size:]
		switch tag {
		case elf.DT_NULL:
			d = nil
		case elf.DT_SONAME:
			o.Soname = str(val)
		case elf.DT_NEEDED:
			o.Needed = append(o.Needed, str(val))
		case elf.DT_RPATH:
			o.RPath = append(o.RPath, splitSearchPath(str(val))...)
		case elf.DT_RUNPATH:
			o.HasRunPath = true
			o.RunPath = append(o.RunPath, splitSearchPath(str(val))...)
		case elf.DT_FLAGS_1:
			o.NoDefaultLib = elf.DynFlag1(val)&elf.DF_1_NODEFLIB != 0
		}
	}
	return o
}

func splitSearchPath(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ":") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func shortELFError(err error) string {
	var fe *elf.FormatError
	if errors.As(err, &fe) {
		return "not a valid ELF file: " + fe.Error()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "truncated ELF file"
	}
	return err.Error()
}

// elfIdent is the class and machine of an ELF file, read from its first 20
// bytes: what the loader checks before it accepts a candidate.
type elfIdent struct {
	Class   elf.Class
	Machine elf.Machine
}

var errNotELF = errors.New("not an ELF file")

func readELFIdent(file string) (elfIdent, error) {
	f, err := os.Open(file)
	if err != nil {
		return elfIdent{}, err
	}
	defer f.Close()
	var b [20]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return elfIdent{}, errNotELF
	}
	if string(b[:4]) != elf.ELFMAG {
		return elfIdent{}, errNotELF
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(b[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	return elfIdent{Class: elf.Class(b[elf.EI_CLASS]), Machine: elf.Machine(bo.Uint16(b[18:20]))}, nil
}

// expandOrigin replaces $ORIGIN / ${ORIGIN} with the folder of the object
// (and $LIB, $PLATFORM with their usual x86-64 values), as the loader does.
func expandOrigin(entry, originDir, lib string) string {
	r := strings.NewReplacer("${ORIGIN}", originDir, "$ORIGIN", originDir, "${LIB}", lib, "$LIB", lib, "${PLATFORM}", "x86_64", "$PLATFORM", "x86_64")
	return r.Replace(entry)
}
