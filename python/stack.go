package python

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Frame is one Python frame of a stack read from the interpreter, or, with
// a nil Code, the end of one evaluation of the interpreter's C loop
// (_PyEval_EvalFrameDefault): a stack lists its frames innermost first, and
// each evaluation's frames are followed by its end. In 3.9 and 3.10 each
// frame is an evaluation of its own; from 3.11 a Python function called
// from Python runs in its caller's evaluation.
type Frame struct {
	Code *Code
	Line int
}

// Evaluations counts the ends of evaluations in frames: how many
// _PyEval_EvalFrameDefault frames the native stack should hold.
func Evaluations(frames []Frame) int {
	n := 0
	for _, f := range frames {
		if f.Code == nil {
			n++
		}
	}
	return n
}

// maxFrames bounds a chain of frames: a cyclic chain in corrupt or torn
// memory ends there, as an error.
const maxFrames = 1024

// frameOwnedByCStack is the owner of the frame an evaluation keeps on the C
// stack (3.12+), which runs no code and marks where the evaluation starts.
const frameOwnedByCStack = 3

// errChanged: the thread's innermost frame changed while its chain was
// read; the chain may mix two moments.
var errChanged = errors.New("stack changed while read")

// reader is what reading one process's stacks keeps between reads: the
// pages of one read, the code objects, scratch space.
type reader struct {
	in    *Interpreter
	mem   Memory
	pages *pageCache
	codes codeCache
	frame []byte
	raw   []rawFrame
	// The vectored read that checks a stack: each code object's header,
	// and the words that say where the innermost frame is.
	addrs []uint64
	bufs  [][]byte
	hdrs  []byte
	// The frames walked (innermost first); those speculate read, and
	// whether the walk left them.
	frameAddrs []uint64
	specFrames []uint64
	specBytes  []byte
	order      []int // byAddress's scratch
	walkedOff  bool
}

// rawFrame is a frame as walked, before its code object is checked: the
// code object's address (0: the end of an evaluation) and the offset of
// its instruction.
type rawFrame struct {
	code   uint64
	offset int
}

func newReader(in *Interpreter, mem Memory) *reader {
	return &reader{in: in, mem: mem, pages: newPageCache(mem)}
}

// current is the address of the thread state's innermost frame, and the
// words it was read from (where, what), to read them again.
func (r *reader) current(tstate uint64) (f uint64, where [2]uint64, what [2]uint64, err error) {
	l := &r.in.Layout
	if l.TstateCFrame != 0 {
		cf, err := r.pages.u64(tstate + l.TstateCFrame)
		if err != nil {
			return 0, where, what, &ReadError{"thread state's cframe", tstate, err}
		}
		where[0], what[0] = tstate+l.TstateCFrame, cf
		if cf == 0 {
			return 0, where, what, nil
		}
		f, err := r.pages.u64(cf + l.CFrameCurrentFrame)
		if err != nil {
			return 0, where, what, &ReadError{"cframe", cf, err}
		}
		where[1], what[1] = cf+l.CFrameCurrentFrame, f
		return f, where, what, nil
	}
	f, err = r.pages.u64(tstate + l.TstateFrame)
	if err != nil {
		return 0, where, what, &ReadError{"thread state's frame", tstate, err}
	}
	where[0], what[0] = tstate+l.TstateFrame, f
	return f, where, what, nil
}

// speculation is what the last read of a thread found, to read it again
// in one system call: a thread that runs a loop keeps its frames and its
// code objects where they were.
type speculation struct {
	cframe uint64   // 3.11–3.12: the _PyCFrame the thread state pointed at
	frames []uint64 // the frames walked, innermost first
	codes  []uint64 // their code objects
}

// stack reads the Python stack of the thread state at tstate into dst,
// innermost first, at time now (ns). The memory is read as it is, the
// thread running. With spec (the last read of this thread, updated), one
// vectored read takes the words that point at the innermost frame, the
// frames and code objects found last time, and the words again: where the
// chain is the same, that is the whole read. Else the frames are walked,
// then one vectored read takes every code object's header, to check it
// against the cache, and the words, to check that the innermost frame did
// not move meanwhile (errChanged: the chain may mix two moments).
func (r *reader) stack(tstate, now uint64, dst []Frame, spec *speculation) ([]Frame, error) {
	r.pages.reset()
	r.raw = r.raw[:0]
	r.frameAddrs = r.frameAddrs[:0]
	fast, err := r.speculate(tstate, spec)
	if err != nil {
		return dst, err
	}
	if !fast {
		r.raw = r.raw[:0]
		r.frameAddrs = r.frameAddrs[:0]
		r.specFrames = r.specFrames[:0]
		cur, where, what, err := r.current(tstate)
		if err != nil || cur == 0 {
			if spec != nil {
				spec.frames, spec.codes = spec.frames[:0], spec.codes[:0]
			}
			return dst, err
		}
		if spec != nil {
			spec.cframe = what[0]
		}
		if err := r.walk(cur); err != nil {
			return dst, err
		}
		if err := r.check(where, what); err != nil {
			return dst, err
		}
	}
	start := len(dst)
	hdr := r.in.Layout.CodeSize
	for _, f := range r.raw {
		if f.code == 0 {
			dst = append(dst, Frame{})
			continue
		}
		i := 0
		for r.addrs[i] != f.code {
			i++
		}
		c, err := r.in.codeOf(&r.codes, r.mem, f.code, r.hdrs[uint64(i)*hdr:uint64(i+1)*hdr], now)
		if err != nil {
			return dst[:start], err
		}
		dst = append(dst, Frame{c, c.Line(f.offset)})
	}
	if spec != nil {
		spec.frames = append(spec.frames[:0], r.frameAddrs...)
		spec.codes = append(spec.codes[:0], r.addrs...)
	}
	return dst, nil
}

// frameSize is how much of a frame a reader reads.
func (l *Layout) frameSize() uint64 {
	if l.FrameObjects {
		return max(l.FrameBack, l.FrameCode, l.FrameLasti) + 8
	}
	return l.IFrameSize
}

// speculate reads the thread as spec says it was, in one system call, and
// reports whether that was all of it: the same innermost frame, the same
// chain, the same code objects, and the words that point at the frame the
// same before and after. Otherwise the caller reads the usual way.
func (r *reader) speculate(tstate uint64, spec *speculation) (bool, error) {
	l := &r.in.Layout
	if spec == nil || len(spec.frames) == 0 || len(spec.frames)+len(spec.codes)+4 > maxIovecs {
		return false, nil
	}
	fsize, csize := l.frameSize(), l.CodeSize
	need := 32 + uint64(len(spec.frames))*fsize + uint64(len(spec.codes))*csize
	if uint64(cap(r.hdrs)) < need {
		r.hdrs = make([]byte, need)
	}
	buf := r.hdrs[:need]
	r.addrs, r.bufs = r.addrs[:0], r.bufs[:0]
	word := func(i int, addr uint64) {
		r.addrs = append(r.addrs, addr)
		r.bufs = append(r.bufs, buf[need-32+uint64(8*i):need-32+uint64(8*i)+8])
	}
	cframeModel := l.TstateCFrame != 0
	first := tstate + l.TstateFrame
	if cframeModel {
		if spec.cframe == 0 {
			return false, nil
		}
		first = tstate + l.TstateCFrame
	}
	word(0, first)
	if cframeModel {
		word(1, spec.cframe+l.CFrameCurrentFrame)
	}
	// The code objects' headers first, then the frames': r.hdrs holds the
	// headers where the rest of stack looks for them.
	// Each in order of address, so that the ranges next to each other are
	// read as one (processMemory.ReadMany).
	for _, i := range r.byAddress(spec.codes) {
		r.addrs = append(r.addrs, spec.codes[i])
		r.bufs = append(r.bufs, buf[uint64(i)*csize:uint64(i+1)*csize])
	}
	frames := buf[uint64(len(spec.codes))*csize:]
	for _, i := range r.byAddress(spec.frames) {
		r.addrs = append(r.addrs, spec.frames[i])
		r.bufs = append(r.bufs, frames[uint64(i)*fsize:uint64(i+1)*fsize])
	}
	word(2, first)
	if cframeModel {
		word(3, spec.cframe+l.CFrameCurrentFrame)
	}
	r.pages.reads++
	if err := readManyOnce(r.mem, r.bufs, r.addrs); err != nil {
		return false, nil // something moved or was freed: the usual way
	}
	w := buf[need-32:]
	if le64(w, 0) != le64(w, 16) || le64(w, 8) != le64(w, 24) {
		return false, nil
	}
	cur := le64(w, 0)
	if cframeModel {
		if cur != spec.cframe {
			return false, nil
		}
		cur = le64(w, 8)
	}
	if cur != spec.frames[0] {
		return false, nil
	}
	r.specFrames = append(r.specFrames[:0], spec.frames...)
	r.specBytes = frames[:uint64(len(spec.frames))*fsize]
	if err := r.walk(cur); err != nil || r.walkedOff {
		return false, nil
	}
	// Every code object of the chain must be one whose header was read.
	for _, f := range r.raw {
		if f.code != 0 && !contains(spec.codes, f.code) {
			return false, nil
		}
	}
	r.addrs = append(r.addrs[:0], spec.codes...)
	return true, nil
}

// walk walks the chain of frames from cur into r.raw, taking each frame
// from what speculate read where it has it (r.specFrames, r.specBytes),
// else from the pages; walkedOff says whether it had to.
func (r *reader) walk(cur uint64) error {
	r.walkedOff = false
	if r.in.Layout.FrameObjects {
		return r.frameObjects(cur)
	}
	return r.interpreterFrames(cur)
}

// frameAt is the frame header at addr, the i-th of the chain.
func (r *reader) frameAt(i int, addr uint64, b []byte) ([]byte, error) {
	n := uint64(len(b))
	if i < len(r.specFrames) && r.specFrames[i] == addr {
		return r.specBytes[uint64(i)*n : uint64(i+1)*n], nil
	}
	r.walkedOff = true
	if err := r.pages.read(b, addr); err != nil {
		return nil, &ReadError{"frame", addr, err}
	}
	return b, nil
}

// check reads, in one system call, the header of each code object of
// r.raw (into r.hdrs, in the order of r.addrs) and the words that pointed
// at the innermost frame, which must not have moved.
func (r *reader) check(where, what [2]uint64) error {
	hdr := r.in.Layout.CodeSize
	r.addrs = r.addrs[:0]
	for _, f := range r.raw {
		if f.code != 0 && !contains(r.addrs, f.code) {
			r.addrs = append(r.addrs, f.code)
		}
	}
	ncode := len(r.addrs)
	if need := uint64(ncode)*hdr + 16; uint64(cap(r.hdrs)) < need {
		r.hdrs = make([]byte, need)
	}
	r.hdrs = r.hdrs[:uint64(ncode)*hdr+16]
	r.bufs = r.bufs[:0]
	for i := range r.addrs {
		r.bufs = append(r.bufs, r.hdrs[uint64(i)*hdr:uint64(i+1)*hdr])
	}
	words := r.hdrs[uint64(ncode)*hdr:]
	for i, w := range where {
		if w != 0 {
			r.addrs = append(r.addrs, w)
			r.bufs = append(r.bufs, words[8*i:8*i+8])
		}
	}
	r.pages.reads++
	if err := readMany(r.mem, r.bufs, r.addrs); err != nil {
		return &ReadError{"code objects", r.addrs[0], err}
	}
	for i, w := range where {
		if w != 0 && le64(words, uint64(8*i)) != what[i] {
			return errChanged
		}
	}
	r.addrs = r.addrs[:ncode]
	return nil
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// frameObjects walks 3.9–3.10's PyFrameObjects by f_back.
func (r *reader) frameObjects(cur uint64) error {
	l := &r.in.Layout
	n := l.frameSize()
	if cap(r.frame) < int(n) {
		r.frame = make([]byte, n)
	}
	for i := 0; cur != 0; i++ {
		if i == maxFrames {
			return fmt.Errorf("frame chain longer than %d", maxFrames)
		}
		b, err := r.frameAt(i, cur, r.frame[:n])
		if err != nil {
			return err
		}
		r.frameAddrs = append(r.frameAddrs, cur)
		code := le64(b, l.FrameCode)
		if code == 0 {
			return fmt.Errorf("frame at %#x has no code", cur)
		}
		lasti := int(int32(le32(b, l.FrameLasti)))
		if r.in.Version.AtLeast(3, 10) {
			lasti *= 2 // an index of 2-byte code units; the table is in bytes
		}
		r.raw = append(r.raw, rawFrame{code, lasti}, rawFrame{})
		cur = le64(b, l.FrameBack)
	}
	return nil
}

// interpreterFrames walks 3.11+'s _PyInterpreterFrames by previous.
func (r *reader) interpreterFrames(cur uint64) error {
	l := &r.in.Layout
	n := l.frameSize()
	if cap(r.frame) < int(n) {
		r.frame = make([]byte, n)
	}
	for i := 0; cur != 0; i++ {
		if i == maxFrames {
			return fmt.Errorf("frame chain longer than %d", maxFrames)
		}
		b, err := r.frameAt(i, cur, r.frame[:n])
		if err != nil {
			return err
		}
		r.frameAddrs = append(r.frameAddrs, cur)
		prev := le64(b, l.IFramePrevious)
		if l.IFrameIsEntry == 0 && le8(b, l.IFrameOwner) == frameOwnedByCStack {
			r.raw = append(r.raw, rawFrame{})
			cur = prev
			continue
		}
		code := le64(b, l.IFrameCode)
		if code == 0 {
			return fmt.Errorf("frame at %#x has no code", cur)
		}
		// The instruction pointer as an index of 2-byte code units in
		// the code object's inline bytecode; before the first
		// instruction it is -1, which has no line.
		offset := -1
		if d := int64(le64(b, l.IFrameInstr) - (code + l.CodeAdaptive)); d >= 0 && d < 1<<30 {
			offset = int(d / 2)
		}
		r.raw = append(r.raw, rawFrame{code, offset})
		if l.IFrameIsEntry != 0 && le8(b, l.IFrameIsEntry) != 0 {
			r.raw = append(r.raw, rawFrame{})
		}
		cur = prev
	}
	return nil
}

// byAddress is the indices of addrs in the order of their addresses, in
// scratch the reader keeps.
func (r *reader) byAddress(addrs []uint64) []int {
	r.order = r.order[:0]
	for i := range addrs {
		r.order = append(r.order, i)
	}
	slices.SortFunc(r.order, func(a, b int) int { return cmp.Compare(addrs[a], addrs[b]) })
	return r.order
}
