package flow

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// libcPath finds the C library this machine's programs run with.
func libcPath(t testing.TB) string {
	for _, p := range []string{
		"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/lib64/libc.so.6", "/usr/lib64/libc.so.6",
		"/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6",
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no libc.so.6 found")
	return ""
}

// survey decodes every function of img, fails on any CFG that breaks what
// Decode promises, and logs how many are conservative and why.
func survey(t *testing.T, what string, img *elfImage) (n, conservative int, why map[string]int) {
	t.Helper()
	why = map[string]int{}
	noReturn := img.noReturn()
	blocks, calls, bad := 0, 0, 0
	for _, fn := range img.funcs {
		g := Decode(img.arch, fn.code, fn.addr, noReturn)
		n++
		if err := consistent(g, img.arch, fn.code); err != nil {
			bad++
			if bad <= 5 {
				t.Errorf("%s %s: %v\n%s", what, fn.name, err, dump(g))
			}
		}
		if g.Conservative {
			conservative++
			why[whyKind(g.Why)]++
			continue
		}
		blocks += len(g.Blocks)
		for _, b := range g.Blocks {
			calls += len(b.Calls)
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d CFGs inconsistent", what, bad, n)
	}
	t.Logf("%s (%s): %d functions, %d conservative (%.1f%%): %s; the others have %d blocks, %d call sites",
		what, img.arch, n, conservative, 100*float64(conservative)/float64(max(n, 1)), histogram(why), blocks, calls)
	return n, conservative, why
}

func histogram(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	var s []string
	for _, k := range keys {
		s = append(s, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(s, ", ")
}

func TestDecodeLibc(t *testing.T) {
	img := readELF(t, libcPath(t))
	n, cons, _ := survey(t, "libc", img)
	if n < 1000 {
		t.Errorf("only %d functions in libc", n)
	}
	// Most of libc is compiled C that a linear sweep follows; a decoder
	// that got lengths wrong would make most functions jump into
	// instructions or fall off their ends.
	if cons > n/2 {
		t.Errorf("%d of %d conservative", cons, n)
	}
}

// goProgram is a Go program to decode: bounds checks, calls into the
// standard library, and enough of it (json, regexp) to be a few thousand
// functions.
const goProgram = `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
)

//go:noinline
func pick(s []string, i int) string { return s[i] + s[i+2] }

func main() {
	s := os.Args
	sort.Strings(s)
	fmt.Println(pick(s, len(s)/2))
	b, _ := json.Marshal(s)
	fmt.Println(regexp.MustCompile("a+").Match(b))
}
`

func TestDecodeGoAMD64(t *testing.T) { testDecodeGo(t, "amd64") }

// A Go program cross-compiled for arm64 gives real arm64 code to decode,
// without running it.
func TestDecodeGoARM64(t *testing.T) { testDecodeGo(t, "arm64") }

func testDecodeGo(t *testing.T, goarch string) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	img := readELF(t, buildGo(t, goarch, goProgram))
	n, cons, _ := survey(t, "a Go program", img)
	if n < 1000 || cons > n/10 {
		t.Errorf("%d of %d conservative", cons, n)
	}

	g := decodeNamed(t, img, "main.main")
	if g.Conservative {
		t.Fatalf("main.main: %s", dump(g))
	}
	var targets []string
	for _, b := range g.Blocks {
		for _, c := range b.Calls {
			targets = append(targets, img.names[c.Target])
		}
	}
	for _, want := range []string{"sort.Strings", "main.pick", "encoding/json.Marshal", "runtime.morestack_noctxt"} {
		if !slices.ContainsFunc(targets, func(s string) bool { return strings.TrimSuffix(s, ".abi0") == want }) {
			t.Errorf("main.main calls %v, not %s:\n%s", targets, want, dump(g))
		}
	}

	// The bounds checks call runtime.panicBounds at the end of the
	// function; the calls must end blocks, not fall into the padding.
	g = decodeNamed(t, img, "main.pick")
	if g.Conservative {
		t.Fatalf("main.pick: %s", dump(g))
	}
	panics := 0
	for _, b := range g.Blocks {
		for _, c := range b.Calls {
			if strings.HasPrefix(img.names[c.Target], "runtime.panic") {
				panics++
				if !b.Exit || len(b.Succs) != 0 || b.End != c.Ret || b.Unreached {
					t.Errorf("call to %s does not end its block:\n%s", img.names[c.Target], dump(g))
				}
			}
		}
	}
	if panics == 0 {
		t.Errorf("no bounds check panics in main.pick:\n%s", dump(g))
	}
}

func decodeNamed(t *testing.T, img *elfImage, name string) *CFG {
	t.Helper()
	fn := img.find(t, name)
	return Decode(img.arch, fn.code, fn.addr, img.noReturn())
}

// buildGo builds a one-file Go program for goarch in a temporary
// directory and returns the executable's path.
func buildGo(t testing.TB, goarch, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOARCH="+goarch, "GOOS=linux", "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// The sweep's instruction lengths are x86asm's; GNU objdump is a second
// opinion. Every instruction start the sweep finds in a function, up to
// bytes it does not decode, must be one objdump finds: x86asm v0.33.0
// took vzeroupper for 5 bytes, which threw the sweep off in Go's and
// glibc's AVX2 loops.
func TestX86SweepAgreesWithObjdump(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("no objdump")
	}
	if testing.Short() {
		t.Skip("disassembles libc")
	}
	paths := []string{libcPath(t), buildGo(t, "amd64", goProgram)}
	for _, path := range paths {
		img := readELF(t, path)
		if img.arch != "amd64" {
			continue
		}
		starts := objdumpStarts(t, path)
		checked, bad := 0, 0
		for _, fn := range img.funcs {
			for off := 0; off < len(fn.code); {
				pc := fn.addr + uint64(off)
				in := stepAMD64(fn.code[off:], pc)
				if in.kind == kBad {
					break
				}
				checked++
				if !starts[pc] {
					if bad++; bad <= 5 {
						t.Errorf("%s: %s+%#x: %#x is no instruction start for objdump", filepath.Base(path), fn.name, off, pc)
					}
					break
				}
				off += in.n
			}
		}
		t.Logf("%s: %d instructions agree with objdump's, %d functions do not", filepath.Base(path), checked, bad)
		if checked < 10000 {
			t.Errorf("only %d instructions compared", checked)
		}
	}
}

// objdumpStarts is the addresses where objdump -d sees an instruction.
func objdumpStarts(t *testing.T, path string) map[uint64]bool {
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "-w", path).Output()
	if err != nil {
		t.Fatalf("objdump %s: %v", path, err)
	}
	starts := map[uint64]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		// "  401000:\tpush   %rbp"
		i := strings.IndexByte(l, ':')
		if !strings.HasPrefix(l, " ") || i < 0 {
			continue
		}
		if a, err := strconv.ParseUint(strings.TrimSpace(l[:i]), 16, 64); err == nil {
			starts[a] = true
		}
	}
	return starts
}
