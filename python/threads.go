package python

import (
	"fmt"
	"os"
	"strconv"
)

// Bounds on the lists the target's memory links.
const (
	maxInterpreters = 64
	maxThreads      = 4096
)

// threadState is one PyThreadState: its address, the kernel's id of the
// thread that runs it (0 when not known), and its thread_id, the
// pthread_self() that threading.get_ident() returns and threading._active
// is keyed by.
type threadState struct {
	addr  uint64
	tid   int
	ident uint64
}

// threadStates lists the thread states of every interpreter, bounded.
func (in *Interpreter) threadStates(mem Memory, dst []threadState) ([]threadState, error) {
	l := &in.Layout
	var w [8]byte
	u64 := func(what string, addr uint64) (uint64, error) {
		if err := mem.ReadAt(w[:], addr); err != nil {
			return 0, &ReadError{what, addr, err}
		}
		return le64(w[:], 0), nil
	}
	interp, err := u64("_PyRuntime.interpreters.head", in.Runtime+l.RuntimeInterpretersHead)
	if err != nil {
		return dst, err
	}
	hdrLen := max(l.TstateNext, l.TstateNativeThreadID, l.TstateThreadID) + 8
	hdr := make([]byte, hdrLen)
	var pthreads []uint64
	for ni := 0; interp != 0; ni++ {
		if ni == maxInterpreters {
			return dst, fmt.Errorf("more than %d interpreters", maxInterpreters)
		}
		ts, err := u64("interpreter's threads", interp+l.InterpThreadsHead)
		if err != nil {
			return dst, err
		}
		for ts != 0 {
			if len(dst) >= maxThreads {
				return dst, fmt.Errorf("more than %d thread states", maxThreads)
			}
			if err := mem.ReadAt(hdr, ts); err != nil {
				return dst, &ReadError{"thread state", ts, err}
			}
			t := threadState{addr: ts, ident: le64(hdr, l.TstateThreadID)}
			if l.TstateNativeThreadID != 0 {
				t.tid = int(le64(hdr, l.TstateNativeThreadID))
			} else {
				pthreads = append(pthreads, le64(hdr, l.TstateThreadID))
			}
			dst = append(dst, t)
			ts = le64(hdr, l.TstateNext)
		}
		if interp, err = u64("interpreter's next", interp+l.InterpNext); err != nil {
			return dst, err
		}
	}
	if l.TstateNativeThreadID == 0 && len(pthreads) > 0 {
		in.pthreadTids(mem, dst[len(dst)-len(pthreads):], pthreads)
	}
	return dst, nil
}

// firstThreadState is the main interpreter's first thread state's
// address: a new thread's goes first.
func (in *Interpreter) firstThreadState(mem Memory) (uint64, error) {
	l := &in.Layout
	var w [8]byte
	if err := mem.ReadAt(w[:], in.Runtime+l.RuntimeInterpretersHead); err != nil {
		return 0, err
	}
	interp := le64(w[:], 0)
	if interp == 0 {
		return 0, nil
	}
	if err := mem.ReadAt(w[:], interp+l.InterpThreadsHead); err != nil {
		return 0, err
	}
	return le64(w[:], 0) ^ interp, nil
}

// glibcTidOffset is where x86-64 and arm64 glibc keep a thread's kernel id
// in its struct pthread, whose address pthread_self() returns: tried first.
const glibcTidOffset = 0x2d0

// tidScan is how much of a struct pthread is searched for the tid.
const tidScan = 0x800

// pthreadTids gives the thread states of 3.9 and 3.10, which keep only
// pthread_self(), their kernel ids: the struct pthread at that address
// holds the tid at an offset of the C library's, found once per process as
// the one where every thread state's struct holds a distinct live thread
// of the process (glibc's first: with one thread, any word equal to the
// pid would pass).
func (in *Interpreter) pthreadTids(mem Memory, ts []threadState, pthreads []uint64) {
	if in.tidOffset < 0 {
		return
	}
	if in.tidOffset == 0 {
		in.tidOffset = calibrateTidOffset(mem, pthreads, liveTids(in.PID))
		if in.tidOffset < 0 {
			return
		}
	}
	var w [4]byte
	for i, p := range pthreads {
		if p != 0 && mem.ReadAt(w[:], p+uint64(in.tidOffset)) == nil {
			ts[i].tid = int(le32(w[:], 0))
		}
	}
}

// calibrateTidOffset finds the offset of the tid in struct pthread, -1 if
// none fits (not glibc or musl as known, or no thread readable yet).
func calibrateTidOffset(mem Memory, pthreads []uint64, live map[int]bool) int {
	if len(live) == 0 {
		return -1
	}
	var structs [][]byte
	for _, p := range pthreads {
		if len(structs) == 8 {
			break
		}
		b := make([]byte, tidScan)
		if p != 0 && mem.ReadAt(b, p) == nil {
			structs = append(structs, b)
		}
	}
	if len(structs) == 0 {
		return -1
	}
	fits := func(off int) bool {
		seen := map[uint32]bool{}
		for _, b := range structs {
			v := le32(b, uint64(off))
			if !live[int(v)] || seen[v] {
				return false
			}
			seen[v] = true
		}
		return true
	}
	if fits(glibcTidOffset) {
		return glibcTidOffset
	}
	for off := 4; off < tidScan; off += 4 {
		if fits(off) {
			return off
		}
	}
	return -1
}

// liveTids are pid's threads now.
func liveTids(pid int) map[int]bool {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil
	}
	out := make(map[int]bool, len(ents))
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out[n] = true
		}
	}
	return out
}
