package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// Unwinding modes (--unwind).
const (
	unwindAuto  = "auto"
	unwindFP    = "fp"
	unwindDWARF = "dwarf"
)

// defaultStackSize is how much user stack --unwind dwarf copies per sample
// unless --stack-size says otherwise. BENCHMARKS.md has the measurement it
// rests on: completeness on deep interpreter stacks against ingest cost.
const defaultStackSize = 8192

// leafStackSize is the copy that --unwind fp takes along the kernel's
// frame-pointer chain: enough for a frameless leaf's locals and saved
// registers, so its return address (the caller the chain skips) is in it.
const leafStackSize = 512

// unwindPlan is how user stacks are unwound in one run.
type unwindPlan struct {
	mode  string // unwindFP or unwindDWARF, as chosen
	asked string // the --unwind flag
	why   string // why auto chose mode
	stack int    // bytes of user stack copied per sample
}

func (u unwindPlan) String() string {
	s := fmt.Sprintf("unwind %s, %d-byte stack copies", u.mode, u.stack)
	if u.why != "" {
		s += " (" + u.why + ")"
	}
	return s
}

// planUnwind resolves --unwind and --stack-size for the target and sets
// cfg's stack copy. auto takes the kernel's frame-pointer chain for
// binaries that keep frame pointers (Go, code built with
// -fno-omit-frame-pointer) and DWARF unwinding of a stack copy for those
// that do not (distribution packages). Either way each frame is unwound
// with the binary's CFI where the copy reaches, so frameless leaves keep
// their callers.
func planUnwind(asked string, stack int, cfg *sampler.Config, binary string) (unwindPlan, error) {
	u := unwindPlan{asked: asked, mode: asked}
	switch asked {
	case unwindAuto, unwindFP, unwindDWARF:
	default:
		return u, usageError("unknown --unwind %q (auto, fp or dwarf)", asked)
	}
	if stack <= 0 || stack > sampler.MaxUserStack {
		return u, usageError("--stack-size must be between 8 and %d bytes", sampler.MaxUserStack)
	}
	if !sampler.UnwindSupported {
		if asked == unwindDWARF {
			return u, fmt.Errorf("--unwind dwarf: cctop's DWARF unwinder knows x86-64 only")
		}
		u.mode, u.why = unwindFP, "DWARF unwinding is x86-64 only"
		return u, nil
	}
	if asked == unwindAuto {
		if binary == "" {
			binary, _ = targetBinary(*cfg)
		}
		binary = interpreterOf(binary)
		keeps, why := symbol.FramePointers(binary)
		u.mode, u.why = unwindDWARF, why
		if keeps {
			u.mode = unwindFP
		}
	}
	u.stack = leafStackSize
	if sampler.MayLockMemory() {
		// Where ring memory is not capped by perf_event_mlock_kb, a
		// second of samples per CPU: a reader starved of CPU by a busy
		// target, or stalled on its first samples' symbols, then loses
		// far fewer (bench/load.sh: 500 threads, 40% of the records lost
		// with 256 KiB rings).
		cfg.RingPages = max(cfg.RingPages, ringPagesForSamples(leafStackSize, 999))
	}
	if u.mode == unwindDWARF {
		u.stack = stack
		// A copy per sample fills the rings many times faster.
		cfg.RingPages = max(cfg.RingPages, ringPagesFor(stack))
	}
	cfg.UserStack = u.stack
	return u, nil
}

// ringPagesFor sizes the rings for samples that carry stack bytes each:
// room for a quarter second of samples at 999 Hz per CPU, so that a stall
// of the reader (loading a large binary's debug information on its first
// samples) does not lose them; at most 64 MiB over all CPUs.
func ringPagesFor(stack int) int { return ringPagesForSamples(stack, 999/4) }

// ringPagesForSamples is ringPagesFor for perCPU samples a CPU.
func ringPagesForSamples(stack, perCPU int) int {
	pages, page := 64, os.Getpagesize()
	limit := max(64, (64<<20)/page/max(1, runtime.NumCPU()))
	for pages*page < perCPU*(stack+1024) && pages*2 <= limit {
		pages *= 2
	}
	return pages
}

// interpreterOf is the interpreter of a script run by path ("#!" line),
// following /usr/bin/env; otherwise path itself. It is the interpreter's
// code that runs.
func interpreterOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return path
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return path
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return path
	}
	interp := fields[0]
	if filepath.Base(interp) == "env" {
		for _, a := range fields[1:] {
			if !strings.HasPrefix(a, "-") {
				if p, err := exec.LookPath(a); err == nil {
					interp = p
				}
				break
			}
		}
	}
	if real, err := filepath.EvalSymlinks(interp); err == nil {
		interp = real
	}
	return interp
}
