//go:build !amd64 && !arm64

package sampler

// entryRegsMask is empty where cctop does not know the register layout:
// entry probes then rely on the kernel's own unwinding.
const entryRegsMask = 0

const unwindRegsMask = 0

const (
	fpReg = -1
	spReg = -1
	ipReg = -1
)

// UnwindSupported reports whether user-space unwinding (Config.UserStack)
// knows this architecture's registers.
const UnwindSupported = false

var dwarfRegs = [...]int{}
