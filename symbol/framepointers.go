package symbol

import (
	"debug/elf"
	"path/filepath"

	"github.com/cctop/cctop/symbol/cfi"
)

// framePointerShare is the share of a binary's framed functions that base
// their CFA on the frame pointer above which a binary counts as built with
// frame pointers. -O2 builds without them are at 0; real
// -fno-omit-frame-pointer builds near 1, but a small program's PLT stub
// and start-up code, which never keep one, weigh in: a three-function
// program is at 0.75.
const framePointerShare = 0.5

// FramePointers says whether the binary at path keeps frame pointers, so
// that the kernel's frame-pointer walk unwinds it, and why. Go binaries
// do (the Go ABI keeps one on amd64 and arm64); C and C++ code does when
// its CFI shows functions framed on RBP. A binary without CFI or that
// cannot be read is taken to keep them: there is nothing better to unwind
// it with.
func FramePointers(path string) (bool, string) {
	f, err := elf.Open(path)
	if err != nil {
		return true, "cannot read " + path
	}
	defer f.Close()
	name := filepath.Base(path)
	if isGo(f) {
		return true, name + " is Go, which keeps frame pointers"
	}
	t, err := cfi.Load(f)
	if err != nil || t.Len() == 0 {
		return true, name + " has no unwind tables"
	}
	if t.FramePointerShare() >= framePointerShare {
		return true, name + " was built with frame pointers"
	}
	return false, name + " has no frame pointers"
}

// Linkage says whether the binary at path is statically linked (no
// program interpreter and no shared libraries: nothing but itself and the
// vdso is mapped, and nothing can be loaded later), and whether it is Go.
// A binary that cannot be read is neither.
func Linkage(path string) (static, goBinary bool) {
	f, err := elf.Open(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, isGo(f)
		}
	}
	libs, _ := f.ImportedLibraries()
	return len(libs) == 0, isGo(f)
}
