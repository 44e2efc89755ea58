package symbol

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pltBuilds are the ways testdata/src/plt.c is built for the PLT tests,
// and the stub sections each must have (what ld 2.40 does with them).
var pltBuilds = []struct {
	name     string
	flags    []string
	sections []string
}{
	{"lazy", nil, []string{".plt"}},
	{"now", []string{"-Wl,-z,now"}, []string{".plt"}},
	// Debian's gcc passes -fcf-protection by default, but its crt files
	// are not IBT-marked, so ld keeps the plain layout without -z ibtplt.
	{"cf-protection", []string{"-fcf-protection=full"}, []string{".plt"}},
	{"ibt", []string{"-fcf-protection=full", "-Wl,-z,ibtplt"}, []string{".plt", ".plt.sec", ".plt.got"}},
	{"ibt-now", []string{"-fcf-protection=full", "-Wl,-z,ibtplt", "-Wl,-z,now"}, []string{".plt", ".plt.sec", ".plt.got"}},
	{"no-plt", []string{"-fno-plt"}, []string{".plt.got"}},
	{"no-pie", []string{"-no-pie"}, []string{".plt"}},
	{"shared", []string{"-shared", "-fPIC"}, []string{".plt"}},
	{"shared-ibt", []string{"-shared", "-fPIC", "-fcf-protection=full", "-Wl,-z,ibtplt"}, []string{".plt.sec"}},
}

// TestPLTNames builds testdata/src/plt.c in every layout and checks that
// each byte of each stub is named as objdump labels it ("memcpy@plt"),
// that the header is ".plt", and that main's memcpy really goes through a
// stub (the hot loops of the end-to-end test rely on it).
func TestPLTNames(t *testing.T) {
	needTool(t, "gcc")
	needTool(t, "objdump")
	dir := t.TempDir()
	copySource(t, dir, "plt.c", "plt.c")
	for _, b := range pltBuilds {
		t.Run(b.name, func(t *testing.T) {
			out := filepath.Join(dir, b.name)
			run(t, dir, nil, "gcc", append([]string{"-O2", "-o", out, "plt.c"}, b.flags...)...)
			f, err := elf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, s := range b.sections {
				if f.Section(s) == nil {
					t.Fatalf("no %s section", s)
				}
			}
			stubs := checkStubs(t, out)
			if b.name == "no-plt" {
				if stubs["memcpy@plt"] {
					t.Error("-fno-plt still calls memcpy through a stub")
				}
				return
			}
			if !stubs["memcpy@plt"] {
				t.Fatalf("no memcpy@plt stub: %v", stubs)
			}
			dis, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "-j", ".text", out).Output()
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`(call|jmp) +[0-9a-f]+ <memcpy@plt>`).Match(dis) {
				t.Error("memcpy is not called through its stub")
			}
		})
	}
}

// TestPLTSystemLibraries checks the stubs of the system's libc (IFUNC
// stubs, which objdump labels *ABS*+0xADDR@plt), libstdc++ (mangled
// names) and libpython (the stubs that took 2-7% of Python's self time),
// where installed.
func TestPLTSystemLibraries(t *testing.T) {
	needTool(t, "objdump")
	found := 0
	for _, name := range []string{"libc.so.6", "libstdc++.so.6", "libpython3.11.so.1.0", "libpython3.12.so.1.0"} {
		for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64"} {
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				continue
			}
			found++
			t.Run(name, func(t *testing.T) {
				stubs := checkStubs(t, realPath(t, path))
				if len(stubs) < 10 {
					t.Errorf("only %d stubs named", len(stubs))
				}
			})
			break
		}
	}
	if found == 0 {
		t.Skip("none of the libraries is installed")
	}
}

// pltLabel is a stub as objdump labels it.
type pltLabel struct {
	name      string
	addr, end uint64
}

// objdumpStubs lists the labels of the stub sections of path, from
// objdump -d, which names stubs with its own reading of the relocations.
func objdumpStubs(t *testing.T, path string) []pltLabel {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args := []string{"-d", "--no-show-raw-insn"}
	for _, s := range []string{".plt", ".plt.sec", ".plt.got"} {
		if f.Section(s) != nil {
			args = append(args, "-j", s)
		}
	}
	out, err := exec.Command("objdump", append(args, path)...).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	label := regexp.MustCompile(`^([0-9a-f]+) <(.+)>:$`)
	var labels []pltLabel
	var sec *elf.Section
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "Disassembly of section "); ok {
			sec = f.Section(strings.TrimSuffix(name, ":"))
			continue
		}
		m := label.FindStringSubmatch(line)
		if m == nil || sec == nil {
			continue
		}
		a, _ := strconv.ParseUint(m[1], 16, 64)
		if n := len(labels); n > 0 && labels[n-1].end > a {
			labels[n-1].end = a
		}
		name := m[2]
		if sec.Name == ".plt" && a == sec.Addr && strings.Contains(name, "@plt-0x") {
			// The header, which objdump labels by the stub after it
			// and perf as the section: ".plt".
			name = ".plt"
		}
		labels = append(labels, pltLabel{name: name, addr: a, end: sec.Addr + sec.Size})
	}
	return labels
}

// checkStubs resolves every byte of every stub objdump labels in path and
// returns the names found.
func checkStubs(t *testing.T, path string) map[string]bool {
	t.Helper()
	labels := objdumpStubs(t, path)
	if len(labels) == 0 {
		t.Fatalf("objdump labels no stubs in %s", path)
	}
	mod := fileModule(t, path)
	ifuncs := ifuncSymbols(t, path)
	names := map[string]bool{}
	for _, l := range labels {
		for a := l.addr; a < l.end; a++ {
			fs := mod.frames(a, path, nil)
			got := fs[0].Func
			ok := len(fs) == 1 && got == l.name && !fs[0].Unnamed
			if target, isABS := strings.CutPrefix(l.name, "*ABS*+0x"); isABS {
				v, _ := strconv.ParseUint(strings.TrimSuffix(target, "@plt"), 16, 64)
				ok = len(fs) == 1 && slices.Contains(ifuncs[v], strings.TrimSuffix(got, "@plt")) && strings.HasSuffix(got, "@plt")
			}
			if !ok {
				t.Errorf("%s: %#x in <%s>: %s", filepath.Base(path), a, l.name, chainString(fs))
				break
			}
			names[got] = true
		}
	}
	t.Logf("%s: %d stubs, %d names", filepath.Base(path), len(labels), len(names))
	return names
}

// ifuncSymbols maps addresses to the names of the IFUNC symbols there.
func ifuncSymbols(t *testing.T, path string) map[uint64][]string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	m := map[uint64][]string{}
	for _, s := range append(syms, dyn...) {
		if elf.ST_TYPE(s.Info) == elf.STT_GNU_IFUNC {
			m[s.Value] = append(m[s.Value], s.Name)
		}
	}
	return m
}
