package symbol

import (
	"bufio"
	"bytes"
	"cmp"
	"io"
	"math"
	"os"
	"slices"
)

// KernelModule is the Module of kernel frames, as perf names it.
const KernelModule = "[kernel.kallsyms]"

// kallsymsPath is a variable so tests can feed a synthetic table.
var kallsymsPath = "/proc/kallsyms"

// kallsyms is the kernel's text symbol table, sorted by address. kallsyms
// has no sizes, so each symbol runs to the next one, as in perf.
//
// A distribution kernel has some 120k of them: each is held as 4 bytes of
// address past the lowest, while the table spans under 4 GiB (the kernel,
// its modules and BPF programs span one), 4 of where its name ends, and
// the name's bytes, in one string in address order.
type kallsyms struct {
	base  uint64   // the lowest address
	offs  []uint32 // each symbol's address - base
	wide  []uint64 // each symbol's address, instead of offs, for a table spanning more
	names string   // the names, in address order
	ends  []uint32 // where each name ends in names
	size  int64    // estimated bytes held, for MemStats
}

// name is symbol i's name.
func (k *kallsyms) name(i int) string {
	start := uint32(0)
	if i > 0 {
		start = k.ends[i-1]
	}
	if start == k.ends[i] && i+1 < len(k.ends) {
		// A padding symbol, stored without its name (parseKallsymsSized).
		return pfxPrefix + k.name(i+1)
	}
	return k.names[start:k.ends[i]]
}

// pfxPrefix names the padding before a function in kernels built with
// CONFIG_FUNCTION_PADDING: __pfx_F is F's address less the padding. These
// are half of a modern kernel's text symbols and of their names' bytes,
// so the table stores none of their names: an empty name stands for
// pfxPrefix and the next symbol's.
const pfxPrefix = "__pfx_"

// LookupKernel appends the frame for kernel address pc. The symbol table is
// read once, on first use. When it cannot be read, or reads as all zeros
// (kptr_restrict hides addresses from this user), the frame has an empty
// Func: kernel time is still attributed to the kernel.
func (r *Resolver) LookupKernel(pc uint64, dst []Frame) []Frame {
	k := r.kernelTable()
	if k == nil {
		// Being read, and the lookup is deferred (loads.go).
		return append(dst, Frame{Module: KernelModule, Addr: pc})
	}
	name, _ := k.lookup(pc)
	return append(dst, Frame{Func: name, Module: KernelModule, Addr: pc})
}

// UseKallsyms makes r name kernel addresses with the table rd holds, in the
// format of /proc/kallsyms, instead of this machine's: for tests that feed
// synthetic kernel stacks, and for symbolizing with a saved table.
func (r *Resolver) UseKallsyms(rd io.Reader) { r.kernel = parseKallsyms(rd) }

func readKallsyms(path string) *kallsyms {
	f, err := os.Open(path)
	if err != nil {
		return &kallsyms{}
	}
	defer f.Close()
	return parseKallsymsSized(f, 160<<10)
}

// ksym is one text symbol while the table is built: its name is
// buf[off:off+n] of the bytes read.
type ksym struct {
	addr   uint64
	off    uint32
	n      uint16
	under  uint8 // leading underscores, for the choice among aliases
	global bool
}

// parseKallsyms reads lines "ffffffff81000000 T _stext [module]", keeping
// text symbols (t, T, and weak w, W). An agent reads the table at its
// start on every host: the lines are scanned in the reader's buffer, and
// the names kept are copied into one string, so that 120k lines cost no
// allocation each (a line scanner with a string per line took twice the
// kernel's own time to format the table).
func parseKallsyms(rd io.Reader) *kallsyms { return parseKallsymsSized(rd, 0) }

// parseKallsymsSized is parseKallsyms with room for n symbols from the
// start. For /proc/kallsyms it is sized for a distribution kernel's table
// (this VM's: 122k text symbols, 3 MB of names): growing from nothing cost
// a third of the parse.
func parseKallsymsSized(rd io.Reader, n int) *kallsyms {
	br := bufio.NewReaderSize(rd, 64<<10)
	syms := make([]ksym, 0, n)
	buf := make([]byte, 0, n*26) // the names of syms
	for {
		l, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer is no symbol: skip it.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(l) == 0 && err != nil {
			break
		}
		// The line without its end, as a line scanner gives it.
		l = bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r"))
		a, rest := nextField(l)
		typ, rest := nextField(rest)
		name, _ := nextField(rest)
		if len(typ) != 1 || len(name) == 0 || len(name) > math.MaxUint16 || len(a) > 16 {
			continue
		}
		switch typ[0] {
		case 't', 'T', 'w', 'W':
		default:
			continue
		}
		addr, ok := parseHex(a)
		if !ok || addr == 0 {
			// Zero is what kptr_restrict shows; such a table names nothing.
			continue
		}
		under := 0
		for under < len(name) && under < math.MaxUint8 && name[under] == '_' {
			under++
		}
		if len(buf)+len(name) > math.MaxUint32 {
			break
		}
		syms = append(syms, ksym{addr: addr, off: uint32(len(buf)), n: uint16(len(name)), under: uint8(under), global: typ[0] == 'T'})
		buf = append(buf, name...)
	}
	nameOf := func(s ksym) []byte { return buf[s.off : s.off+uint32(s.n)] }
	// Module symbols follow the core kernel out of order, and aliases
	// share addresses: sort, then keep the best name per address
	// deterministically (global first, fewer leading underscores).
	slices.SortFunc(syms, func(a, b ksym) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		if a.global != b.global {
			if a.global {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.under, b.under); c != 0 {
			return c
		}
		return bytes.Compare(nameOf(a), nameOf(b))
	})
	// One symbol per address, the names copied in address order.
	kept := syms[:0]
	var total int
	for i, s := range syms {
		if i > 0 && syms[i-1].addr == s.addr {
			continue
		}
		kept = append(kept, s)
		total += int(s.n)
	}
	// A symbol named __pfx_ and the next one's name keeps no name of its
	// own, unless the next one is such a symbol too.
	bare := make([]bool, len(kept))
	for i := len(kept) - 2; i >= 0; i-- {
		name, next := nameOf(kept[i]), nameOf(kept[i+1])
		if !bare[i+1] && len(name) == len(pfxPrefix)+len(next) && bytes.HasPrefix(name, []byte(pfxPrefix)) && bytes.Equal(name[len(pfxPrefix):], next) {
			bare[i] = true
			total -= len(name)
		}
	}
	k := &kallsyms{ends: make([]uint32, len(kept))}
	names := make([]byte, 0, total)
	for i, s := range kept {
		if !bare[i] {
			names = append(names, nameOf(s)...)
		}
		k.ends[i] = uint32(len(names))
	}
	k.names = string(names)
	if len(kept) > 0 {
		k.base = kept[0].addr
		if kept[len(kept)-1].addr-k.base <= math.MaxUint32 {
			k.offs = make([]uint32, len(kept))
			for i, s := range kept {
				k.offs[i] = uint32(s.addr - k.base)
			}
		} else {
			k.wide = make([]uint64, len(kept))
			for i, s := range kept {
				k.wide[i] = s.addr
			}
		}
	}
	k.size = int64(len(k.names)) + int64(len(k.ends))*4 + int64(len(k.offs))*4 + int64(len(k.wide))*8
	return k
}

// parseHex parses up to 16 hex digits.
func parseHex(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

func (k *kallsyms) lookup(pc uint64) (string, bool) {
	var i int
	var found bool
	switch {
	case k.wide != nil:
		i, found = slices.BinarySearch(k.wide, pc)
	case pc < k.base:
		return "", false
	case pc-k.base > math.MaxUint32:
		i = len(k.offs) // past the last symbol, which runs to the next
	default:
		i, found = slices.BinarySearch(k.offs, uint32(pc-k.base))
	}
	if !found {
		i--
	}
	if i < 0 {
		return "", false
	}
	return k.name(i), true
}
