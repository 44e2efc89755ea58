package annotate

import (
	"io"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"
)

// Decoding a function's machine code into rows, in Go's assembler syntax
// as go tool pprof -disasm prints it (cmd/internal/disasm: x86asm and
// arm64asm's GoSyntax, with the binary's symbols naming addresses).

// decoded is one instruction before its weights and lines.
type decoded struct {
	addr   uint64
	size   int
	text   string
	target uint64 // a direct jump's or call's destination, 0 none
	call   bool
}

// symLookup names an address: the symbol holding it and its start.
type symLookup func(uint64) (string, uint64)

// decode decodes code, which starts at start, for arch ("amd64",
// "arm64"); false for another architecture. Bytes that decode to nothing
// are one "?" row each (of an x86 byte, of an arm64 word), as Go's
// disassembler prints them.
func decode(arch string, code []byte, start uint64, lookup symLookup) ([]decoded, bool) {
	switch arch {
	case "amd64":
		return decodeX86(code, start, lookup), true
	case "arm64":
		return decodeARM64(code, start, lookup), true
	}
	return nil, false
}

func decodeX86(code []byte, start uint64, lookup symLookup) []decoded {
	var out []decoded
	for i := 0; i < len(code); {
		pc := start + uint64(i)
		inst, err := x86asm.Decode(code[i:], 64)
		d := decoded{addr: pc, size: inst.Len, text: "?"}
		if err != nil || inst.Len == 0 || inst.Op == 0 {
			d.size = 1
		} else {
			d.text = x86asm.GoSyntax(inst, pc, x86asm.SymLookup(lookup))
			if rel, ok := inst.Args[0].(x86asm.Rel); ok && x86Branch(inst.Op) {
				d.target = pc + uint64(inst.Len) + uint64(int64(rel))
				d.call = inst.Op == x86asm.CALL
			}
		}
		out = append(out, d)
		i += d.size
	}
	return out
}

// x86Branch: the ops whose relative argument is a code address.
func x86Branch(op x86asm.Op) bool {
	switch op {
	case x86asm.CALL, x86asm.JMP, x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ,
		x86asm.JE, x86asm.JECXZ, x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE,
		x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JRCXZ, x86asm.JS,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.XBEGIN:
		return true
	}
	return false
}

// codeReader lets arm64asm read literal pools of the function's code.
type codeReader struct {
	code  []byte
	start uint64
}

func (r codeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || uint64(off) < r.start || uint64(off)-r.start >= uint64(len(r.code)) {
		return 0, io.EOF
	}
	n := copy(p, r.code[uint64(off)-r.start:])
	if n < len(p) {
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}

func decodeARM64(code []byte, start uint64, lookup symLookup) []decoded {
	var out []decoded
	text := codeReader{code, start}
	for i := 0; i+4 <= len(code); i += 4 {
		pc := start + uint64(i)
		d := decoded{addr: pc, size: 4, text: "?"}
		inst, err := arm64asm.Decode(code[i:])
		if err == nil && inst.Op != 0 {
			d.text = arm64asm.GoSyntax(inst, pc, lookup, text)
			switch inst.Op {
			case arm64asm.B, arm64asm.BL, arm64asm.CBZ, arm64asm.CBNZ, arm64asm.TBZ, arm64asm.TBNZ:
				for _, a := range inst.Args {
					if rel, ok := a.(arm64asm.PCRel); ok {
						d.target = pc + uint64(int64(rel))
						d.call = inst.Op == arm64asm.BL
					}
				}
			}
		}
		out = append(out, d)
	}
	return out
}

// jumpTargets are the addresses in [start, end) that a jump of ds lands
// on (calls are not jumps).
func jumpTargets(ds []decoded, start, end uint64) map[uint64]bool {
	targets := map[uint64]bool{}
	for _, d := range ds {
		if d.target >= start && d.target < end && !d.call {
			targets[d.target] = true
		}
	}
	return targets
}

// weigh adds to in the weights of the addresses of addrs (ascending) that
// fall inside it, size bytes from its address: samples inside an
// instruction are the instruction's. *k is the next of addrs to place,
// for the caller's walk over instructions in address order. It returns
// the addresses placed.
func weigh(in *Insn, size int, addrs []Addr, k *int) []Addr {
	for *k < len(addrs) && addrs[*k].Addr < in.Addr {
		*k++
	}
	from := *k
	for ; *k < len(addrs) && addrs[*k].Addr < in.Addr+uint64(size); *k++ {
		in.Flat += addrs[*k].Flat
		in.Cum += addrs[*k].Cum
	}
	return addrs[from:*k]
}
