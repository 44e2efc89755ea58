package sampler

// entryRegsMask selects BP, SP and IP in sample_regs_user (perf_regs.h on
// x86_64: BP=6, SP=7, IP=8).
const entryRegsMask = 1<<6 | 1<<7 | 1<<8

// unwindRegsMask selects every general-purpose register (AX..IP and
// R8..R15, not flags or segments): CFI may restore a frame from any of
// them, not only from SP and BP.
const unwindRegsMask = 1<<9 - 1 | 0xff<<16

// Register numbers of perf_regs.h that the unwinder needs by name.
const (
	fpReg = 6 // BP
	spReg = 7
	ipReg = 8
)

// UnwindSupported reports whether user-space unwinding (Config.UserStack)
// knows this architecture's registers.
const UnwindSupported = true

// dwarfRegs lists, for each x86-64 DWARF register number (0 rax, 1 rdx,
// 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return
// address column, i.e. the IP), its perf_regs.h number.
var dwarfRegs = [...]int{0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8}
