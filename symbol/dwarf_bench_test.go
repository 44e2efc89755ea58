package symbol

import (
	"debug/elf"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// libcWithDebug returns the path of the libc this test binary maps and
// its separate debug file, skipping when libc6-dbg is not installed.
func libcWithDebug(tb testing.TB) (libc, dbg string) {
	tb.Helper()
	r := NewResolver()
	if err := r.LoadProc(os.Getpid()); err != nil {
		tb.Skip(err)
	}
	for _, m := range r.Mappings(os.Getpid()) {
		if b := filepath.Base(m.Path); len(b) >= 4 && b[:4] == "libc" && filepath.Ext(b) != ".a" {
			libc = m.Path
			break
		}
	}
	if libc == "" {
		// A static or pure-Go test binary maps no libc; use the system's.
		libc = "/lib/x86_64-linux-gnu/libc.so.6"
	}
	f, err := elf.Open(libc)
	if err != nil {
		tb.Skip(err)
	}
	id := buildID(f)
	f.Close()
	if len(id) < 2 {
		tb.Skip("libc has no build id")
	}
	h := hex.EncodeToString(id)
	dbg = filepath.Join("/usr/lib/debug/.build-id", h[:2], h[2:]+".debug")
	if _, err := os.Stat(dbg); err != nil {
		tb.Skipf("no debug file for libc (%s): install libc6-dbg", dbg)
	}
	return libc, dbg
}

// libcPCs returns n distinct addresses inside libc's functions, spread
// over the whole text: a few per function, every function in turn.
func libcPCs(tb testing.TB, dbg string, n int) []uint64 {
	tb.Helper()
	f, err := elf.Open(dbg)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		tb.Fatal(err)
	}
	var fns []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && s.Size > 0 {
			fns = append(fns, s)
		}
	}
	seen := make(map[uint64]bool, n)
	var pcs []uint64
	for k := uint64(0); len(pcs) < n && k < 1<<12; k++ {
		for _, s := range fns {
			if off := k * 13; off < s.Size && !seen[s.Value+off] {
				seen[s.Value+off] = true
				pcs = append(pcs, s.Value+off)
				if len(pcs) == n {
					break
				}
			}
		}
	}
	return pcs
}

func loadLibc(tb testing.TB, libc string) *module {
	f, err := os.Open(libc)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return loadELF(f, st.Size(), libc, os.Open, true)
}

// BenchmarkDWARFLibc loads libc with its libc6-dbg debug file and resolves
// 10,000 distinct pcs, all cache misses. Reported: load-ms (reading and
// inflating the sections, indexing units), resolve-ms and lookups/s for
// the 10k pcs (parsing every unit they touch, which for pcs spread over
// all of libc is most units), warm-lookups/s for the same pcs asked of the
// DWARF source again (units parsed, no module cache), and the heap the
// module holds after loading (load-MB) and after the lookups (retained-MB).
func BenchmarkDWARFLibc(b *testing.B) {
	libc, dbg := libcWithDebug(b)
	pcs := libcPCs(b, dbg, 10000)
	var load, resolve, warm time.Duration
	var loaded, retained uint64
	b.ReportAllocs()
	for b.Loop() {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc

		t0 := time.Now()
		mod := loadLibc(b, libc)
		load += time.Since(t0)
		runtime.GC()
		runtime.ReadMemStats(&ms)
		loaded += ms.HeapAlloc - before

		t1 := time.Now()
		var dst []Frame
		named := 0
		for _, pc := range pcs {
			dst = mod.frames(pc, "libc", dst[:0])
			if dst[len(dst)-1].File != "" {
				named++
			}
		}
		t2 := time.Now()
		for _, src := range mod.sources {
			if dw, ok := src.(*dwarfSource); ok {
				for _, pc := range pcs {
					dst, _ = dw.frames(pc, dst[:0])
				}
			}
		}
		t3 := time.Now()
		resolve += t2.Sub(t1)
		warm += t3.Sub(t2)
		if named < len(pcs)/2 {
			b.Fatalf("only %d of %d pcs got a source line", named, len(pcs))
		}

		runtime.GC()
		runtime.ReadMemStats(&ms)
		retained += ms.HeapAlloc - before
		runtime.KeepAlive(mod)
	}
	n := float64(b.N)
	b.ReportMetric(float64(load.Milliseconds())/n, "load-ms")
	b.ReportMetric(float64(resolve.Milliseconds())/n, "resolve-ms")
	b.ReportMetric(float64(len(pcs))*n/resolve.Seconds(), "lookups/s")
	b.ReportMetric(float64(len(pcs))*n/warm.Seconds(), "warm-lookups/s")
	b.ReportMetric(float64(loaded)/n/(1<<20), "load-MB")
	b.ReportMetric(float64(retained)/n/(1<<20), "retained-MB")
}
