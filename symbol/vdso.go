package symbol

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

const vdsoPath = "[vdso]"

// maxVDSO bounds the image we read; real ones are two to four pages.
const maxVDSO = 1 << 20

// vdsoModule returns the module for a [vdso] mapping of pid. The vdso has
// no file: its ELF image is read from the target's memory, or, when that is
// not readable (the process exited, or ptrace access is denied), from our
// own, since every process on a kernel gets the same image. Modules are
// keyed by image size so that a 32-bit process's vdso is not confused with
// the 64-bit one.
func (r *Resolver) vdsoModule(pid int, m *Mapping) *module {
	size := m.Limit - m.Start
	if mod := r.mods.vdso[size]; mod != nil {
		return mod
	}
	img := readMem(pid, m.Start, size)
	if img == nil {
		img = selfVDSO()
	}
	mod := loadELF(bytes.NewReader(img), int64(len(img)), "", nil, true)
	loadUnwind(bytes.NewReader(img), mod, true)
	// Never evicted: one or two small images per kernel, and a reload
	// could no longer read a 32-bit process's image from the process.
	r.mods.vdso[size] = mod
	r.mods.account(mod)
	return mod
}

// readMem reads [addr, addr+size) of process pid, or returns nil.
func readMem(pid int, addr, size uint64) []byte {
	if size == 0 || size > maxVDSO || addr > 1<<63 {
		return nil
	}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, int64(addr)); err != nil {
		return nil
	}
	return buf
}

// selfVDSO reads this process's vdso image.
func selfVDSO() []byte {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, _, ok := parseMapsLine(sc.Text()); ok && m.Path == vdsoPath {
			return readMem(os.Getpid(), m.Start, m.Limit-m.Start)
		}
	}
	return nil
}
