package python

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/cctop/cctop/lang"
)

// imageMemory is a recorded image of a process's memory: the pages a
// reader read, by address. A page not recorded is not mapped.
type imageMemory map[uint64][]byte

func (m imageMemory) ReadAt(p []byte, addr uint64) error {
	for len(p) > 0 {
		base := addr &^ (pageSize - 1)
		pg, ok := m[base]
		if !ok {
			return errUnmapped
		}
		n := copy(p, pg[addr-base:])
		p, addr = p[n:], addr+uint64(n)
	}
	return nil
}

// recorder reads a live process's memory a page at a time and keeps every
// page read: what a reader needs of it, to replay it as an imageMemory.
type recorder struct {
	mem   Memory
	pages imageMemory
}

func (r *recorder) ReadAt(p []byte, addr uint64) error {
	// Read afresh each time: the image is the memory as last read.
	for a := addr &^ (pageSize - 1); a < addr+uint64(len(p)); a += pageSize {
		pg := make([]byte, pageSize)
		if err := r.mem.ReadAt(pg, a); err != nil {
			return err
		}
		r.pages[a] = pg
	}
	return r.pages.ReadAt(p, addr)
}

// image is a recorded interpreter: what Find found, the memory read, and
// the stacks read from it then, which a replay must read again.
type image struct {
	Version  string
	Module   string
	Runtime  uint64
	Types    [3]uint64 // code, str, bytes
	TidOff   int
	Pages    map[string]string // hex address → hex page
	Threads  map[int][]string  // tid → frames as "qualname file:line", "|" ends an evaluation
	mem      imageMemory
	interp   *Interpreter
	versionV lang.Version
}

func frameStrings(frames []Frame) []string {
	var out []string
	for _, f := range frames {
		if f.Code == nil {
			out = append(out, "|")
			continue
		}
		out = append(out, fmt.Sprintf("%s %s:%d", f.Code.Qualname, f.Code.File, f.Line))
	}
	return out
}

func writeImage(path string, im *image) error {
	im.Pages = map[string]string{}
	keys := make([]uint64, 0, len(im.mem))
	for a := range im.mem {
		keys = append(keys, a)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, a := range keys {
		im.Pages[fmt.Sprintf("%x", a)] = hex.EncodeToString(im.mem[a])
	}
	js, err := json.MarshalIndent(im, "", " ")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(js)
	zw.Close()
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func readImage(path string) (*image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var im image
	if err := json.NewDecoder(zr).Decode(&im); err != nil {
		return nil, err
	}
	im.mem = imageMemory{}
	for k, v := range im.Pages {
		var a uint64
		if _, err := fmt.Sscanf(k, "%x", &a); err != nil {
			return nil, err
		}
		pg, err := hex.DecodeString(v)
		if err != nil || len(pg) != pageSize {
			return nil, fmt.Errorf("page %s: %v", k, err)
		}
		im.mem[a] = pg
	}
	var maj, min int
	if _, err := fmt.Sscanf(im.Version, "%d.%d", &maj, &min); err != nil {
		return nil, err
	}
	im.versionV = lang.Version{Major: maj, Minor: min}
	im.interp = &Interpreter{Module: im.Module, Version: im.versionV, Runtime: im.Runtime,
		CodeType: im.Types[0], StrType: im.Types[1], BytesType: im.Types[2], tidOffset: im.TidOff}
	if err := im.interp.readLayout(im.mem); err != nil {
		return nil, err
	}
	return &im, nil
}
