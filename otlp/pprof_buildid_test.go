package otlp

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cctop/cctop/cct"
)

// TestPprofBuildID: cct's pprof files carry Meta.Modules' build IDs in their mappings
// and read them back; the placement stays out, since pprof mappings there are
// module-relative. (Here because this package's mappings carry the same IDs.)
func TestPprofBuildID(t *testing.T) {
	tr, meta, _ := richTree()
	p := tr.Profile(meta)
	ids := map[string]string{}
	for _, m := range p.Mapping {
		ids[m.File] = m.BuildID
		if m.Start != 0 || m.Offset != 0 {
			t.Errorf("%s: pprof mapping at %#x offset %#x: want module-relative 0, 0", m.File, m.Start, m.Offset)
		}
	}
	// pprof's build ID is the GNU one, which symbolizers look debug files up by.
	want := map[string]string{"/bin/app": "0123456789abcdef", "/lib/libc.so.6": "feedface", "[kernel.kallsyms]": "", "/tmp/perf-100.map": "", "/bin/goapp": ""}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("pprof build IDs %v, want %v", ids, want)
	}
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, meta); err != nil {
		t.Fatal(err)
	}
	_, back, err := cct.ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	wantMods := map[string]cct.Module{"/bin/app": {BuildID: "0123456789abcdef"}, "/lib/libc.so.6": {BuildID: "feedface"}}
	if !reflect.DeepEqual(back.Modules, wantMods) {
		t.Errorf("modules read back %+v, want %+v", back.Modules, wantMods)
	}
}
