package flow

import (
	"testing"
)

// FuzzX86Fast holds fastAMD64 to what x86asm says of every instruction it
// claims: the same length, kind, target and padding.
func FuzzX86Fast(f *testing.F) {
	for _, b := range [][]byte{
		{0x48, 0x89, 0xe5}, {0x48, 0x8d, 0x04, 0x25, 1, 2, 3, 4}, {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0},
		{0x0f, 0x84, 1, 2, 3, 4}, {0xe8, 0xff, 0xff, 0xff, 0xff}, {0x41, 0xff, 0xd3}, {0x3e, 0xff, 0xe0},
		{0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, {0xf7, 0x05, 1, 2, 3, 4, 5, 6, 7, 8}, {0xcd, 0x03}, {0, 0},
		{0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0}, {0x66, 0x90}, {0x0f, 0x0b}, {0xc2, 8, 0},
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		const pc = 0x401000
		fast, ok := fastAMD64(code, pc)
		if !ok {
			return
		}
		if slow := slowAMD64(code, pc); fast != slow {
			t.Fatalf("% x: fast %+v, x86asm %+v", code, fast, slow)
		}
	})
}

// Every instruction of libc and of a Go program that fastAMD64 claims is
// as x86asm reads it, and it claims most of them.
func TestX86FastAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes libc twice")
	}
	for _, path := range []string{libcPath(t), buildGo(t, "amd64", goProgram)} {
		img := readELF(t, path)
		if img.arch != "amd64" {
			continue
		}
		total, fast, bad := 0, 0, 0
		for _, fn := range img.funcs {
			for off := 0; off < len(fn.code); {
				pc := fn.addr + uint64(off)
				slow := slowAMD64(fn.code[off:], pc)
				total++
				if in, ok := fastAMD64(fn.code[off:], pc); ok {
					fast++
					if in != slow {
						if bad++; bad <= 10 {
							t.Errorf("%s+%#x: % x: fast %+v, x86asm %+v", fn.name, off, fn.code[off:off+slow.n], in, slow)
						}
					}
				}
				off += stepAMD64(fn.code[off:], pc).n
			}
		}
		t.Logf("%s: %d of %d instructions decoded without x86asm", path, fast, total)
		if fast < total/2 {
			t.Errorf("only %d of %d", fast, total)
		}
	}
}

// Every opcode of both maps the fast path knows, under the prefixes it
// accepts, with every ModRM byte and the SIB bytes that change a length:
// the fuzzer finds its way to few of these.
func TestX86FastExhaustive(t *testing.T) {
	const pc = 0x401000
	tail := []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc}
	prefixes := [][]byte{{}, {0x66}, {0x40}, {0x41}, {0x48}, {0x4c}, {0x4f}, {0x66, 0x48}, {0x66, 0x41}, {0x2e}, {0x3e}, {0x64, 0x48}, {0x66, 0x66, 0x2e}}
	checked, bad := 0, 0
	buf := make([]byte, 0, 32)
	try := func(code []byte) {
		fast, ok := fastAMD64(code, pc)
		if !ok {
			return
		}
		checked++
		if slow := slowAMD64(code, pc); fast != slow {
			if bad++; bad <= 10 {
				t.Errorf("% x: fast %+v, x86asm %+v", code[:max(fast.n, slow.n)], fast, slow)
			}
		}
	}
	for _, p := range prefixes {
		for _, two := range []bool{false, true} {
			for op := 0; op < 256; op++ {
				tbl := &x86One
				if two {
					tbl = &x86Two
				}
				if tbl[op]&fOK == 0 {
					continue
				}
				head := append(append([]byte(nil), p...), byte(op))
				if two {
					head = append(append([]byte(nil), p...), 0x0f, byte(op))
				}
				if tbl[op]&fM == 0 {
					try(append(append(buf[:0], head...), tail...))
					continue
				}
				for m := 0; m < 256; m++ {
					if m>>6 != 3 && m&7 == 4 {
						for _, sib := range []byte{0x00, 0x05, 0x25, 0xe4, 0xfd} {
							try(append(append(append(buf[:0], head...), byte(m), sib), tail...))
						}
						continue
					}
					try(append(append(append(buf[:0], head...), byte(m)), tail...))
				}
			}
		}
	}
	t.Logf("%d encodings compared", checked)
	if bad > 0 {
		t.Errorf("%d of %d differ", bad, checked)
	}
}
