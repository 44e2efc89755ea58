package otlp

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

// twoProcesses is two windows as an agent sends them: separate requests, each with
// its own dictionary, which a file's reader must merge into one.
func twoProcesses(t *testing.T) []Process {
	tr, meta, res := richTree()
	rt, rtMeta := runtimeTree(t)
	return []Process{
		{Resource: res, Tree: tr, Meta: meta},
		{Resource: Resource{PID: 4242, ExecutableName: "gotest"}, Tree: rt, Meta: rtMeta},
	}
}

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func framed(msgs ...[]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = binary.BigEndian.AppendUint32(out, uint32(len(m)))
		out = append(out, m...)
	}
	return out
}

// encodings is each process as its own request in every file format Read takes.
func encodings(t *testing.T, procs []Process) map[string][]byte {
	var js, pb [][]byte
	for _, p := range procs {
		js = append(js, jsonBytes(t, mustAppend(t, p)))
		pb = append(pb, protoBytes(t, mustAppend(t, p)))
	}
	out := map[string][]byte{
		"json lines": append(bytes.Join(js, []byte("\n\n")), '\n'),
		"proto":      framed(pb...),
	}
	for _, k := range []string{"json lines", "proto"} {
		out[k+" gz"] = gz(t, out[k])
	}
	return out
}

func TestReadFormats(t *testing.T) {
	procs := twoProcesses(t)
	for name, data := range encodings(t, procs) {
		ps, err := Read(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkDictionary(t, ps)
		got, err := Trees(ps)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(procs) {
			t.Fatalf("%s: %d processes, want %d", name, len(got), len(procs))
		}
		for i := range procs {
			if dump(got[i].Tree) != dump(procs[i].Tree) {
				t.Errorf("%s: process %d differs after the dictionaries were merged", name, i)
			}
			if got[i].Resource.PID != procs[i].Resource.PID {
				t.Errorf("%s: process %d pid %d", name, i, got[i].Resource.PID)
			}
		}
	}
	// One bare message, as sent over the wire.
	for name, data := range map[string][]byte{
		"bare":    protoBytes(t, mustAppend(t, procs[0])),
		"bare gz": gz(t, protoBytes(t, mustAppend(t, procs[0]))),
	} {
		ps, err := Read(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := Trees(ps)
		if err != nil || len(got) != 1 || dump(got[0].Tree) != dump(procs[0].Tree) {
			t.Errorf("%s: %d processes, %v", name, len(got), err)
		}
	}
}

func TestWriteFile(t *testing.T) {
	procs := twoProcesses(t)
	dir := t.TempDir()
	for _, format := range []string{FormatJSON, FormatProto} {
		for _, suffix := range []string{"", ".gz"} {
			ps := mustAppend(t, procs...)
			path := filepath.Join(dir, "p."+format+suffix)
			if err := WriteFile(path, ps, format); err != nil {
				t.Fatal(err)
			}
			// ps is as it was: its resource attributes still read.
			if v, ok := ps.ResourceProfiles().At(0).Resource().Attributes().Get(AttrHostName); !ok || v.Str() != "h1" {
				t.Errorf("%s: WriteFile changed the profiles written", path)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if isGz := len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b; isGz != (suffix == ".gz") {
				t.Errorf("%s: gzip %v", path, isGz)
			}
			if !Sniff(raw) {
				t.Errorf("%s: Sniff says it is not OTLP", path)
			}
			back, err := ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			got, err := Trees(back)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || dump(got[0].Tree) != dump(procs[0].Tree) || dump(got[1].Tree) != dump(procs[1].Tree) {
				t.Errorf("%s: read back differs", path)
			}
		}
	}
	if err := WriteFile(filepath.Join(dir, "x"), mustAppend(t, procs[0]), "yaml"); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("unknown format: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir"), mustAppend(t, procs[0]), FormatProto); err == nil {
		t.Error("writing into a missing directory: no error")
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("reading a missing file: no error")
	}
}

func TestReadErrors(t *testing.T) {
	tr, meta, res := richTree()
	good := func() []byte { return protoBytes(t, mustAppend(t, Process{Resource: res, Tree: tr, Meta: meta})) }
	goodJSON := jsonBytes(t, mustAppend(t, Process{Resource: res, Tree: tr, Meta: meta}))
	// A request whose sample names a stack its dictionary does not have: pdata decodes
	// it, merging it with another finds it out.
	badPs := mustAppend(t, Process{Resource: res, Tree: tr, Meta: meta})
	sample(badPs).SetStackIndex(int32(badPs.Dictionary().StackTable().Len() + 5))
	bad := protoBytes(t, badPs)
	first := good()

	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":          {nil, "otlp: empty input"},
		"blank":          {[]byte(" \n\t\n"), "otlp: empty input"},
		"bad json line":  {append(append(goodJSON, '\n'), []byte("{\"resourceProfiles\": [\n")...), "otlp: line 2: "},
		"no resources":   {[]byte("{}\n"), "otlp: no resource profiles"},
		"truncated":      {framed(first, good())[:len(first)+4+10], fmt.Sprintf("otlp: record 2 at byte %d: length", len(first)+4)},
		"short prefix":   {append(framed(first), 0, 0), fmt.Sprintf("otlp: record 2 at byte %d: 2 bytes left", len(first)+4)},
		"garbage record": {framed(first, []byte("\xff\xff\xff\xff garbage")), fmt.Sprintf("otlp: record 2 at byte %d: ", len(first)+4)},
		"bad index":      {framed(first, bad), fmt.Sprintf("otlp: record 2 at byte %d: merging: ", len(first)+4)},
		"bare garbage":   {[]byte("\x0a\xff\xff\xff\xff\x0f"), "otlp: not an OTLP profiles message"},
		"gzip garbage":   {[]byte("\x1f\x8b\x08\x00garbage"), "otlp: gzip"},
		"truncated gzip": {gz(t, first)[:40], "otlp: gzip"},
		"pprof":          {mustPprof(t, tr, meta), "otlp: "},
	} {
		_, err := Read(c.data)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line starting %q", name, msg, c.want)
		}
	}
}

// TestReadBounded: a gzip stream that inflates past the bound is an error, not all of
// memory.
func TestReadBounded(t *testing.T) {
	defer func(n int) { maxBytes = n }(maxBytes)
	maxBytes = 1 << 20
	_, err := Read(gz(t, bytes.Repeat([]byte{'\n'}, 4<<20)))
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("gzip bomb: %v", err)
	}
	if Sniff(gz(t, bytes.Repeat([]byte{'\n'}, 4<<20))) {
		t.Error("Sniff of a gzip bomb")
	}
}

func mustPprof(t testing.TB, tr *cct.Tree, meta cct.Meta) []byte {
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, meta); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustPprofRaw(t testing.TB, tr *cct.Tree, meta cct.Meta) []byte {
	var buf bytes.Buffer
	if err := tr.Profile(meta).WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSniff(t *testing.T) {
	procs := twoProcesses(t)
	yes := encodings(t, procs)
	yes["bare"] = protoBytes(t, mustAppend(t, procs[0]))
	yes["bare gz"] = gz(t, yes["bare"])
	for name, data := range yes {
		if !Sniff(data) {
			t.Errorf("%s: Sniff says it is not OTLP", name)
		}
	}
	tr, meta, _ := richTree()
	rt, err := os.ReadFile(filepath.Join("..", "cct", "testdata", "runtime.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	rtRaw, err := gzip.NewReader(bytes.NewReader(rt))
	if err != nil {
		t.Fatal(err)
	}
	var rtPlain bytes.Buffer
	if _, err := rtPlain.ReadFrom(rtRaw); err != nil {
		t.Fatal(err)
	}
	no := map[string][]byte{
		"cctop pprof":     mustPprof(t, tr, meta),
		"cctop pprof raw": mustPprofRaw(t, tr, meta),
		"runtime pprof":   rt,
		"runtime raw":     rtPlain.Bytes(),
		"empty":           nil,
		"text":            []byte("main;work 3\n"),
		"json no profile": []byte("{\"resourceProfiles\": []}\n"),
		"json other":      []byte("{\"resourceSpans\": [{}]}\n"),
		"empty request":   framed(nil),
		"gzip garbage":    []byte("\x1f\x8b\x08\x00garbage"),
	}
	// Requests with a resource but no dictionary, or a dictionary with no resource.
	var m pprofile.ProtoMarshaler
	onlyDict := pprofile.NewProfiles()
	onlyDict.Dictionary().StringTable().Append("", "x")
	b, err := m.MarshalProfiles(onlyDict)
	if err != nil {
		t.Fatal(err)
	}
	no["dictionary only"] = b
	rng := rand.New(rand.NewSource(1))
	for i := range 200 {
		r := make([]byte, 1+rng.Intn(300))
		rng.Read(r)
		no[fmt.Sprintf("random %d", i)] = r
	}
	for name, data := range no {
		if Sniff(data) {
			t.Errorf("%s: Sniff says it is OTLP", name)
		}
	}
	// And Read agrees on what it takes: every OTLP input reads.
	for name, data := range yes {
		if _, err := Read(data); err != nil {
			t.Errorf("%s: Sniff says OTLP, Read says %v", name, err)
		}
	}
}
