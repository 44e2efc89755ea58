package python

import (
	"fmt"
	"unicode/utf8"
)

// Code is what a code object says of its function: names, file, first
// line and its line table, read once while the object lives (a code
// object is immutable), and shared read-only by every stack that runs it.
type Code struct {
	Name     string // co_name
	Qualname string // co_qualname (3.11+), else co_name
	File     string // co_filename
	// FirstLine is co_firstlineno: the def line, which tells apart two
	// functions of one name in one file.
	FirstLine int
	lines     lineIndex
	// key: the fields read, to tell the object from another allocated
	// at its address later: compared on every read of a stack.
	key [4]uint64
	// checked: when key was last compared with the memory (ns).
	checked uint64
}

// Line is the source line of the instruction at offset, in the unit of the
// version's line table; FirstLine where the table has none.
func (c *Code) Line(offset int) int {
	if offset >= 0 {
		if l := c.lines.line(offset); l > 0 {
			return l
		}
	}
	return c.FirstLine
}

// Bounds on what a code object's fields may make the reader read.
const (
	maxName      = 1024    // characters of a name or a file path
	maxLineTable = 1 << 18 // bytes of a line table
	maxCodes     = 1 << 14 // code objects cached per process
)

// codeCache keeps the code objects of one process by address.
type codeCache struct {
	byAddr map[uint64]*Code
	// flushes counts the times the cache was emptied for being full.
	flushes int
}

// lineFormat is the version's line table format.
func (l *Layout) lineFormat() lineFormat {
	switch {
	case l.Version.AtLeast(3, 11):
		return locations311
	case l.Version.AtLeast(3, 10):
		return linetable310
	default:
		return lnotab39
	}
}

// codeOf is the code object at addr whose first CodeSize bytes, as read
// now, are hdr: the cached one if those bytes still say so (the same
// name, file, qualified name and line table objects, the same first
// line), else read anew. A code object's memory is freed with it and
// taken by the next: site's .pth files are run as "<module>" code from
// "<string>", whose address a script's function has a moment later.
func (in *Interpreter) codeOf(cc *codeCache, mem Memory, addr uint64, hdr []byte, now uint64) (*Code, error) {
	l := &in.Layout
	if cc.byAddr == nil {
		cc.byAddr = map[uint64]*Code{}
	}
	b := hdr
	if in.CodeType != 0 && le64(b, l.ObjectType) != in.CodeType {
		return nil, fmt.Errorf("%#x is not a code object", addr)
	}
	key := [4]uint64{le64(b, l.CodeName), le64(b, l.CodeFilename), le64(b, l.CodeQualname), le64(b, l.CodeLinetable)}
	if l.CodeQualname == 0 {
		key[2] = 0
	}
	c := cc.byAddr[addr]
	if c != nil && c.key == key && c.FirstLine == int(int32(le32(b, l.CodeFirstLineno))) {
		c.checked = now
		return c, nil
	}
	c = &Code{key: key, checked: now, FirstLine: int(int32(le32(b, l.CodeFirstLineno)))}
	var err error
	if c.Name, err = in.str(mem, key[0]); err != nil {
		return nil, fmt.Errorf("code object's name: %w", err)
	}
	if c.File, err = in.str(mem, key[1]); err != nil {
		return nil, fmt.Errorf("code object's file: %w", err)
	}
	c.Qualname = c.Name
	if key[2] != 0 {
		if q, err := in.str(mem, key[2]); err == nil && q != "" {
			c.Qualname = q
		}
	}
	// A line table that cannot be read costs the lines, not the frame.
	if table, err := in.bytes(mem, key[3], maxLineTable); err == nil {
		c.lines = decodeLines(l.lineFormat(), table, c.FirstLine)
	}
	if len(cc.byAddr) >= maxCodes {
		clear(cc.byAddr)
		cc.flushes++
	}
	cc.byAddr[addr] = c
	return c, nil
}

// str reads the str object at addr: a compact one, as names and file
// paths are (a legacy, non-compact str is an error), of at most maxName
// characters.
func (in *Interpreter) str(mem Memory, addr uint64) (string, error) {
	l := &in.Layout
	if addr == 0 {
		return "", fmt.Errorf("null str")
	}
	var hdr [128]byte
	n := l.CompactSize
	if n > uint64(len(hdr)) || n < l.ASCIISize || l.UnicodeState+4 > n || l.UnicodeLength+8 > n {
		return "", fmt.Errorf("str layout out of bounds")
	}
	if err := mem.ReadAt(hdr[:n], addr); err != nil {
		return "", &ReadError{"str", addr, err}
	}
	if in.StrType != 0 && le64(hdr[:n], l.ObjectType) != in.StrType {
		return "", fmt.Errorf("%#x is not a str", addr)
	}
	state := le32(hdr[:n], l.UnicodeState)
	// The bit fields interned:2, kind:3, compact:1, ascii:1, the same in
	// every version read here.
	kind, compact, ascii := state>>2&7, state>>5&1, state>>6&1
	length := le64(hdr[:n], l.UnicodeLength)
	if compact == 0 || length > maxName || (kind != 1 && kind != 2 && kind != 4) || ascii == 1 && kind != 1 {
		return "", fmt.Errorf("str at %#x: not a compact string of at most %d characters", addr, maxName)
	}
	data := addr + l.CompactSize
	if ascii == 1 {
		data = addr + l.ASCIISize
	}
	buf := make([]byte, length*uint64(kind))
	if err := mem.ReadAt(buf, data); err != nil {
		return "", &ReadError{"str data", data, err}
	}
	switch kind {
	case 1:
		if ascii == 1 {
			return string(buf), nil
		}
		out := make([]byte, 0, len(buf)+8)
		for _, c := range buf {
			out = utf8.AppendRune(out, rune(c))
		}
		return string(out), nil
	case 2:
		out := make([]byte, 0, len(buf))
		for i := 0; i+1 < len(buf); i += 2 {
			out = utf8.AppendRune(out, rune(uint16(buf[i])|uint16(buf[i+1])<<8))
		}
		return string(out), nil
	default:
		out := make([]byte, 0, len(buf))
		for i := 0; i+3 < len(buf); i += 4 {
			out = utf8.AppendRune(out, rune(le32(buf, uint64(i))))
		}
		return string(out), nil
	}
}

// bytes reads the bytes object at addr, of at most max bytes.
func (in *Interpreter) bytes(mem Memory, addr uint64, max int) ([]byte, error) {
	l := &in.Layout
	if addr == 0 {
		return nil, fmt.Errorf("null bytes")
	}
	var hdr [64]byte
	n := l.BytesData
	if n > uint64(len(hdr)) || l.BytesSize+8 > n {
		return nil, fmt.Errorf("bytes layout out of bounds")
	}
	if err := mem.ReadAt(hdr[:n], addr); err != nil {
		return nil, &ReadError{"bytes", addr, err}
	}
	if in.BytesType != 0 && le64(hdr[:n], l.ObjectType) != in.BytesType {
		return nil, fmt.Errorf("%#x is not a bytes object", addr)
	}
	size := le64(hdr[:n], l.BytesSize)
	if size > uint64(max) {
		return nil, fmt.Errorf("bytes at %#x: %d bytes, more than %d", addr, size, max)
	}
	buf := make([]byte, size)
	if err := mem.ReadAt(buf, addr+l.BytesData); err != nil {
		return nil, &ReadError{"bytes data", addr + l.BytesData, err}
	}
	return buf, nil
}
