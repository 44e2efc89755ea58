package symbol

import (
	"bytes"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

//go:noinline
func codeProbe(x int) int { return x*7 + 3 }

// TestFuncCodeSelf reads this test binary's own functions: the bounds and
// name from its symbol table agree with the Go runtime's, and the bytes are
// those the process runs (a non-PIE Go binary runs at its link addresses).
func TestFuncCodeSelf(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenCode(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Arch != runtime.GOARCH {
		t.Errorf("arch %q, want %q", c.Arch, runtime.GOARCH)
	}
	pc := reflect.ValueOf(codeProbe).Pointer()
	fn := runtime.FuncForPC(pc)
	fc, ok := c.Func(uint64(pc) + 1)
	if !ok {
		t.Fatalf("no function at %#x (%s)", pc, fn.Name())
	}
	if fc.Start != uint64(fn.Entry()) || fc.Name != fn.Name() {
		t.Errorf("function at %#x: %s at %#x, want %s at %#x", pc, fc.Name, fc.Start, fn.Name(), fn.Entry())
	}
	if len(fc.Code) == 0 || len(fc.Code) > 4096 {
		t.Fatalf("%d bytes of code", len(fc.Code))
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	running := make([]byte, len(fc.Code))
	if _, err := mem.ReadAt(running, int64(pc)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fc.Code, running) {
		t.Errorf("the code read from the file differs from the code running:\n%x\n%x", fc.Code, running)
	}
	if starts := c.Starts(); len(starts) < 1000 {
		t.Errorf("only %d sized functions in a Go test binary", len(starts))
	}
	if _, ok := c.Func(0x10); ok {
		t.Error("a function at address 0x10")
	}
}

// TestFuncCodeLibc reads every sized function of the C library: each one's
// bytes are there, and a well-known one is found by an address inside it.
func TestFuncCodeLibc(t *testing.T) {
	var path string
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no libc.so.6 found")
	}
	c, err := OpenCode(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	starts := c.Starts()
	var bytes, found int
	for _, s := range starts {
		fc, ok := c.Func(s)
		if !ok {
			t.Fatalf("function at %#x unreadable", s)
		}
		bytes += len(fc.Code)
		if strings.HasPrefix(fc.Name, "qsort") {
			found++
			if mid, ok := c.Func(s + uint64(len(fc.Code))/2); !ok || mid.Start != s {
				t.Errorf("an address inside %s is not in it", fc.Name)
			}
		}
	}
	t.Logf("%s: %d functions, %d bytes of code", path, len(starts), bytes)
	// libc calls its own exported functions through its PLT (the
	// __stack_chk_fail of its string functions, malloc from qsort...): the
	// stubs are named.
	plt := 0
	for _, s := range c.plt {
		if strings.HasSuffix(c.NameAt(s.start), "@plt") {
			plt++
		}
	}
	if plt == 0 {
		t.Error("no PLT stub named in libc")
	}
	if len(starts) < 1000 || found == 0 {
		t.Errorf("%d functions, qsort among them %d times", len(starts), found)
	}
}

// FuzzCodeFile reads the function bounds of arbitrary bytes and the code of
// every function found: nothing may panic, and no function's code may
// exceed the input.
func FuzzCodeFile(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := newCodeFile(bytes.NewReader(data), int64(len(data)), "", nil)
		if err != nil {
			return
		}
		for i, s := range c.Starts() {
			if i > 256 {
				break
			}
			if fc, ok := c.Func(s); ok && len(fc.Code) > len(data) {
				t.Fatalf("%d bytes of code from %d bytes of input", len(fc.Code), len(data))
			}
		}
	})
}
