//go:build !linux

package python

type processMemory struct{ pid int }

// ProcessMemory is pid's memory: unreadable off Linux.
func ProcessMemory(pid int) Memory { return processMemory{pid} }

func (processMemory) ReadAt(p []byte, addr uint64) error { return errUnmapped }
