package engine

import (
	"bufio"
	"cmp"
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
	stack int    // bytes of user stack copied per sample (the large copy when learning)
	// learn: each thread starts on the frame-pointer chain and a small
	// copy, and takes the large one while its stacks need CFI
	// (copyplan.go); copies is the session's plan, made when it opens.
	learn  bool
	copies *copyPlan
}

func (u unwindPlan) String() string {
	s := fmt.Sprintf("unwind %s, %d-byte stack copies", u.mode, u.stack)
	if u.learn {
		if u.copies != nil {
			s = "unwind " + u.copies.String()
		} else {
			s = fmt.Sprintf("unwind fp + %s copies, %s for threads whose stacks need CFI", bytesShort(leafStackSize), bytesShort(u.stack))
		}
	}
	if u.why != "" {
		s += " (" + u.why + ")"
	}
	return s
}

// short is the plan in a word or two, for the counters panel's line.
func (u unwindPlan) short() string {
	switch {
	case u.learn && u.copies != nil && u.copies.samples > 0:
		return fmt.Sprintf("fp+%s, %s for %.0f%%", bytesShort(u.copies.small), bytesShort(u.copies.large),
			100*float64(u.copies.largeSamples)/float64(u.copies.samples))
	case u.learn:
		return "fp+" + bytesShort(leafStackSize) + " learning"
	}
	return cmp.Or(u.mode, unwindFP)
}

// copied says how much stack the samples actually carried: the kernel
// copies only the part of the requested size that the stack holds.
func (u unwindPlan) copied(bytes, samples uint64) string {
	if samples == 0 || u.stack == 0 {
		return ""
	}
	if u.learn {
		return fmt.Sprintf("%d bytes of user stack copied per sample on average", bytes/samples)
	}
	return fmt.Sprintf("%d bytes of user stack copied per sample on average (of %d requested)", bytes/samples, u.stack)
}

// planUnwind resolves --unwind and --stack-size for the target and sets
// cfg's stack copy.
//
// auto unwinds per module and per frame, not per process: each sample
// carries a copy of the user stack, and each frame of it is unwound with
// what its module has for that pc (symbol.Resolver.UnwindUser): CFI where
// it covers the pc, Go's tables for Go code, else the frame pointer,
// validated. So a frame-pointer executable calling a library without
// frame pointers, or the other way round, unwinds whole.
//
// The copy must be taken whenever any module of the target may need CFI,
// and for a dynamically linked program that is always: the C library and
// the distribution's libraries keep no frame pointers, and libraries
// loaded later with dlopen cannot be known at the start. The one case
// that is skipped is a statically linked Go binary: Go keeps a frame
// pointer in every function but frameless leaves (whose caller the small
// leaf copy of --unwind fp recovers with the pclntab), and nothing else
// can be mapped into it but the vdso. A statically linked C or C++
// program is not such a case: it carries the C library's code, built
// without frame pointers, so it gets the copy. The cost, the bytes of
// stack the kernel copied per sample, is in the record summary.
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
		static, goBinary := symbol.Linkage(binary)
		name := filepath.Base(binary)
		switch {
		case binary == "":
			u.mode, u.why = unwindDWARF, "per module (target unknown)"
		case static && goBinary:
			u.mode, u.why = unwindFP, name+" is statically linked Go, which keeps frame pointers"
		case static:
			u.mode, u.why = unwindDWARF, "per module: "+name+" is statically linked with code that may lack frame pointers"
		default:
			u.mode, u.why = unwindDWARF, "per module: "+name+" is dynamically linked, its libraries may need CFI"
		}
	}
	u.stack = leafStackSize
	if sampler.MayLockMemory() {
		// Where ring memory is not capped by perf_event_mlock_kb, a
		// second of samples per CPU: a reader starved of CPU by a busy
		// target, or stalled on its first samples' symbols, then loses
		// far fewer (bench/load.sh: 500 threads, 40% of the records lost
		// with 256 KiB rings).
		cfg.RingPages = max(cfg.RingPages, ringPagesForSamples(leafStackSize, clockRate(cfg)))
	}
	if u.mode == unwindDWARF {
		u.stack = stack
		// A copy per sample fills the rings many times faster.
		cfg.RingPages = max(cfg.RingPages, ringPagesForSamples(stack, clockRate(cfg)/4))
	}
	cfg.UserStack = u.stack
	if asked == unwindAuto && u.mode == unwindDWARF && !cfg.AllProcesses && stack > leafStackSize {
		// Learned per thread (copyplan.go), from the large copy down:
		// no stack is lost while a thread's needs are learned. Over
		// the whole host the events are the CPUs', and every thread
		// takes the large copy.
		u.learn = true
	}
	return u, nil
}

// clockRate is the samples a second a CPU gives at most: a clock's
// frequency (-F), or 999 for what a period or an event sets.
func clockRate(cfg *sampler.Config) int {
	if cfg.Period == 0 && cfg.Freq > 0 && cfg.Leader.IsClock() {
		return int(min(cfg.Freq, 999))
	}
	return 999
}

// ringPagesFor sizes the rings for samples that carry stack bytes each:
// room for a quarter second of samples at 999 Hz per CPU, so that a stall
// of the reader (loading a large binary's debug information on its first
// samples) does not lose them; at most 64 MiB over all CPUs.
func ringPagesFor(stack int) int { return ringPagesForSamples(stack, 999/4) }

// ringPagesForSamples sizes the rings for perCPU samples a CPU of stack
// bytes each (ringPagesFor: a quarter second at 999 Hz). An always-on
// agent at 19 Hz gets the smallest rings: their pages are its memory.
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
