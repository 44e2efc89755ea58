package symbol

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// inlineTargetSrc is a program in which leaf is inlined into mid and mid
// into outer. When leaf runs with 12345, it has record print what the
// runtime sees: the pc inside the inlined body (a return pc from
// runtime.Callers) and the logical frames CallersFrames expands it to, up
// to the first physical one. It also prints the entry of outer, to
// subtract the load bias of a PIE.
const inlineTargetSrc = `package main

import (
	"fmt"
	"reflect"
	"runtime"
)

var sink int

func leaf(x int) int {
	if x == 12345 {
		record()
	}
	return x*3 + 1
}

func mid(x int) int {
	return leaf(x) * 2
}

//go:noinline
func record() {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(2, pcs)
	fmt.Printf("pc %#x\n", pcs[0])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		fmt.Printf("frame %s %s %d %v\n", f.Function, f.File, f.Line, f.Func == nil)
		if !more || f.Func != nil {
			break
		}
	}
}

//go:noinline
func outer(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += mid(i)
	}
	return s
}

func main() {
	fmt.Printf("outer %#x\n", reflect.ValueOf(outer).Pointer())
	sink = outer(20000)
}
`

// inlineTarget is one build of inlineTargetSrc and what it printed.
type inlineTarget struct {
	name, path string
	pc, outer  uint64  // runtime addresses
	want       []Frame // the runtime's view of pc-1, innermost first
}

// buildInlineTargets builds inlineTargetSrc plainly, stripped, and as a
// stripped PIE, after checking that the compiler inlines what the test
// relies on, and runs each build. toolchain, if not "", is a GOTOOLCHAIN
// to build with instead of the go command running the test.
func buildInlineTargets(t *testing.T, toolchain string) (dir string, targets []inlineTarget) {
	t.Helper()
	gobin := goTool(t)
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(inlineTargetSrc), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/inl\n\ngo 1.20\n"), 0o644)
	env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
	if toolchain != "" {
		env = append(env, "GOTOOLCHAIN="+toolchain)
	}

	cmd := exec.Command(gobin, "build", "-gcflags=-m", "-o", filepath.Join(dir, "m"))
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, want := range []string{"inlining call to leaf", "inlining call to mid"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Fatalf("the compiler did not report %q:\n%s", want, out)
		}
	}

	for _, b := range []struct {
		name  string
		flags []string
	}{
		{"default", nil},
		{"stripped", []string{"-ldflags=-s -w"}},
		{"pie-stripped", []string{"-buildmode=pie", "-ldflags=-s -w"}},
	} {
		run(t, dir, env, gobin, append([]string{"build", "-o", b.name}, b.flags...)...)
		tg := inlineTarget{name: b.name, path: filepath.Join(dir, b.name)}
		out, err := exec.Command(tg.path).Output()
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 2 && f[0] == "pc":
				tg.pc, _ = strconv.ParseUint(f[1], 0, 64)
			case len(f) == 2 && f[0] == "outer":
				tg.outer, _ = strconv.ParseUint(f[1], 0, 64)
			case len(f) == 5 && f[0] == "frame":
				line, _ := strconv.Atoi(f[3])
				tg.want = append(tg.want, Frame{Func: f[1], File: f[2], Line: line, Inlined: f[4] == "true"})
			}
		}
		if tg.pc == 0 || tg.outer == 0 || len(tg.want) != 3 {
			t.Fatalf("%s printed:\n%s", b.name, out)
		}
		targets = append(targets, tg)
	}
	return dir, targets
}

// openGoTable loads the Go table of the binary at path as loadELF does.
func openGoTable(t testing.TB, path string) *goTable {
	t.Helper()
	g, err := loadGoTable(path)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// loadGoTable reads path's Go table as the resolver does: mapped from the
// file where the system can.
func loadGoTable(path string) (*goTable, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	f, err := elf.NewFile(file)
	if err != nil {
		return nil, err
	}
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	syms, _ := f.Symbols()
	g := newGoTable(f, file, syms, loadSegments(f.Progs), st.Size())
	if g == nil || g.tab == nil {
		return nil, fmt.Errorf("%s: no Go 1.18+ table", path)
	}
	return g, nil
}

// TestGoInline checks the inline chain at a pc in the body of leaf,
// inlined into mid, inlined into outer, against the runtime's own
// expansion of that pc, in a plain, a stripped and a stripped PIE build:
// [leaf (inlined) at its line, mid (inlined) at its call of leaf, outer at
// its call of mid].
func TestGoInline(t *testing.T) {
	testGoInline(t, "")
}

// TestGoInlineToolchains runs TestGoInline's checks on builds by the
// toolchains listed in $CCTOP_GO_TOOLCHAINS (say "go1.20.14 go1.22.12"),
// which the go command downloads: moduledata and go:func.* moved between
// releases.
func TestGoInlineToolchains(t *testing.T) {
	list := strings.Fields(os.Getenv("CCTOP_GO_TOOLCHAINS"))
	if len(list) == 0 {
		t.Skip("CCTOP_GO_TOOLCHAINS not set")
	}
	for _, tc := range list {
		t.Run(tc, func(t *testing.T) { testGoInline(t, tc) })
	}
}

func testGoInline(t *testing.T, toolchain string) {
	dir, targets := buildInlineTargets(t, toolchain)
	src := filepath.Join(dir, "main.go")
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			// The runtime agrees with the source: the two inlined
			// functions, then outer, all in main.go.
			wantFuncs := []string{"main.leaf", "main.mid", "main.outer"}
			for i, f := range tg.want {
				if f.Func != wantFuncs[i] || f.File != src || f.Inlined != (i < 2) {
					t.Fatalf("the runtime sees %+v; the test program no longer inlines as expected", tg.want)
				}
			}
			g := openGoTable(t, tg.path)
			if g.tab.gofunc == nil {
				t.Fatal("go:func.* not found")
			}
			entry, ok := g.lookupFunc("main.outer")
			if !ok {
				t.Fatal("main.outer not found")
			}
			bias := tg.outer - entry
			if tg.name != "pie-stripped" && bias != 0 {
				t.Fatalf("bias %#x in an executable", bias)
			}
			// Callers returns return pcs; the call is at pc-1, which is
			// also what CallersFrames looked up.
			got, ok := g.frames(tg.pc-bias-1, nil)
			if !ok || !reflect.DeepEqual(got, tg.want) {
				t.Errorf("frames(%#x) = %+v, %v\nwant %+v", tg.pc-bias-1, got, ok, tg.want)
			}
		})
	}
}

// TestGoFuncAddr checks that the stripped binary's way to go:func.*, the
// runtime's moduledata.gofunc, finds the address the symbol table gives.
func TestGoFuncAddr(t *testing.T) {
	for _, path := range inlineUnstripped(t) {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, _ := f.Symbols()
		var want uint64
		for _, s := range syms {
			if s.Name == "go:func.*" {
				want = s.Value
			}
		}
		if want == 0 {
			t.Fatalf("%s: no go:func.* symbol", path)
		}
		data, pcln, _ := pclntabData(f, nil, syms, 1<<40)
		if len(data) < 16 {
			t.Fatalf("%s: no pclntab", path)
		}
		got, ok := goFuncAddr(f, nil, data, pcln, uint64(data[7]), 1<<40)
		if !ok || got != want {
			t.Errorf("%s: goFuncAddr without symbols = %#x, %v; go:func.* is %#x", path, got, ok, want)
		}
	}
}

// inlineUnstripped builds the inline target with its symbol table, as an
// executable and as a PIE, whose moduledata the file leaves to relocations.
func inlineUnstripped(t *testing.T) []string {
	t.Helper()
	gobin := goTool(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(inlineTargetSrc), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/inl\n\ngo 1.20\n"), 0o644)
	env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
	run(t, dir, env, gobin, "build", "-o", "exe")
	run(t, dir, env, gobin, "build", "-buildmode=pie", "-o", "pie")
	return []string{filepath.Join(dir, "exe"), filepath.Join(dir, "pie")}
}

// selfExe returns the path of the running test binary.
func selfExe(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	return p
}

// TestGoFramesMatchRuntime compares, over pcs spread across this test
// binary's whole text, the frames goTable gives with what the runtime's
// CallersFrames expands the same pc to: every logical frame's function,
// file, line, and whether it is inlined.
func TestGoFramesMatchRuntime(t *testing.T) {
	g := openGoTable(t, selfExe(t))
	entry, ok := g.lookupFunc("github.com/cctop/cctop/symbol.TestGoFramesMatchRuntime")
	if !ok {
		t.Fatal("this test's function not found")
	}
	bias := uint64(reflect.ValueOf(TestGoFramesMatchRuntime).Pointer()) - entry
	tab := g.tab
	step := uint32(1)
	if text := tab.entryOff(tab.nfunc) - tab.entryOff(0); text/step > 300_000 {
		step = text/300_000 | 1
	}
	var checked, inlined, errors int
	wrapperID := funcIDOf(t, tab, ".deferwrap")
	var got []Frame
	for off := tab.entryOff(0); off < tab.entryOff(tab.nfunc); off += step {
		pc := tab.text + uint64(off)
		got, ok = g.frames(pc, got[:0])
		want := runtimeFrames(uintptr(pc + bias))
		if !ok {
			t.Errorf("frames(%#x) failed; runtime says %+v", pc, want)
			continue
		}
		if want == nil {
			continue
		}
		if f, ok := tab.findFunc(pc + 1); ok && f.entry == pc+1 {
			// CallersFrames does not back a return pc out of the
			// function it starts: pc+1 would name the next function.
			continue
		}
		for i := range got {
			got[i].Func = funcNameForPrint(got[i].Func)
		}
		if n := len(want); len(got) == n+1 && isWrapper(tab, pc, wrapperID) && n > 0 && want[n-1].Inlined {
			// The runtime hides the wrapper a method or a deferred
			// call was inlined into; a profile shows it.
			got = got[:n]
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("frames(%#x) = %+v\nruntime says %+v", pc, got, want)
			if errors++; errors > 20 {
				t.FailNow()
			}
		}
		checked++
		if len(got) > 1 {
			inlined++
		}
	}
	t.Logf("%d pcs, %d of them in inlined code", checked, inlined)
	if inlined < checked/100 {
		t.Errorf("only %d of %d pcs in inlined code", inlined, checked)
	}
}

// runtimeFrames expands pc with CallersFrames. It is given pc+1 as a
// return pc, and a second, invalid pc: with nothing after it,
// CallersFrames would stop at the innermost frame instead of expanding
// the inlined callers.
func runtimeFrames(pc uintptr) []Frame {
	if f := runtime.FuncForPC(pc); f == nil || f.Name() == "" {
		// The runtime reads name offset 0 as no name, and so does
		// not name the first function of the table.
		return nil
	}
	var out []Frame
	fr := runtime.CallersFrames([]uintptr{pc + 1, 1})
	for {
		f, more := fr.Next()
		if f.Function != "" {
			if f.File == "?" { // unknown, as the runtime spells it
				f.File = ""
			}
			out = append(out, Frame{Func: f.Function, File: f.File, Line: f.Line, Inlined: f.Func == nil})
		}
		if !more || f.Func != nil {
			return out
		}
	}
}

// isWrapper reports whether the function at pc is compiler-generated,
// funcID FuncIDWrapper, which the runtime leaves out of tracebacks.
func isWrapper(tab *pclntab, pc uint64, wrapperID uint8) bool {
	f, ok := tab.findFunc(pc)
	return ok && f.rec[f.hdr-4] == wrapperID
}

// funcIDOf returns the funcID (the byte before the flags) of the first
// function whose name contains sub. FuncIDWrapper, the one this test
// needs, is the last of a list that grows between Go releases, so the
// test takes it from a function known to be a wrapper: the closures the
// compiler makes for defer f(args).
func funcIDOf(t *testing.T, tab *pclntab, sub string) uint8 {
	t.Helper()
	for i := 0; i < tab.nfunc; i++ {
		f, ok := tab.findFunc(tab.text + uint64(tab.entryOff(i)))
		if !ok {
			continue
		}
		if name, _ := tab.funcName(tab.nameOff(f)); strings.Contains(name, sub) {
			return f.rec[f.hdr-4]
		}
	}
	t.Fatalf("no function named *%s*", sub)
	return 0
}

// funcNameForPrint shortens generic instantiations as the runtime does for
// display: F[go.shape.int] is F[...].
func funcNameForPrint(name string) string {
	i := strings.IndexByte(name, '[')
	if i < 0 {
		return name
	}
	j := strings.LastIndexByte(name, ']')
	if j <= i {
		return name
	}
	return name[:i] + "[...]" + name[j+1:]
}
