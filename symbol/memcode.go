package symbol

import (
	"fmt"
	"time"
)

// Code that exists only in memory: JIT code, the trampolines a runtime
// copies for each function it runs (CPython's perf trampolines), code in
// memfds. The unwinder's checks need its bytes as they do a file's (a
// return address must follow a call), so they are read from the process
// (readProcessMemory) in chunks, cached per mapping. The cache goes with
// its mapping: a mapping made anew over the range (munmap and mmap, or the
// mprotect a JIT makes when it writes code) starts empty. A JIT may also
// write new code into a mapping it keeps, where no record says so, so a
// chunk is read again once it is older than memCodeTTL.

// memCodeTTL is how long a chunk of memory code is trusted, in ns.
const memCodeTTL = uint64(time.Second)

// maxMemChunks bounds one mapping's cache (128 KiB); past it the cache
// starts over.
const maxMemChunks = 256

// memCode is the chunks of one mapping read so far, by address / codeChunk.
type memCode struct {
	chunks map[uint64]memChunk
	// now is the clock where no sample's time is set (SetTime):
	// CLOCK_MONOTONIC ns, as the samples'.
	now func() uint64
}

type memChunk struct {
	b  []byte // nil: could not be read
	at uint64 // when it was read, CLOCK_MONOTONIC ns
}

// readMemCode fills buf with the code at addr of pid, inside anonymous
// mapping m, from the process's memory.
func (r *Resolver) readMemCode(pid int, m *mapping, addr uint64, buf []byte) bool {
	if m.mem == nil {
		m.mem = &memCode{chunks: make(map[uint64]memChunk), now: monoNow}
	}
	mc := m.mem
	// The sample's time, where the engine set it: a clock read per
	// frame of JIT code would be a cost on the unwinding path.
	now := r.dumps.time
	if now == 0 {
		now = mc.now()
	}
	n := uint64(len(buf))
	for done := uint64(0); done < n; {
		a := addr + done
		k := a / codeChunk
		c, ok := mc.chunks[k]
		if !ok || now > c.at+memCodeTTL {
			c = mc.read(pid, m, k, now)
		}
		if c.b == nil {
			return false // unreadable: tried again after memCodeTTL
		}
		done += uint64(copy(buf[done:], c.b[a%codeChunk:]))
	}
	return true
}

// read reads chunk k of m (the part of it inside m) and caches it.
func (mc *memCode) read(pid int, m *mapping, k uint64, now uint64) memChunk {
	c := memChunk{at: now}
	base := k * codeChunk
	lo, hi := max(base, m.Start), min(base+codeChunk, m.Limit)
	b := make([]byte, codeChunk)
	if hi > lo && readProcessMemory(pid, lo, b[lo-base:hi-base]) {
		c.b = b
	}
	if len(mc.chunks) >= maxMemChunks {
		mc.chunks = make(map[uint64]memChunk)
	}
	mc.chunks[k] = c
	return c
}

// jitStart is the start of the JIT function that holds pc in pid, from
// what names it: the process's jitdump at the sample's time, or its perf
// map.
func (r *Resolver) jitStart(pid int, p *proc, pc uint64) (uint64, bool) {
	if p == nil {
		return 0, false
	}
	if p.dump != nil {
		if c, ok := p.dump.lookup(pc, r.dumps.time); ok {
			return c.Start, true
		}
	}
	if p.jit == nil {
		return 0, false
	}
	s, ok := p.jit.parser.syms.holding(pc)
	return s.start, ok
}

// holding is the range that holds pc.
func (t jitTable) holding(pc uint64) (jitSym, bool) {
	lo, hi := 0, len(t)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if t[h].start <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo == 0 || pc >= t[lo-1].end {
		return jitSym{}, false
	}
	return t[lo-1], true
}

// maxPerfMapPIDs bounds what PerfMapPIDs remembers.
const maxPerfMapPIDs = 1 << 16

func (r *Resolver) notePerfMap(pid int) {
	if len(r.perfMapPIDs) < maxPerfMapPIDs {
		r.perfMapPIDs = append(r.perfMapPIDs, pid)
	}
}

// PerfMapPIDs are the processes whose perf maps the resolver looked for
// (the first maxPerfMapPIDs of them, exited ones included): the files a
// runtime cctop asked for a perf map wrote, for cctop to remove.
func (r *Resolver) PerfMapPIDs() []int { return r.perfMapPIDs }

// JITSource says what names pid's JIT code: "jitdump PATH" (the marker's
// path, as the process named it), "perf map PATH (N entries)", or "" for
// nothing found (yet).
func (r *Resolver) JITSource(pid int) string {
	p := r.procs[pid]
	if p == nil {
		return ""
	}
	if p.dump != nil {
		return "jitdump " + p.dump.mapping.Path
	}
	if pm := r.PerfMap(pid); pm.Found() {
		return fmt.Sprintf("perf map %s (%d entries)", pm.Path(), pm.Entries())
	}
	return ""
}

// ReadProcessMemory fills buf with process pid's memory at addr, all of
// it or nothing (false): the annotate view reads a live target's JIT code
// this way.
func ReadProcessMemory(pid int, addr uint64, buf []byte) bool {
	return readProcessMemory(pid, addr, buf)
}
