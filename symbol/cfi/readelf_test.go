package cfi

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The cross-check: readelf --debug-dump=frames-interp prints, for every
// FDE, the table of rules by address. Every row's address, and the last
// address before the next row, must get the same CFA and the same rules for
// the tracked registers from Table.Rule.

// refFDE is one FDE of readelf's output.
type refFDE struct {
	begin, end uint64
	cie        string   // offset of its CIE, as readelf prints it
	inherited  bool     // no instructions of its own: rows are the CIE's
	cols       []string // column names after LOC: CFA, rbx, ..., ra
	rows       []refRow
}

type refRow struct {
	loc   uint64
	cells []string
}

// refSection is the readelf output for one CFI section.
type refSection struct {
	name string // ".eh_frame" or ".debug_frame"
	fdes []refFDE
	cies map[string]*refFDE // by offset
}

func lookTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

// readelfFrames runs readelf on path and parses its interpreted tables.
func readelfFrames(t testing.TB, path string) []refSection {
	t.Helper()
	cmd := exec.Command(lookTool(t, "readelf"), "--debug-dump=frames-interp", "-W", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// readelf exits 1 over unrelated complaints ("Unable to find program
	// interpreter name" for libc) after printing the frames in full.
	if err != nil && !bytes.Contains(out, []byte("Contents of the ")) {
		t.Fatalf("readelf %s: %v\n%s", path, err, stderr.Bytes())
	}
	return parseReadelf(t, out)
}

func parseReadelf(t testing.TB, out []byte) []refSection {
	t.Helper()
	var secs []refSection
	var cur *refFDE // FDE or CIE whose table is being read
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := joinRegNames(strings.Fields(line))
		switch {
		case strings.HasPrefix(line, "Contents of the "):
			name := strings.Fields(strings.TrimPrefix(line, "Contents of the "))[0]
			secs = append(secs, refSection{name: name, cies: map[string]*refFDE{}})
			cur = nil
		case len(secs) > 0 && len(f) >= 4 && f[3] == "CIE":
			cur = new(refFDE)
			secs[len(secs)-1].cies[f[0]] = cur
		case len(secs) > 0 && len(f) >= 6 && f[3] == "FDE":
			var b, e uint64
			if _, err := fmt.Sscanf(f[5], "pc=%x..%x", &b, &e); err != nil {
				t.Fatalf("readelf FDE line %q: %v", line, err)
			}
			s := &secs[len(secs)-1]
			s.fdes = append(s.fdes, refFDE{begin: b, end: e, cie: strings.TrimPrefix(f[4], "cie=")})
			cur = &s.fdes[len(s.fdes)-1]
		case cur != nil && len(f) > 1 && f[0] == "LOC":
			cur.cols = f[1:]
		case cur != nil && cur.cols != nil && len(f) == len(cur.cols)+1:
			loc, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				continue
			}
			// Rows at the same address (an advance of 0): the last holds.
			if n := len(cur.rows); n > 0 && cur.rows[n-1].loc == loc {
				cur.rows = cur.rows[:n-1]
			}
			cur.rows = append(cur.rows, refRow{loc: loc, cells: f[1:]})
		}
	}
	// An FDE without instructions gets no table: the CIE's last row holds
	// over its whole range.
	for i := range secs {
		for j := range secs[i].fdes {
			inherit(&secs[i].fdes[j], secs[i].cies)
		}
	}
	return secs
}

func inherit(f *refFDE, cies map[string]*refFDE) {
	c := cies[f.cie]
	if f.rows != nil || c == nil || len(c.rows) == 0 {
		return
	}
	f.inherited = true
	f.cols = c.cols
	f.rows = []refRow{{loc: f.begin, cells: c.rows[len(c.rows)-1].cells}}
}

// joinRegNames turns readelf's "r2 (rcx)" register cells into "rcx".
func joinRegNames(f []string) []string {
	out := f[:0]
	for i := 0; i < len(f); i++ {
		if i+1 < len(f) && strings.HasPrefix(f[i+1], "(") && strings.HasSuffix(f[i+1], ")") && strings.HasPrefix(f[i], "r") {
			out = append(out, strings.Trim(f[i+1], "()"))
			i++
			continue
		}
		out = append(out, f[i])
	}
	return out
}

// tracked are readelf's names of the columns a Rule keeps.
var tracked = map[string]int{"rbx": RegRBX, "rbp": RegRBP, "r12": RegR12, "r13": RegR13, "r14": RegR14, "r15": RegR15, "ra": RegRA}

// cellOf renders a Loc the way readelf prints it.
func cellOf(l Loc) string {
	s := l.String()
	if s == "ra" {
		return "rip" // readelf names register 16 rip when it is a source
	}
	return s
}

// layout maps readelf's columns to registers, once per FDE.
type layout struct {
	reg   []int // per column: a tracked register, colCFA, or colOther
	shown [NumRegs]bool
}

const (
	colCFA   = -1
	colOther = -2
)

func layoutOf(cols []string) layout {
	var l layout
	for _, c := range cols {
		reg, ok := tracked[c]
		switch {
		case c == "CFA":
			reg = colCFA
		case !ok:
			reg = colOther
		default:
			l.shown[reg] = true
		}
		l.reg = append(l.reg, reg)
	}
	return l
}

// cfaCell renders a CFA rule the way readelf prints it.
func cfaCell(l Loc) string {
	switch l.Kind() {
	case InRegister:
		off := strconv.FormatInt(l.Offset(), 10)
		if l.Offset() >= 0 {
			off = "+" + off
		}
		return regName(uint8(l.Reg())) + off
	case ValExpr:
		return "exp"
	}
	return l.Kind().String()
}

// compareRow returns a description of how r differs from readelf's row.
func compareRow(r Rule, l *layout, cells []string) string {
	var diffs []string
	for i, reg := range l.reg {
		want := cells[i]
		switch reg {
		case colOther:
			continue
		case colCFA:
			if got := cfaCell(r.CFA()); got != want {
				diffs = append(diffs, fmt.Sprintf("CFA %s want %s", got, want))
			}
			continue
		}
		if want == "n/a" {
			want = "u"
		}
		if got := cellOf(r.Reg(reg)); got != want {
			diffs = append(diffs, fmt.Sprintf("%s %s want %s", regNames[reg], got, want))
		}
	}
	// A column readelf does not show was never mentioned.
	for _, reg := range tracked {
		if !l.shown[reg] && r.Reg(reg).Kind() != Unspecified {
			diffs = append(diffs, fmt.Sprintf("%s %s want unmentioned", regNames[reg], r.Reg(reg)))
		}
	}
	return strings.Join(diffs, ", ")
}

// crossStats counts what crossCheck compared.
type crossStats struct {
	fdes, inherited, rows, pcs, mismatches int
}

// crossCheck compares the rules of t against readelf's rows for one
// section, at each row's first address and at its last.
func crossCheck(t *testing.T, name string, tab *Table, sec refSection) crossStats {
	t.Helper()
	var st crossStats
	for _, f := range sec.fdes {
		if len(f.rows) == 0 {
			continue
		}
		st.fdes++
		lay := layoutOf(f.cols)
		if f.inherited {
			st.inherited++
		}
		for i, row := range f.rows {
			last := f.end - 1
			if i+1 < len(f.rows) {
				last = f.rows[i+1].loc - 1
			}
			if row.loc < f.begin || row.loc > last {
				continue // readelf shows set_loc rows outside the range as they come
			}
			st.rows++
			for _, pc := range []uint64{row.loc, last} {
				st.pcs++
				r, ok := tab.Rule(pc)
				var d string
				if !ok {
					d = "no rule"
				} else {
					d = compareRow(r, &lay, row.cells)
				}
				if d != "" {
					st.mismatches++
					if st.mismatches <= 20 {
						t.Errorf("%s %s FDE %#x..%#x pc %#x: %s (rule %v)", name, sec.name, f.begin, f.end, pc, d, r)
					}
				}
			}
		}
	}
	return st
}

// checkBinary loads path section by section (so .debug_frame is checked
// even where .eh_frame covers the same code) and compares every FDE
// readelf shows. It returns the rows compared.
func checkBinary(t *testing.T, path string) int {
	t.Helper()
	secs := readelfFrames(t, path)
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	full, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	for _, sec := range secs {
		in := input{addrSize: 8}
		data, addr, err := sectionData(f, sec.name)
		if err != nil || data == nil {
			t.Fatalf("%s: readelf shows %s, Load cannot read it: %v", path, sec.name, err)
		}
		switch sec.name {
		case ".eh_frame":
			in.eh, in.ehAddr = data, addr
		case ".debug_frame":
			in.debug = data
		default:
			continue
		}
		tab := load(in)
		st := crossCheck(t, filepath.Base(path), tab, sec)
		if st.rows == 0 {
			t.Errorf("%s %s: readelf shows %d FDEs, none with rows", path, sec.name, len(sec.fdes))
		}
		t.Logf("%s %s: %d FDEs indexed, %d compared (%d with only the CIE's row), %d rows, %d pcs, %d mismatches",
			filepath.Base(path), sec.name, tab.Len(), st.fdes, st.inherited, st.rows, st.pcs, st.mismatches)
		rows += st.rows
	}
	if n := countFDEs(secs); full.Len() != n {
		t.Errorf("%s: Load indexed %d FDEs, readelf shows %d", path, full.Len(), n)
	}
	return rows
}

func countFDEs(secs []refSection) int {
	n := 0
	for _, s := range secs {
		for _, f := range s.fdes {
			if f.end > f.begin {
				n++
			}
		}
	}
	return n
}

// compile builds src (a name in testdata, or an absolute path) with gcc
// and flags into dir/out.
func compile(t testing.TB, dir, src, out string, flags ...string) string {
	t.Helper()
	gcc := lookTool(t, "gcc")
	bin := filepath.Join(dir, out)
	if !filepath.IsAbs(src) {
		src = filepath.Join("testdata", src)
	}
	args := append(append([]string{}, flags...), "-o", bin, src)
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, b)
	}
	return bin
}

var frameBuilds = []struct {
	name  string
	flags []string
}{
	{"O0", []string{"-O0"}},
	{"O1", []string{"-O1"}},
	{"O2", []string{"-O2"}},
	{"O0-fp", []string{"-O0", "-fno-omit-frame-pointer"}},
	{"O1-fp", []string{"-O1", "-fno-omit-frame-pointer"}},
	{"O2-fp", []string{"-O2", "-fno-omit-frame-pointer"}},
	{"O2-nopie", []string{"-O2", "-no-pie"}},
	{"O3-shared", []string{"-O3", "-shared", "-fPIC"}},
	// No .eh_frame: gcc puts the CFI in .debug_frame instead.
	{"O2-debugframe", []string{"-O2", "-g", "-fno-asynchronous-unwind-tables", "-fno-exceptions"}},
	{"O0-debugframe-fp", []string{"-O0", "-g", "-fno-asynchronous-unwind-tables", "-fno-omit-frame-pointer"}},
}

func TestReadelfCompiled(t *testing.T) {
	dir := t.TempDir()
	for _, b := range frameBuilds {
		t.Run(b.name, func(t *testing.T) {
			bin := compile(t, dir, "frames.c", "frames-"+b.name, b.flags...)
			checkBinary(t, bin)
		})
	}
}

// TestReadelfDebugFrame checks that the .debug_frame builds really have
// their CFI there, so TestReadelfCompiled covered that layout.
func TestReadelfDebugFrame(t *testing.T) {
	bin := compile(t, t.TempDir(), "frames.c", "frames", "-O2", "-g", "-fno-asynchronous-unwind-tables", "-fno-exceptions")
	secs := readelfFrames(t, bin)
	var n int
	for _, s := range secs {
		if s.name == ".debug_frame" {
			n += len(s.fdes)
		}
	}
	if n < 8 {
		t.Fatalf("%d FDEs in .debug_frame, want the program's functions", n)
	}
}

const libc = "/lib/x86_64-linux-gnu/libc.so.6"

func TestReadelfSystemLibraries(t *testing.T) {
	for _, p := range []string{libc, "/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libm.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libgcc_s.so.1"} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			if _, err := os.Stat(p); err != nil {
				t.Skipf("%s: %v", p, err)
			}
			if testing.Short() && p != libc {
				t.Skip("-short: libc only")
			}
			rows := checkBinary(t, p)
			if p == libc && rows < 5000 {
				t.Errorf("only %d rows compared in libc", rows)
			}
		})
	}
}

// TestReadelfLibcDebugFile checks libc's separate debug file (libc6-dbg),
// which only matters if it carries a .debug_frame.
func TestReadelfLibcDebugFile(t *testing.T) {
	f, err := elf.Open(libc)
	if err != nil {
		t.Skipf("no libc: %v", err)
	}
	id := buildID(f)
	f.Close()
	if id == "" {
		t.Skip("libc has no build id")
	}
	p := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
	df, err := elf.Open(p)
	if err != nil {
		t.Skipf("no libc debug file: %v", err)
	}
	tab, err := Load(df)
	df.Close()
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() == 0 {
		t.Skipf("%s has no frame information (its .eh_frame is NOBITS, there is no .debug_frame); %d FDEs indexed", p, tab.Len())
	}
	checkBinary(t, p)
}

// buildID returns the hex GNU build id of f.
func buildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	namesz := int(f.ByteOrder.Uint32(b))
	descsz := int(f.ByteOrder.Uint32(b[4:]))
	off := 12 + (namesz+3)&^3
	if off+descsz > len(b) {
		return ""
	}
	return fmt.Sprintf("%x", b[off:off+descsz])
}

// TestReadelfGoBinary checks a Go program: its CFI is a compressed
// .debug_frame (SHF_COMPRESSED) with no .eh_frame, which Load must
// decompress.
func TestReadelfGoBinary(t *testing.T) {
	goTool := lookTool(t, "go")
	dir := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".debug_frame")
	f.Close()
	if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 {
		t.Logf("the Go linker no longer compresses .debug_frame (%v)", s)
	}
	if rows := checkBinary(t, bin); rows < 1000 {
		t.Errorf("only %d rows compared", rows)
	}
}
