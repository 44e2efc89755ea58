//go:build !amd64 && !arm64

package sampler

// entryRegsMask is empty where cctop does not know the register layout:
// entry probes then rely on the kernel's own unwinding.
const entryRegsMask = 0
