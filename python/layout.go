package python

import "github.com/cctop/cctop/lang"

// Layout is where a CPython version keeps what a reader of its stacks
// needs: byte offsets into its runtime, interpreter, thread-state, frame,
// code, str and bytes objects, for a release build of x86-64 or arm64 (the
// same offsets: both LP64). A zero offset of an optional field means the
// version has no such field (the Has* flags say which frame model).
type Layout struct {
	Version lang.Version

	// _PyRuntimeState: interpreters.head.
	RuntimeInterpretersHead uint64

	// PyInterpreterState: next, and the head of its thread states
	// (tstate_head up to 3.11, threads.head from 3.12).
	InterpNext        uint64
	InterpThreadsHead uint64

	// PyThreadState.
	TstateNext uint64
	// TstateNativeThreadID is native_thread_id (3.11+), the kernel's tid;
	// 0 before 3.11, where only thread_id (pthread_self) is kept and the
	// tid is found through glibc's struct pthread (tid.go).
	TstateNativeThreadID uint64
	TstateThreadID       uint64
	// TstateFrame is the innermost frame's pointer: frame (a
	// PyFrameObject*, 3.9–3.10) or current_frame (3.13+); 0 in 3.11–3.12,
	// where the thread state points at a _PyCFrame (TstateCFrame) that
	// holds it (CFrameCurrentFrame).
	TstateFrame        uint64
	TstateCFrame       uint64
	CFrameCurrentFrame uint64

	// FrameObjects: the stack is a chain of PyFrameObjects (3.9–3.10), one
	// per evaluation of the C loop; else of _PyInterpreterFrames (3.11+),
	// several per evaluation.
	FrameObjects bool
	// PyFrameObject (3.9–3.10): f_back, f_code, f_lasti (an int: a byte
	// offset in 3.9, a code-unit index in 3.10).
	FrameBack, FrameCode, FrameLasti uint64

	// _PyInterpreterFrame (3.11+): previous, f_code (f_executable in
	// 3.13), prev_instr (instr_ptr in 3.13), and what marks the first frame
	// of an evaluation of the C loop: is_entry (a bool, 3.11) or owner ==
	// FRAME_OWNED_BY_CSTACK (a char, 3.12+: the evaluation's own frame on
	// the C stack, which runs no code). IFrameSize is how much of a frame
	// to read: up to and including the last of those fields.
	IFramePrevious, IFrameCode, IFrameInstr uint64
	IFrameIsEntry                           uint64 // 3.11 only
	IFrameOwner                             uint64 // 3.12+ (3.11 has it too, unused)
	IFrameSize                              uint64
	// InstrIsNext: the frame's instruction pointer is the next instruction
	// (instr_ptr, 3.13) rather than the previous one (prev_instr, 3.11–3.12).
	InstrIsNext bool

	// PyCodeObject: co_filename, co_name, co_qualname (3.11+; 0 before,
	// where a frame names its function by co_name), co_firstlineno (an
	// int), the line table (co_lnotab in 3.9, co_linetable after: a bytes
	// object), co_code_adaptive (3.11+: the bytecode, inline in the code
	// object, from which an instruction pointer is an offset). CodeSize is
	// how much of a code object to read: past the last of those fields.
	CodeFilename, CodeName, CodeQualname, CodeFirstLineno, CodeLinetable uint64
	CodeAdaptive                                                         uint64
	CodeSize                                                             uint64

	// PyASCIIObject / PyCompactUnicodeObject: state (the bit field),
	// length; the sizes of the two headers, after which a compact str's
	// characters start (ASCII, or the others).
	UnicodeState, UnicodeLength uint64
	ASCIISize, CompactSize      uint64

	// PyBytesObject: ob_size, ob_sval.
	BytesSize, BytesData uint64

	// PyObject: ob_type; PyTypeObject: tp_name (a char*).
	ObjectType, TypeName uint64
}
