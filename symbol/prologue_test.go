package symbol

import "testing"

func TestStubFrame(t *testing.T) {
	// CPython 3.12's perf trampoline, as copied into memory.
	tramp := []byte{0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3}
	cet := append([]byte{0xf3, 0x0f, 0x1e, 0xfa}, tramp...)
	pushes := []byte{0x55, 0x41, 0x54, 0x53, 0x48, 0x81, 0xec, 0x00, 0x01, 0x00, 0x00, 0xe8, 1, 2, 3, 4, 0xc3}
	withFP := []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xfb, 0xff, 0x53, 0x10, 0xc3}
	for _, c := range []struct {
		name  string
		code  []byte
		pc    int
		exact bool
		want  stub
		ok    bool
	}{
		{"trampoline, return address after call *%rcx", tramp, 6, false, stub{frame: 8}, true},
		{"trampoline with endbr64", cet, 10, false, stub{frame: 8}, true},
		{"trampoline, at its entry", tramp, 0, true, stub{}, true},
		{"trampoline, after the sub", tramp, 4, true, stub{frame: 8}, true},
		{"trampoline, on the add after the call", tramp, 6, true, stub{}, false},
		{"return address not after a call", tramp, 5, false, stub{}, false},
		{"pushes and sub $imm32", pushes, 16, false, stub{frame: 24 + 256, rbp: 256 + 16, savedRBP: true}, true},
		{"frame pointer set", withFP, 10, false, stub{frame: 8, rbp: 0, savedRBP: true, fp: true}, true},
		{"sub with a negative imm8", []byte{0x48, 0x83, 0xec, 0xf8, 0xff, 0xd1}, 6, false, stub{}, false},
		{"unknown instruction before the call", []byte{0x48, 0x8b, 0x07, 0xff, 0xd1}, 5, false, stub{}, false},
		{"pc past the code", tramp, 40, false, stub{}, false},
	} {
		got, ok := stubFrame(c.code, c.pc, c.exact)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestFindSetup(t *testing.T) {
	// V8's Builtins_InterpreterEntryTrampoline: checks, then the frame.
	code := []byte{0x4c, 0x8b, 0x57, 0x17, 0x0f, 0x85, 0x1c, 0, 0, 0, 0x55, 0x48, 0x89, 0xe5, 0x6a, 0x2c}
	if got := findSetup(code); got != 10 {
		t.Errorf("setup at %d, want 10", got)
	}
	if got := findSetup([]byte{0x55, 0x48, 0x8b, 0xec}); got != 0 {
		t.Errorf("48 8b ec form: %d", got)
	}
	if got := findSetup([]byte{0x55, 0x48, 0x89, 0xe6, 0x55, 0x48}); got != noSetup {
		t.Errorf("no setup: %d", got)
	}
}

func TestCallAt(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0xe8, 1, 2, 3, 4}, true},
		{[]byte{0xff, 0xd1}, true},                   // call *%rcx
		{[]byte{0x41, 0xff, 0xd3}, true},             // call *%r11
		{[]byte{0xff, 0x53, 0x10}, true},             // call *0x10(%rbx)
		{[]byte{0x3e, 0xff, 0xd0}, true},             // notrack call *%rax
		{[]byte{0xff, 0xe1}, false},                  // jmp *%rcx
		{[]byte{0xe8, 1, 2, 3}, false},               // short
		{[]byte{0xff, 0x53, 0x10, 0x90}, false},      // one byte too many
		{[]byte{0xe9, 1, 2, 3, 4}, false},            // jmp rel32
		{[]byte{0xff, 0x14, 0x25, 1, 2, 3, 4}, true}, // call *abs32 (SIB, no base)
	} {
		if got := callAt(c.code); got != c.want {
			t.Errorf("callAt(% x) = %v", c.code, got)
		}
	}
}

func TestMovRegReg(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0x48, 0x89, 0xfb}, true},  // mov %rdi,%rbx
		{[]byte{0x48, 0x8b, 0xfa}, true},  // mov %rdx,%rdi
		{[]byte{0x48, 0x89, 0xe5}, false}, // mov %rsp,%rbp: sets rbp
		{[]byte{0x48, 0x89, 0xc4}, false}, // mov %rax,%rsp
		{[]byte{0x49, 0x89, 0xe2}, true},  // mov %rsp,%r10
		{[]byte{0x48, 0x8b, 0x07}, false}, // a load
	} {
		if got := movRegReg(c.code); got != c.want {
			t.Errorf("movRegReg(% x) = %v", c.code, got)
		}
	}
}

// FuzzStubFrame: a stub's bytes are the target's memory, outside data.
func FuzzStubFrame(f *testing.F) {
	f.Add([]byte{0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3}, 6, false)
	f.Add([]byte{0x55, 0x41, 0x54, 0x48, 0x81, 0xec, 0, 1, 0, 0, 0xe8, 1, 2, 3, 4}, 15, false)
	f.Add([]byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55}, 5, true)
	f.Fuzz(func(t *testing.T, code []byte, pc int, exact bool) {
		s, ok := stubFrame(code, pc, exact)
		if ok && (pc < 0 || pc > len(code) || s.savedRBP && s.rbp > s.frame) {
			t.Fatalf("stubFrame(% x, %d, %v) = %+v", code, pc, exact, s)
		}
		findSetup(code)
		callAt(code)
	})
}
