package symbol

import (
	"bufio"
	"cmp"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// KernelModule is the Module of kernel frames, as perf names it.
const KernelModule = "[kernel.kallsyms]"

// kallsymsPath is a variable so tests can feed a synthetic table.
var kallsymsPath = "/proc/kallsyms"

// kallsyms is the kernel's text symbol table, sorted by address. kallsyms
// has no sizes, so each symbol runs to the next one, as in perf.
type kallsyms struct {
	addrs []uint64
	names []string
	size  int64 // estimated bytes held, for MemStats
}

// LookupKernel appends the frame for kernel address pc. The symbol table is
// read once, on first use. When it cannot be read, or reads as all zeros
// (kptr_restrict hides addresses from this user), the frame has an empty
// Func: kernel time is still attributed to the kernel.
func (r *Resolver) LookupKernel(pc uint64, dst []Frame) []Frame {
	if r.kernel == nil {
		r.kernel = readKallsyms(kallsymsPath)
	}
	name, _ := r.kernel.lookup(pc)
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
	return parseKallsyms(f)
}

type ksym struct {
	addr   uint64
	name   string
	global bool
}

// parseKallsyms reads lines "ffffffff81000000 T _stext [module]", keeping
// text symbols (t, T, and weak w, W).
func parseKallsyms(rd io.Reader) *kallsyms {
	var syms []ksym
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		line := sc.Text()
		a, rest := nextField(line)
		typ, rest := nextField(rest)
		name, _ := nextField(rest)
		if len(typ) != 1 || name == "" {
			continue
		}
		switch typ[0] {
		case 't', 'T', 'w', 'W':
		default:
			continue
		}
		addr, err := strconv.ParseUint(a, 16, 64)
		if err != nil || addr == 0 {
			// Zero is what kptr_restrict shows; such a table names nothing.
			continue
		}
		syms = append(syms, ksym{addr, name, typ[0] == 'T'})
	}
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
		if c := cmp.Compare(leadingUnderscores(a.name), leadingUnderscores(b.name)); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	k := &kallsyms{}
	for i, s := range syms {
		if i > 0 && syms[i-1].addr == s.addr {
			continue
		}
		k.addrs = append(k.addrs, s.addr)
		k.names = append(k.names, s.name)
		k.size += int64(len(s.name))
	}
	k.size += int64(cap(k.addrs))*8 + int64(cap(k.names))*sizeString
	return k
}

func (k *kallsyms) lookup(pc uint64) (string, bool) {
	i, found := slices.BinarySearch(k.addrs, pc)
	if !found {
		i--
	}
	if i < 0 {
		return "", false
	}
	return k.names[i], true
}
