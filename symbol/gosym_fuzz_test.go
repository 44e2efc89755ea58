package symbol

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzGoTable feeds arbitrary bytes as a pclntab and a go:func.* region to
// the decoder, then asks for frames, SP deltas and flags at the given pc
// and at pcs in and around the first functions. Nothing may panic or hang,
// and a chain must be well formed: innermost first, every frame but the
// last inlined, no longer than maxInlineDepth+1.
//
// The seeds are small real tables: testdata/fuzz/FuzzGoTable holds the
// main package of the inline test program (regenerate it with
// CCTOP_WRITE_FUZZ_SEED=1 go test -run TestWriteGoTableSeed), and a few
// functions of this test binary are cut out at run time.
func FuzzGoTable(f *testing.F) {
	if g, err := selfGoTable(); err == nil {
		var entries []uint64
		for _, name := range []string{
			"github.com/cctop/cctop/symbol.parsePclntab",
			"github.com/cctop/cctop/symbol.(*pclntab).frames",
			"github.com/cctop/cctop/symbol.readVarint",
		} {
			if e, ok := g.lookupFunc(name); ok {
				entries = append(entries, e)
			}
		}
		slices.Sort(entries)
		if data, gofunc, err := pclntabSubset(g.tab, entries); err == nil {
			for _, e := range entries {
				f.Add(data, gofunc, g.tab.text, e+40)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data, gofunc []byte, text, pc uint64) {
		tab := parsePclntab(data, text, gofunc)
		if tab == nil {
			return
		}
		g := &goTable{tab: tab}
		pcs := []uint64{pc, pc - 1, pc + 1, text, 0, ^uint64(0)}
		for i := 0; i < tab.nfunc && i < 8; i++ {
			e := text + uint64(tab.entryOff(i))
			pcs = append(pcs, e-1, e, e+1, e+17)
		}
		pcs = append(pcs, text+uint64(tab.entryOff(tab.nfunc))-1)
		dst := []Frame{{Func: "caller's"}}
		for _, pc := range pcs {
			fs, ok := g.frames(pc, dst)
			if !ok {
				if len(fs) != 1 {
					t.Fatalf("frames(%#x) failed but changed dst: %+v", pc, fs)
				}
				continue
			}
			fs = fs[1:]
			if len(fs) == 0 || len(fs) > maxInlineDepth+1 || fs[len(fs)-1].Inlined {
				t.Fatalf("frames(%#x) = %+v", pc, fs)
			}
			for _, fr := range fs[:len(fs)-1] {
				if !fr.Inlined || fr.Func == "" {
					t.Fatalf("frames(%#x) = %+v", pc, fs)
				}
			}
			if d, ok := g.spDelta(pc); ok && d < 0 {
				t.Fatalf("spDelta(%#x) = %d", pc, d)
			}
			g.topFrame(pc)
		}
		g.lookupFunc("main.main")
	})
}

// selfGoTable loads the Go table of the running test binary.
func selfGoTable() (*goTable, error) {
	p, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return loadGoTable(p)
}

// TestPclntabSubset checks the seed maker: a table cut down to a few
// functions of this test binary, some with deep inlining, answers like the
// full one at every pc of those functions.
func TestPclntabSubset(t *testing.T) {
	g := openGoTable(t, selfExe(t))
	entries, data, gofunc := subsetOf(t, g,
		"github.com/cctop/cctop/symbol.(*pclntab).frames",
		"github.com/cctop/cctop/symbol.loadELF",
		"github.com/cctop/cctop/symbol.pclntabData",
		"github.com/cctop/cctop/symbol.TestSelf",
		"runtime.goexit",
	)
	sub := &goTable{tab: parsePclntab(data, g.tab.text, gofunc)}
	if sub.tab == nil || sub.tab.nfunc != len(entries) {
		t.Fatal("subset does not parse")
	}
	t.Logf("%d functions: %d bytes of pclntab, %d of go:func.*", len(entries), len(data), len(gofunc))
	var inlined int
	for _, e := range entries {
		f, _ := g.tab.findFunc(e)
		for pc := f.entry; pc < f.end; pc++ {
			want, wok := g.frames(pc, nil)
			got, ok := sub.frames(pc, nil)
			if ok != wok || !reflect.DeepEqual(got, want) {
				t.Fatalf("frames(%#x) = %+v, %v; full table %+v, %v", pc, got, ok, want, wok)
			}
			if len(got) > 1 {
				inlined++
			}
			w, wok := g.spDelta(pc)
			d, ok := sub.spDelta(pc)
			if ok != wok || d != w || sub.topFrame(pc) != g.topFrame(pc) {
				t.Fatalf("spDelta(%#x) = %d, %v; full table %d, %v", pc, d, ok, w, wok)
			}
		}
	}
	if inlined == 0 {
		t.Error("no inlined pcs in the subset")
	}
}

// TestWriteGoTableSeed writes the checked-in seed of FuzzGoTable: the main
// package of the inline test program, and the pc in its inlined body.
func TestWriteGoTableSeed(t *testing.T) {
	if os.Getenv("CCTOP_WRITE_FUZZ_SEED") == "" {
		t.Skip("CCTOP_WRITE_FUZZ_SEED not set")
	}
	dir, targets := buildInlineTargets(t, "")
	g := openGoTable(t, filepath.Join(dir, "default"))
	_, data, gofunc := subsetOf(t, g, "main.record", "main.outer", "main.main")
	seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n[]byte(%q)\nuint64(%d)\nuint64(%d)\n",
		data, gofunc, g.tab.text, targets[0].pc-1)
	path := filepath.Join("testdata", "fuzz", "FuzzGoTable", "inline")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes", path, len(seed))
}

// pclntabSubset builds a pclntab of t's format holding only the functions
// starting at entries (sorted), with the names, pc-value tables, file
// names and inline trees they use, and the go:func.* region holding those
// trees. Entry offsets are kept, so the subset has t's text address; the
// last function keeps its end, the others extend to the next one.
func pclntabSubset(t *pclntab, entries []uint64) (data, gofunc []byte, err error) {
	bo := t.bo
	var names, cutab, filetab []byte
	pctab := []byte{0} // offset 0 means no table
	strs := map[string]uint32{}
	nfiles := 0
	add := func(tab *[]byte, s string, key string) uint32 {
		if off, ok := strs[key+s]; ok {
			return off
		}
		if key != "" {
			nfiles++
		}
		off := uint32(len(*tab))
		*tab = append(append(*tab, s...), 0)
		strs[key+s] = off
		return off
	}
	copyTable := func(f goFunc, off uint32) (uint32, []int32, error) {
		if off == 0 {
			return 0, nil, nil
		}
		n, vals, err := pcTableExtent(t.pctab, off)
		if err != nil {
			return 0, nil, err
		}
		newOff := uint32(len(pctab))
		pctab = append(pctab, t.pctab[off:int(off)+n]...)
		return newOff, vals, nil
	}
	put := func(b []byte, at int, v uint32) { bo.PutUint32(b[at:], v) }

	var offs []uint32 // entry offsets
	var recs [][]byte
	var end uint64
	for _, e := range entries {
		f, ok := t.findFunc(e)
		if !ok || f.entry != e {
			return nil, nil, fmt.Errorf("no function at %#x", e)
		}
		end = f.end
		r := slices.Clone(f.rec[:f.hdr+4*int(f.npcdata+f.nfuncdata)])
		name, ok := t.funcName(t.nameOff(f))
		if !ok {
			return nil, nil, fmt.Errorf("no name at %#x", e)
		}
		put(r, 4, add(&names, name, ""))
		var fileVals, inlVals []int32
		for _, fld := range []int{16, 20, 24} { // pcsp, pcfile, pcln
			off, vals, err := copyTable(f, bo.Uint32(f.rec[fld:]))
			if err != nil {
				return nil, nil, err
			}
			put(r, fld, off)
			if fld == 20 {
				fileVals = vals
			}
		}
		for i := 0; i < int(f.npcdata); i++ {
			off, vals, err := copyTable(f, bo.Uint32(f.rec[f.hdr+4*i:]))
			if err != nil {
				return nil, nil, err
			}
			put(r, f.hdr+4*i, off)
			if i == pcdataInlTreeIndex {
				inlVals = vals
			}
		}
		// The function's compilation unit, as far as its file numbers
		// reach, with the file names it points at.
		cu := uint32(len(cutab) / 4)
		for i := uint32(0); int32(i) <= slices.Max(append(fileVals, 0)); i++ {
			off := bo.Uint32(t.cutab[4*(t.cuOffset(f)+i):])
			if off != ^uint32(0) {
				file, _ := t.str(t.filetab, off, 1<<32)
				off = add(&filetab, file, "file:")
			}
			cutab = bo.(binary.AppendByteOrder).AppendUint32(cutab, off)
		}
		put(r, 32, cu)
		// Funcdata: the inline tree's entries up to the highest index
		// the function uses, renamed; nothing else.
		size, nameAt, _ := t.inlinedCallLayout()
		for i := 0; i < int(f.nfuncdata); i++ {
			off := ^uint32(0)
			if tree := t.funcdata(f, uint32(i)); i == funcdataInlTree && tree != nil && len(inlVals) > 0 {
				off = uint32(len(gofunc))
				for j := 0; j <= int(slices.Max(inlVals)); j++ {
					call := slices.Clone(tree[size*j : size*(j+1)])
					callee, _ := t.funcName(bo.Uint32(call[nameAt:]))
					put(call, nameAt, add(&names, callee, ""))
					gofunc = append(gofunc, call...)
				}
			}
			put(r, f.hdr+4*(int(f.npcdata)+i), off)
		}
		offs = append(offs, uint32(e-t.text))
		recs = append(recs, r)
	}

	// pclntable: the functab, then the records.
	ftabSize := 8*len(recs) + 4
	pcln := make([]byte, ftabSize)
	for i, r := range recs {
		put(pcln, 8*i, offs[i])
		put(pcln, 8*i+4, uint32(len(pcln)))
		pcln = append(pcln, r...)
	}
	put(pcln, 8*len(recs), uint32(end-t.text))

	const hdr = 8 + 8*8
	data = make([]byte, hdr)
	bo.PutUint32(data, t.magic)
	data[6], data[7] = byte(t.quantum), 8
	words := []uint64{uint64(len(recs)), uint64(nfiles), 0}
	off := uint64(hdr)
	for _, tab := range [][]byte{names, cutab, filetab, pctab, pcln} {
		words = append(words, off)
		off += uint64(len(tab))
	}
	for i, w := range words {
		bo.PutUint64(data[8+8*i:], w)
	}
	for _, tab := range [][]byte{names, cutab, filetab, pctab, pcln} {
		data = append(data, tab...)
	}
	return data, gofunc, nil
}

// pcTableExtent returns the length of the pc-value table at tab[off:],
// its end marker included, and the values it holds.
func pcTableExtent(tab []byte, off uint32) (int, []int32, error) {
	i := int(off)
	val := int32(-1)
	var vals []int32
	for first := true; ; first = false {
		uv, n, ok := readVarint(tab, i)
		if !ok {
			return 0, nil, fmt.Errorf("table at %#x runs off", off)
		}
		i += n
		if uv == 0 && !first {
			return i - int(off), vals, nil
		}
		val += int32(-(uv & 1) ^ (uv >> 1))
		vals = append(vals, val)
		if _, n, ok = readVarint(tab, i); !ok {
			return 0, nil, fmt.Errorf("table at %#x runs off", off)
		}
		i += n
	}
}

// TestGoTableSeed checks that the checked-in seed is what it claims to be,
// a table in which its pc is in leaf, inlined into mid, inlined into
// outer: a seed the decoder rejects would leave the fuzzer to find the
// format by chance.
func TestGoTableSeed(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzGoTable", "inline"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 5 || lines[0] != "go test fuzz v1" {
		t.Fatalf("seed has %d lines", len(lines))
	}
	var bufs [2][]byte
	for i := range bufs {
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1+i], "[]byte("), ")"))
		if err != nil {
			t.Fatal(err)
		}
		bufs[i] = []byte(s)
	}
	var text, pc uint64
	fmt.Sscanf(lines[3], "uint64(%d)", &text)
	fmt.Sscanf(lines[4], "uint64(%d)", &pc)
	g := &goTable{tab: parsePclntab(bufs[0], text, bufs[1])}
	if g.tab == nil {
		t.Fatal("seed does not parse")
	}
	fs, ok := g.frames(pc, nil)
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s:%v", f.Func, f.Inlined))
	}
	if want := []string{"main.leaf:true", "main.mid:true", "main.outer:false"}; !ok || !slices.Equal(got, want) {
		t.Errorf("frames(%#x) = %v, want %v", pc, got, want)
	}
}

// subsetOf cuts g's table down to the named functions, which must exist:
// their entries (sorted) and the subset's pclntab and go:func.* bytes.
func subsetOf(t *testing.T, g *goTable, names ...string) (entries []uint64, data, gofunc []byte) {
	t.Helper()
	for _, name := range names {
		e, ok := g.lookupFunc(name)
		if !ok {
			t.Fatalf("%s not found", name)
		}
		entries = append(entries, e)
	}
	slices.Sort(entries)
	data, gofunc, err := pclntabSubset(g.tab, entries)
	if err != nil {
		t.Fatal(err)
	}
	return entries, data, gofunc
}
