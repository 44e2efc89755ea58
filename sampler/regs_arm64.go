package sampler

// entryRegsMask selects x29 (the frame pointer), SP and PC in
// sample_regs_user (perf_regs.h on arm64: x29=29, SP=31, PC=32). On arm64
// the return address is in x30 at a function's entry, not on the stack; the
// stack word is only a fallback there.
const entryRegsMask = 1<<29 | 1<<31 | 1<<32

// unwindRegsMask is entryRegsMask: cctop's CFI unwinder knows x86-64 only,
// so arm64 copies the stack for leaf recovery through the frame pointer.
const unwindRegsMask = entryRegsMask

const (
	fpReg = 29
	spReg = 31
	ipReg = 32
)

// UnwindSupported reports whether user-space unwinding (Config.UserStack)
// knows this architecture's registers.
const UnwindSupported = false

// dwarfRegs is empty: see unwindRegsMask.
var dwarfRegs = [...]int{}
