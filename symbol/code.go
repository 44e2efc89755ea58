package symbol

import (
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// Reading a module's machine code, for the checks the unwinder makes where
// it has no CFI: whether a return address follows a call instruction, and
// whether a function sets up a frame pointer. The bytes come from the
// mapped file (code is not in the stack copy), read in small chunks that
// each module caches: an unwind touches the same few return addresses
// over and over.

// codeChunk is the size of one cached piece of a module's file.
const codeChunk = 512

// maxCodeChunks bounds a module's code cache (1 MiB); past it the cache
// starts over.
const maxCodeChunks = 2048

// codeCache holds the chunks of one module's file read so far, by file
// offset / codeChunk. A chunk that could not be read whole is kept short
// (nil past the end of the file), so a failure costs one read.
type codeCache struct {
	chunks map[uint64][]byte
	bytes  int64 // what chunks holds, counted in the module's acct
	// setups is the offset of each function's first frame setup, by its
	// start (pastSetup), noSetup for none.
	setups map[uint64]int32
}

// maxSetups bounds a module's cache of frame setups; past it the cache
// starts over.
const maxSetups = 4096

// openMapped opens the file behind m as process pid sees it: a deleted
// file through /proc/PID/map_files (the one name that still reaches it),
// others through the process's root directory first.
func openMapped(pid int, m *Mapping) (*os.File, error) {
	open := targetOpener(pid)
	if path, ok := strings.CutSuffix(m.Path, " (deleted)"); ok {
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/map_files/" +
			strconv.FormatUint(m.Start, 16) + "-" + strconv.FormatUint(m.Limit, 16))
		if err != nil {
			f, err = open(path)
		}
		return f, err
	}
	return open(m.Path)
}

// readCode fills buf with the code at process address addr of pid, inside
// mapping m, from m's file, or from the process's memory where m is
// anonymous memory (JIT code). It reports false when there is nothing to
// read (the vdso, a file that is gone or was replaced since it was mapped,
// memory of a process that is gone) or the bytes lie outside the mapping.
func (r *Resolver) readCode(pid int, m *mapping, addr uint64, buf []byte) bool {
	n := uint64(len(buf))
	if addr < m.Start || addr > m.Limit || m.Limit-addr < n {
		return false
	}
	if m.anon {
		// No file: the code is read where it runs (memcode.go).
		return r.readMemCode(pid, m, addr, buf)
	}
	mod := r.attach(pid, m)
	// An empty module (no segments) is a file that could not be read or
	// is not what was mapped; the vdso is an image, not a file.
	if mod == nil || len(mod.segs) == 0 || m.Path == vdsoPath || !strings.HasPrefix(m.Path, "/") {
		return false
	}
	cc := mod.codeCache()
	off := addr - m.Start + m.Offset
	for done := uint64(0); done < n; {
		k := (off + done) / codeChunk
		c, ok := cc.chunks[k]
		if !ok {
			c = readChunk(pid, &m.Mapping, k*codeChunk)
			if len(cc.chunks) >= maxCodeChunks {
				// A new map, not clear: see module.frames.
				mod.acct.add(-cc.bytes)
				cc.chunks, cc.bytes = make(map[uint64][]byte), 0
			}
			cc.chunks[k] = c
			b := codeEntry + int64(cap(c))
			cc.bytes += b
			mod.acct.add(b)
		}
		in := (off + done) % codeChunk
		if in >= uint64(len(c)) {
			return false
		}
		done += uint64(copy(buf[done:], c[in:]))
	}
	return true
}

// codeCache is the module's cache of code, made on first use.
func (mod *module) codeCache() *codeCache {
	if mod.code == nil {
		mod.code = &codeCache{chunks: make(map[uint64][]byte)}
		mod.acct.add(int64(unsafe.Sizeof(*mod.code)))
	}
	return mod.code
}

// readChunk reads codeChunk bytes of m's file at off (fewer at its end,
// none when it cannot be read).
func readChunk(pid int, m *Mapping, off uint64) []byte {
	f, err := openMapped(pid, m)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, codeChunk)
	k, _ := f.ReadAt(b, int64(off))
	return b[:k]
}

// maxCallLen is the longest call instruction callBefore recognises: a
// legacy prefix, REX, FF, ModRM, SIB and a 32-bit displacement.
const maxCallLen = 9

// callBefore reports whether code, the bytes just before a return address
// (up to maxCallLen of them), ends with a call instruction:
//
//   - E8 rel32, the direct call (5 bytes);
//   - FF /2, the indirect call through a register or memory: FF, a ModRM
//     byte whose reg field is 2, then the SIB byte and displacement that
//     ModRM asks for (2 to 7 bytes).
//
// A REX prefix (40-4F) or a legacy prefix (3E notrack, segment overrides)
// before FF does not change the length of what follows, so the check that
// the instruction ends exactly at the return address holds for them too.
// Bytes of an unrelated instruction can pass for a call now and then: the
// check is a filter against garbage, not a disassembler.
func callBefore(code []byte) bool {
	n := len(code)
	if n >= 5 && code[n-5] == 0xe8 {
		return true
	}
	for l := 2; l <= 7 && l <= n; l++ {
		if code[n-l] == 0xff && modRMLen(code[n-l+1:]) == l-1 {
			return true
		}
	}
	return false
}

// jumpBefore reports whether code, the bytes just before an address, ends
// with an unconditional jump or a return: E9 rel32, EB rel8, FF /4 with
// its operand, C3. Code after one is entered only by a jump to it, or
// returned to: a runtime that pushes a return address and jumps (the JVM's
// template interpreter pushes the return entry of its invoke bytecodes,
// then jumps to the callee) returns to such an address, which follows no
// call. Garbage seldom lands on one.
func jumpBefore(code []byte) bool {
	n := len(code)
	switch {
	case n >= 1 && code[n-1] == 0xc3:
		return true
	case n >= 2 && code[n-2] == 0xeb:
		return true
	case n >= 5 && code[n-5] == 0xe9:
		return true
	}
	for l := 2; l <= 7 && l <= n; l++ {
		if code[n-l] == 0xff && operandLen(code[n-l+1:], 4) == l-1 {
			return true
		}
	}
	return false
}

// directCall is the displacement of the direct call (E8 rel32) that code,
// the bytes before a return address, ends with, if it does.
func directCall(code []byte) (int32, bool) {
	n := len(code)
	if n < 5 || code[n-5] != 0xe8 {
		return 0, false
	}
	return int32(uint32(code[n-4]) | uint32(code[n-3])<<8 | uint32(code[n-2])<<16 | uint32(code[n-1])<<24), true
}

// modRMLen is the length of a ModRM operand of FF /2 that starts rest
// (ModRM, SIB, displacement), or -1 when rest[0] is not such a ModRM or
// rest is too short to hold what it asks for.
func modRMLen(rest []byte) int { return operandLen(rest, 2) }

// operandLen is modRMLen for FF /reg: 2 call, 4 jmp.
func operandLen(rest []byte, reg byte) int {
	if len(rest) == 0 {
		return -1
	}
	modrm := rest[0]
	if (modrm>>3)&7 != reg {
		return -1
	}
	mod, rm := modrm>>6, modrm&7
	if mod == 3 {
		return 1 // call *%reg
	}
	l := 1
	if rm == 4 {
		if len(rest) < 2 {
			return -1
		}
		l++ // SIB
		if mod == 0 && rest[1]&7 == 5 {
			l += 4 // no base: disp32
		}
	}
	switch {
	case mod == 0 && rm == 5:
		l += 4 // RIP-relative disp32
	case mod == 1:
		l++
	case mod == 2:
		l += 4
	}
	return l
}
