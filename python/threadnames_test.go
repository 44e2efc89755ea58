package python

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/lang"
)

// Thread names are recorded apart from the stack images of
// testdata/images (TestReadImages replays each of those as stacks): an
// image of testdata/threadnames holds the pages Find, threadStates and
// ThreadNames read, and in Threads, by tid, the thread's ident and name
// as read then: "ident=0x…", "name=…".
const threadNamesImages = "testdata/threadnames"

// checkThreadNames checks the names of sleeper.py's threads: "MainThread"
// for the thread state of the main thread (tid pid), "worker-1" for the
// other, by the idents of the thread states.
func checkThreadNames(t *testing.T, pid int, states []threadState, names map[uint64]string) {
	t.Helper()
	if len(states) != 2 {
		t.Fatalf("%d thread states, want 2", len(states))
	}
	if len(names) != 2 {
		t.Errorf("names %v: want 2", names)
	}
	for _, s := range states {
		want := "worker-1"
		if s.tid == pid {
			want = "MainThread"
		}
		if s.ident == 0 {
			t.Errorf("thread %d: no ident", s.tid)
		}
		if got, ok := names[s.ident]; !ok || got != want {
			t.Errorf("thread %d (ident %#x): name %q (%v), want %q; all: %v", s.tid, s.ident, got, ok, want, names)
		}
	}
}

// TestThreadNamesLive reads the names of sleeper.py's threads with every
// CPython of the machine, through a recorder and then straight from the
// process (with vectored reads); with CCTOP_UPDATE_IMAGES=1 it records the
// memory read into testdata/threadnames, which TestThreadNamesImages
// replays where these Pythons are not installed.
func TestThreadNamesLive(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reading another process's memory needs root or ptrace rights here")
	}
	found := false
	for _, py := range interpreters() {
		t.Run(py.name, func(t *testing.T) {
			found = true
			cmd := startSleeper(t, py.path)
			pid := cmd.Process.Pid
			rec := &sparseRecorder{mem: ProcessMemory(pid), pages: imageMemory{}}
			in, err := Find(pid, rec)
			if err != nil {
				t.Fatalf("Find: %v", err)
			}
			states, err := in.threadStates(rec, nil)
			if err != nil {
				t.Fatalf("thread states: %v", err)
			}
			counted := &countingMemory{mem: rec}
			start := time.Now()
			names, err := in.ThreadNames(counted)
			if err != nil {
				t.Fatalf("ThreadNames: %v", err)
			}
			t.Logf("%s: %v, %d reads, %v (recorded)", py.name, names, counted.reads, time.Since(start))
			checkThreadNames(t, pid, states, names)

			start = time.Now()
			calls := &countingManyMemory{countingMemory{mem: ProcessMemory(pid)}}
			direct, err := in.ThreadNames(calls)
			if err != nil {
				t.Fatalf("ThreadNames from the process: %v", err)
			}
			t.Logf("%s: %d system calls, %v (from the process)", py.name, calls.reads, time.Since(start))
			if fmt.Sprint(direct) != fmt.Sprint(names) {
				t.Errorf("from the process %v, recorded %v", direct, names)
			}

			if os.Getenv("CCTOP_UPDATE_IMAGES") != "" {
				// Every key of sys.modules too, for TestThreadNamesEdits
				// to read past "threading" when it is gone, and the
				// fuzzer to corrupt.
				nl, err := in.namesLayout(rec)
				if err != nil {
					t.Fatal(err)
				}
				r := newNamesReader(in, rec, &nl)
				interp, err := r.mainInterpreter()
				if err != nil {
					t.Fatal(err)
				}
				modules, _ := r.ptr("sys.modules", interp+nl.InterpModules)
				if _, err := r.dictGet(modules, "no such module"); !errors.Is(err, errNotFound) {
					t.Fatalf("reading every key of sys.modules: %v", err)
				}
				writeThreadNamesImage(t, py.name, in, rec, states, names)
			}
		})
	}
	if !found {
		t.Skip("no CPython 3.9-3.13 installed")
	}
}

// writeThreadNamesImage records the pages rec read, and the idents and
// names of the thread states, as testdata/threadnames/<name>.json.gz.
func writeThreadNamesImage(t *testing.T, name string, in *Interpreter, rec *sparseRecorder, states []threadState, names map[uint64]string) {
	t.Helper()
	threads := map[int][]string{}
	for _, s := range states {
		threads[s.tid] = []string{fmt.Sprintf("ident=%#x", s.ident), "name=" + names[s.ident]}
	}
	im := &image{Version: in.Version.String(), Module: in.Module, Runtime: in.Runtime,
		Types: [3]uint64{in.CodeType, in.StrType, in.BytesType}, TidOff: in.tidOffset,
		Threads: threads, mem: rec.pages}
	os.MkdirAll(threadNamesImages, 0o755)
	if err := writeImage(filepath.Join(threadNamesImages, name+".json.gz"), im); err != nil {
		t.Fatal(err)
	}
}

// kindsScript starts threads whose attributes are kept each way the
// version can (values, a dict made of them, a dict of its own; in a
// subclass with slots), with names of each kind of str, a _DummyThread,
// and renames the main thread; then prints threading._active's names by
// ident, as JSON.
const kindsScript = `
import _thread, json, threading, time

class Slotted(threading.Thread):
    __slots__ = ("extra",)

class Sub(threading.Thread):
    pass

def start(t):
    t.daemon = True
    t.start()

def sleeper(name, cls=threading.Thread):
    return cls(target=time.sleep, args=(3600,), name=name)

start(sleeper("plain"))
t = sleeper("with a __dict__")
t.__dict__
start(t)
t = sleeper("with many attributes")
for i in range(64):
    setattr(t, "attr%d" % i, i)
start(t)
start(sleeper("slotted", Slotted))
start(sleeper("subclass", Sub))
start(sleeper("wörker é"))
start(sleeper("工作 €"))
start(sleeper("snake 🐍"))
start(sleeper("x" * 1000))
start(threading.Thread(target=time.sleep, args=(3600,), daemon=True))
t = sleeper("renamed")
start(t)
t.name = "renamed later"
ready = _thread.allocate_lock()
ready.acquire()
def dummy():
    threading.current_thread()
    ready.release()
    time.sleep(3600)
_thread.start_new_thread(dummy, ())
ready.acquire()
threading.current_thread().name = "main, renamed"
# A thread is in _active a moment after start() returns.
while len(threading._active) < 13:
    time.sleep(0.01)
print(json.dumps({str(k): v.name for k, v in threading._active.items()}), flush=True)
time.sleep(3600)
`

// TestThreadNamesKinds reads the names of kindsScript's threads with every
// CPython of the machine: the names Python prints, by the same idents.
// With CCTOP_UPDATE_IMAGES=1 it records testdata/threadnames/kinds-*.
func TestThreadNamesKinds(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reading another process's memory needs root or ptrace rights here")
	}
	for _, py := range interpreters() {
		t.Run(py.name, func(t *testing.T) {
			cmd := exec.Command(py.path, "-c", kindsScript)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("python said %q: %v", line, err)
			}
			var printed map[string]string
			if err := json.Unmarshal([]byte(line), &printed); err != nil {
				t.Fatalf("python said %q: %v", line, err)
			}
			want := map[uint64]string{}
			for k, v := range printed {
				ident, err := strconv.ParseUint(k, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				want[ident] = v
			}
			pid := cmd.Process.Pid
			rec := &sparseRecorder{mem: ProcessMemory(pid), pages: imageMemory{}}
			in, err := Find(pid, rec)
			if err != nil {
				t.Fatalf("Find: %v", err)
			}
			states, err := in.threadStates(rec, nil)
			if err != nil {
				t.Fatalf("thread states: %v", err)
			}
			names, err := in.ThreadNames(rec)
			if err != nil {
				t.Fatalf("ThreadNames: %v", err)
			}
			if !reflect.DeepEqual(names, want) {
				t.Errorf("read %v\nprinted %v", names, want)
			}
			if len(states) != len(want) {
				t.Errorf("%d thread states, %d threads in threading._active", len(states), len(want))
			}
			for _, s := range states {
				if _, ok := want[s.ident]; !ok {
					t.Errorf("thread %d: ident %#x not in threading._active", s.tid, s.ident)
				}
			}
			if os.Getenv("CCTOP_UPDATE_IMAGES") != "" {
				writeThreadNamesImage(t, "kinds-"+py.name, in, rec, states, names)
			}
		})
	}
}

// sparseRecorder is a recorder of the bytes read only: the rest of each
// page is zeros, which the images keep in less room (a replay reads the
// same bytes).
type sparseRecorder struct {
	mem   Memory
	pages imageMemory
}

func (r *sparseRecorder) ReadAt(p []byte, addr uint64) error {
	if err := r.mem.ReadAt(p, addr); err != nil {
		return err
	}
	for done := 0; done < len(p); {
		a := addr + uint64(done)
		base := a &^ (pageSize - 1)
		pg, ok := r.pages[base]
		if !ok {
			pg = make([]byte, pageSize)
			r.pages[base] = pg
		}
		done += copy(pg[a-base:], p[done:])
	}
	return nil
}

// countingMemory counts the reads of a Memory.
type countingMemory struct {
	mem   Memory
	reads int
}

func (m *countingMemory) ReadAt(p []byte, addr uint64) error {
	m.reads++
	return m.mem.ReadAt(p, addr)
}

// countingManyMemory is a countingMemory that reads several ranges in one
// call where its Memory can, counted as one.
type countingManyMemory struct{ countingMemory }

func (m *countingManyMemory) ReadMany(bufs [][]byte, addrs []uint64) error {
	m.reads++
	if v, ok := m.mem.(interface {
		ReadMany(bufs [][]byte, addrs []uint64) error
	}); ok {
		return v.ReadMany(bufs, addrs)
	}
	for i, b := range bufs {
		if err := m.mem.ReadAt(b, addrs[i]); err != nil {
			return err
		}
	}
	return nil
}

// readThreadNameImages reads the images of testdata/threadnames.
func readThreadNameImages(tb testing.TB) map[string]*image {
	files, _ := filepath.Glob(filepath.Join(threadNamesImages, "*.json.gz"))
	out := map[string]*image{}
	for _, f := range files {
		im, err := readImage(f)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = im
	}
	return out
}

// TestThreadNamesImages replays the recorded images: the same names by
// the same idents from the same memory, with no Python installed.
func TestThreadNamesImages(t *testing.T) {
	images := readThreadNameImages(t)
	if len(images) == 0 {
		t.Skip("no images recorded")
	}
	for _, name := range sortedKeys(images) {
		im := images[name]
		t.Run(name, func(t *testing.T) {
			states, err := im.interp.threadStates(im.mem, nil)
			if err != nil {
				t.Fatalf("thread states: %v", err)
			}
			names, err := im.interp.ThreadNames(im.mem)
			if err != nil {
				t.Fatalf("ThreadNames: %v", err)
			}
			pid := 0
			for _, s := range states {
				rec := im.Threads[s.tid]
				if len(rec) != 2 {
					t.Fatalf("thread %d: recorded %v", s.tid, rec)
				}
				if want := fmt.Sprintf("ident=%#x", s.ident); rec[0] != want {
					t.Errorf("thread %d: %s, recorded %s", s.tid, want, rec[0])
				}
				if got := "name=" + names[s.ident]; got != rec[1] {
					t.Errorf("thread %d: %s, recorded %s", s.tid, got, rec[1])
				}
				if pid == 0 || s.tid < pid {
					pid = s.tid // the main thread's tid is the pid, the lowest
				}
			}
			if n := nonEmpty(im.Threads); len(names) != n {
				t.Errorf("%d names, recorded %d: %v", len(names), n, names)
			}
			if !strings.HasPrefix(name, "kinds-") {
				checkThreadNames(t, pid, states, names)
			}
		})
	}
}

// nonEmpty counts the recorded threads with a name.
func nonEmpty(threads map[int][]string) int {
	n := 0
	for _, rec := range threads {
		if len(rec) == 2 && rec[1] != "name=" {
			n++
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestThreadNamesEdits replays each image with one of the objects on the
// way to the names made into something else, as memory that changed
// under the reader or was never what it seemed: an error that says what,
// never a name.
func TestThreadNamesEdits(t *testing.T) {
	images := readThreadNameImages(t)
	if len(images) == 0 {
		t.Skip("no images recorded")
	}
	for _, name := range sortedKeys(images) {
		im := images[name]
		t.Run(name, func(t *testing.T) {
			in := *im.interp
			nl, err := in.namesLayout(im.mem)
			if err != nil {
				t.Fatal(err)
			}
			if in.StrType == 0 {
				t.Skip("no str type to put in place of others")
			}
			// The addresses on the way, as the reader finds them.
			r := newNamesReader(&in, im.mem, &nl)
			interp, err := r.mainInterpreter()
			if err != nil {
				t.Fatal(err)
			}
			modules, _ := r.ptr("", interp+nl.InterpModules)
			modsT, err := r.dict(modules)
			if err != nil {
				t.Fatal(err)
			}
			mod, _ := r.dictGet(modules, "threading")
			md, _ := r.ptr("", mod+nl.ModuleDict)
			active, _ := r.dictGet(md, "_active")
			activeT, err := r.dict(active)
			if err != nil {
				t.Fatal(err)
			}

			for _, c := range []struct {
				what string
				addr uint64
				size int
				val  uint64
				want string
			}{
				{"sys.modules unreadable", interp + nl.InterpModules, 8, 0x10, "not readable"},
				{"sys.modules not a dict", modules + in.Layout.ObjectType, 8, in.StrType, "not a dict"},
				{"threading not a module", mod + in.Layout.ObjectType, 8, in.StrType, "not a module"},
				{"_active not a dict", active + in.Layout.ObjectType, 8, in.StrType, "not a dict"},
				{"sys.modules' entries past its table", modsT.keys + nl.KeysNentries, 8, 1 << 20, "entries in a table"},
				{"_active's entries past its table", activeT.keys + nl.KeysNentries, 8, 1 << 20, "entries in a table"},
			} {
				mem := editedMemory(im.mem, c.addr, c.size, c.val)
				names, err := in.ThreadNames(mem)
				t.Logf("%s: %v", c.what, err)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v, %v; want an error saying %q", c.what, names, err, c.want)
				}
				if err != nil && (strings.Contains(err.Error(), "\n") || names != nil) {
					t.Errorf("%s: %v with the error %q", c.what, names, err)
				}
			}

			// No threading module: no names, and no error.
			var key uint64
			r.eachChunk(modsT, func(ents []dictEntry) (bool, error) {
				for _, e := range ents {
					if e.value == mod {
						key = e.key
						return false, nil
					}
				}
				return true, nil
			})
			if key == 0 {
				t.Fatal("no key of threading in sys.modules")
			}
			// The key "threading" made "threadinG".
			mem := editedMemory(im.mem, key+in.Layout.ASCIISize+8, 1, 'G')
			if names, err := in.ThreadNames(mem); err != nil || len(names) != 0 {
				t.Errorf("without threading: %v, %v; want no names and no error", names, err)
			}
		})
	}
}

// editedMemory is mem with size bytes at addr replaced by val's (little
// endian); the page must be in mem.
func editedMemory(mem imageMemory, addr uint64, size int, val uint64) imageMemory {
	out := imageMemory{}
	for a, pg := range mem {
		out[a] = pg
	}
	for i := 0; i < size; i++ {
		a := addr + uint64(i)
		base := a &^ (pageSize - 1)
		pg, ok := out[base]
		if !ok {
			continue
		}
		pg = append([]byte(nil), pg...)
		pg[a-base] = byte(val >> (8 * i))
		out[base] = pg
	}
	return out
}

// TestThreadNamesNoThreading: a Python that has not imported threading
// has no names, and that is not an error.
func TestThreadNamesNoThreading(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reading another process's memory needs root or ptrace rights here")
	}
	for _, py := range interpreters() {
		t.Run(py.name, func(t *testing.T) {
			cmd := exec.Command(py.path, "-S", "-c", "import sys, time\nassert 'threading' not in sys.modules\nprint('ready', flush=True)\ntime.sleep(3600)")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("python said %q: %v", line, err)
			}
			mem := ProcessMemory(cmd.Process.Pid)
			in, err := Find(cmd.Process.Pid, mem)
			if err != nil {
				t.Fatalf("Find: %v", err)
			}
			names, err := in.ThreadNames(mem)
			if err != nil || names == nil || len(names) != 0 {
				t.Errorf("%v, %v; want no names, no error", names, err)
			}
		})
	}
}

// synthMemory is an imageMemory written to at will: pages appear where
// written.
type synthMemory imageMemory

func (m synthMemory) put(addr uint64, b []byte) {
	for len(b) > 0 {
		base := addr &^ (pageSize - 1)
		pg, ok := m[base]
		if !ok {
			pg = make([]byte, pageSize)
			m[base] = pg
		}
		n := copy(pg[addr-base:], b)
		b, addr = b[n:], addr+uint64(n)
	}
}

func (m synthMemory) put64(addr, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	m.put(addr, b[:])
}

// synthReader is a namesReader of a made-up process of version minor:
// type objects named "int", "bool", "dict" at known places.
func synthReader(t *testing.T, minor int) (*namesReader, synthMemory, map[string]uint64) {
	t.Helper()
	v := lang.Version{Major: 3, Minor: minor}
	l, ok := layoutFor(v)
	nl, ok2 := namesLayoutFor(v)
	if minor == 13 {
		// What the debug offsets of a 3.13.0 build say, and 3.12's
		// Layout for the fields the reader shares with the stacks.
		l, ok = layoutFor(lang.Version{Major: 3, Minor: 12})
		nl, ok2 = names313, true
		nl.InterpModules, nl.DictKeys, nl.DictValues, nl.LongSize, nl.LongDigits, nl.TypeFlags = 7656, 32, 40, 16, 24, 168
	}
	if !ok || !ok2 {
		t.Fatalf("no layout for %v", v)
	}
	mem := synthMemory{}
	types := map[string]uint64{}
	at := uint64(0x10000)
	for _, name := range []string{"int", "bool", "dict", "str"} {
		types[name] = at
		mem.put64(at+l.TypeName, at+0x800)
		mem.put(at+0x800, append([]byte(name), 0))
		at += 0x1000
	}
	in := &Interpreter{Version: v, Layout: l}
	return newNamesReader(in, imageMemory(mem), &nl), mem, types
}

// TestIdentInts reads ints as idents, of 1 to 3 digits up to 2^64-1, and
// refuses what no ident is.
func TestIdentInts(t *testing.T) {
	for minor := 9; minor <= 13; minor++ {
		t.Run(fmt.Sprintf("3.%d", minor), func(t *testing.T) {
			r, mem, types := synthReader(t, minor)
			nl := r.nl
			obj := uint64(0x40000)
			// write makes the int at obj: of type tp, with the size or
			// tag for ndigits and sign (1, 0, -1), and the digits.
			write := func(tp uint64, sign int, digits ...uint32) {
				clear(mem[obj&^(pageSize-1)])
				mem.put64(obj+r.l.ObjectType, tp)
				n := uint64(len(digits))
				var size uint64
				switch {
				case nl.LongTag && sign == 0:
					size = 1
				case nl.LongTag && sign < 0:
					size = n<<3 | 2
				case nl.LongTag:
					size = n << 3
				case sign < 0:
					size = -n
				default:
					size = n
				}
				mem.put64(obj+nl.LongSize, size)
				for i, d := range digits {
					mem.put(obj+nl.LongDigits+4*uint64(i), binary.LittleEndian.AppendUint32(nil, d))
				}
			}
			split := func(v uint64) []uint32 {
				var out []uint32
				for {
					out = append(out, uint32(v&(1<<30-1)))
					v >>= 30
					if v == 0 {
						return out
					}
				}
			}
			for _, v := range []uint64{1, 1<<30 - 1, 1 << 30, 0x7f4cb30f9440, 1<<60 - 1, 1 << 60, 1<<64 - 1} {
				write(types["int"], 1, split(v)...)
				if got, err := r.ident(obj); err != nil || got != v {
					t.Errorf("%#x: read %#x, %v", v, got, err)
				}
			}
			for _, c := range []struct {
				what   string
				tp     uint64
				sign   int
				digits []uint32
				want   string
			}{
				{"zero", types["int"], 0, nil, "0 digits"},
				{"negative", types["int"], -1, []uint32{5}, "not a positive int"},
				{"2^64", types["int"], 1, []uint32{0, 0, 16}, "out of range"},
				{"4 digits", types["int"], 1, []uint32{1, 1, 1, 1}, "4 digits"},
				{"a digit of 31 bits", types["int"], 1, []uint32{1 << 30}, "out of range"},
				{"a bool", types["bool"], 1, []uint32{1}, "is not a int"},
				{"a dict", types["dict"], 1, []uint32{1}, "is not a int"},
				{"no type", 0x123, 1, []uint32{1}, "not readable"},
			} {
				write(c.tp, c.sign, c.digits...)
				if got, err := r.ident(obj); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %#x, %v; want an error saying %q", c.what, got, err, c.want)
				}
			}
		})
	}
}

// TestKeysTableRejects: a keys object that does not hold together is an
// error, not entries read from wherever it says.
func TestKeysTableRejects(t *testing.T) {
	for minor := 9; minor <= 13; minor++ {
		t.Run(fmt.Sprintf("3.%d", minor), func(t *testing.T) {
			r, mem, _ := synthReader(t, minor)
			nl := r.nl
			keys := uint64(0x50000)
			write := func(log2, indexLog2, kind uint8, n uint64) {
				clear(mem[keys])
				if nl.KeysLog2 {
					mem.put(keys+nl.KeysSize, []byte{log2})
					mem.put(keys+nl.KeysLog2IndexBytes, []byte{indexLog2})
					mem.put(keys+nl.KeysKind, []byte{kind})
				} else {
					mem.put64(keys+nl.KeysSize, 1<<log2)
				}
				mem.put64(keys+nl.KeysNentries, n)
			}
			// Good: 8 slots, 5 entries; 256 slots of 2-byte indices.
			write(3, 3, dictKeysUnicode, 5)
			tb, err := r.keysTable(keys)
			if err != nil || tb.n != 5 || tb.entries != keys+nl.KeysIndices+8 {
				t.Errorf("8 slots: %+v, %v", tb, err)
			}
			write(8, 9, dictKeysGeneral, 170)
			tb, err = r.keysTable(keys)
			if err != nil || tb.n != 170 || tb.entries != keys+nl.KeysIndices+512 || tb.size != 24 {
				t.Errorf("256 slots: %+v, %v", tb, err)
			}
			type keysCase struct {
				what           string
				log2, ix, kind uint8
				n              uint64
				want           string
			}
			cases := []keysCase{
				{"more entries than usable", 3, 3, dictKeysUnicode, 6, "6 entries in a table of 8 slots"},
				{"more entries than read", 16, 18, dictKeysUnicode, maxDictEntries + 1, "at most"},
				{"negative entries", 3, 3, dictKeysUnicode, ^uint64(0), "entries in a table"},
			}
			if nl.KeysLog2 {
				cases = append(cases,
					keysCase{"index bytes not of the size", 8, 8, dictKeysUnicode, 1, "index bytes"},
					keysCase{"kind 3", 3, 3, 3, 1, "kind 3"},
					keysCase{"2^41 slots", 41, 44, dictKeysUnicode, 1, "2^41"},
				)
			}
			for _, c := range cases {
				write(c.log2, c.ix, c.kind, c.n)
				if tb, err := r.keysTable(keys); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %+v, %v; want an error saying %q", c.what, tb, err, c.want)
				}
			}
			if !nl.KeysLog2 {
				// A size that is not a power of 2.
				clear(mem[keys])
				mem.put64(keys+nl.KeysSize, 12)
				if _, err := r.keysTable(keys); err == nil || !strings.Contains(err.Error(), "12 slots") {
					t.Errorf("12 slots: %v", err)
				}
			}
		})
	}
}

// synthProcess builds made-up CPython objects in a synthMemory, by the
// layouts of a version, from addresses upwards.
type synthProcess struct {
	r     *namesReader
	mem   synthMemory
	types map[string]uint64
	next  uint64
}

func (p *synthProcess) alloc(n uint64) uint64 {
	a := p.next
	p.next += (n + 15) &^ 15
	return a
}

// str is a compact ASCII str.
func (p *synthProcess) str(s string) uint64 {
	l := p.r.l
	a := p.alloc(l.ASCIISize + uint64(len(s)) + 1)
	p.mem.put64(a+l.ObjectType, p.types["str"])
	p.mem.put(a+l.UnicodeState, binary.LittleEndian.AppendUint32(nil, 1<<2|1<<5|1<<6))
	p.mem.put64(a+l.UnicodeLength, uint64(len(s)))
	p.mem.put(a+l.ASCIISize, []byte(s))
	return a
}

// int is a positive int of at most 2 digits.
func (p *synthProcess) int(v uint64) uint64 {
	nl := p.r.nl
	a := p.alloc(nl.LongDigits + 8)
	p.mem.put64(a+p.r.l.ObjectType, p.types["int"])
	size := uint64(2)
	if nl.LongTag {
		size <<= longNonSizeBits
	}
	p.mem.put64(a+nl.LongSize, size)
	p.mem.put(a+nl.LongDigits, binary.LittleEndian.AppendUint32(nil, uint32(v&(1<<30-1))))
	p.mem.put(a+nl.LongDigits+4, binary.LittleEndian.AppendUint32(nil, uint32(v>>30)))
	return a
}

// dict is a combined dict of general entries (hash, key, value).
func (p *synthProcess) dict(keys, values []uint64) uint64 {
	nl := p.r.nl
	log2 := uint64(3)
	for usable(1<<log2) < uint64(len(keys)) {
		log2++
	}
	ixLog2 := log2
	switch {
	case log2 >= 16:
		ixLog2 += 2
	case log2 >= 8:
		ixLog2++
	}
	k := p.alloc(nl.KeysIndices + 1<<ixLog2 + uint64(len(keys))*nl.EntrySize)
	if nl.KeysLog2 {
		p.mem.put(k+nl.KeysSize, []byte{byte(log2)})
		p.mem.put(k+nl.KeysLog2IndexBytes, []byte{byte(ixLog2)})
		p.mem.put(k+nl.KeysKind, []byte{dictKeysGeneral})
	} else {
		p.mem.put64(k+nl.KeysSize, 1<<log2)
	}
	p.mem.put64(k+nl.KeysNentries, uint64(len(keys)))
	entries := k + nl.KeysIndices + 1<<ixLog2
	for i := range keys {
		p.mem.put64(entries+uint64(i)*nl.EntrySize+nl.EntryKey, keys[i])
		p.mem.put64(entries+uint64(i)*nl.EntrySize+nl.EntryValue, values[i])
	}
	d := p.alloc(nl.DictValues + 8)
	p.mem.put64(d+p.r.l.ObjectType, p.types["dict"])
	p.mem.put64(d+nl.DictKeys, k)
	return d
}

// process makes a runtime whose one interpreter's sys.modules has
// threading (after others), whose _active maps idents to objects of a
// class with a __dict__ at tp_dictoffset 16, as 3.9's Thread; the
// interpreter's address is returned with the runtime's.
func (p *synthProcess) process(others int, idents []uint64, threadDict uint64) {
	l, nl := p.r.l, p.r.nl
	cls := p.alloc(512)
	p.mem.put64(cls+nl.TypeFlags, tpflagsHeapType)
	p.mem.put64(cls+nl.TypeDictOffset, 16)
	var keys, values []uint64
	for _, id := range idents {
		th := p.alloc(32)
		p.mem.put64(th+l.ObjectType, cls)
		p.mem.put64(th+16, threadDict)
		keys, values = append(keys, p.int(id)), append(values, th)
	}
	active := p.dict(keys, values)
	md := p.dict([]uint64{p.str("_active")}, []uint64{active})
	mod := p.alloc(64)
	p.mem.put64(mod+l.ObjectType, p.types["module"])
	p.mem.put64(mod+nl.ModuleDict, md)
	keys, values = nil, nil
	other := p.str("threadinX") // of threading's length: its characters are read
	for i := 0; i < others; i++ {
		keys, values = append(keys, other), append(values, mod)
	}
	keys, values = append(keys, p.str("threading")), append(values, mod)
	modules := p.dict(keys, values)
	interp := p.alloc(nl.InterpModules + 8)
	p.mem.put64(interp+nl.InterpModules, modules)
	runtime := p.alloc(l.RuntimeInterpretersHead + 8)
	p.mem.put64(runtime+l.RuntimeInterpretersHead, interp)
	p.r.in.Runtime = runtime
}

func newSynthProcess(t *testing.T, minor int) *synthProcess {
	r, mem, types := synthReader(t, minor)
	at := uint64(0x100000)
	for _, name := range []string{"module"} {
		types[name] = at
		mem.put64(at+r.l.TypeName, at+0x800)
		mem.put(at+0x800, append([]byte(name), 0))
		at += 0x1000
	}
	r.in.StrType = types["str"]
	return &synthProcess{r: r, mem: mem, types: types, next: 0x200000}
}

// TestThreadNamesSynthetic reads made-up processes of 3.9 and 3.12
// layouts: a large sys.modules, and the bound on the reads of a call when
// every Thread's __dict__ is a dict of the most keys, none "_name".
func TestThreadNamesSynthetic(t *testing.T) {
	for _, minor := range []int{9, 12} {
		t.Run(fmt.Sprintf("3.%d", minor), func(t *testing.T) {
			p := newSynthProcess(t, minor)
			name := p.str("worker")
			threadDict := p.dict([]uint64{p.str("_ident"), p.str("_name")}, []uint64{name, name})
			p.process(maxDictEntries-1, []uint64{0x7f0000001000, 0x7f0000002000}, threadDict)
			if minor == 9 {
				// 3.9 has no ht_cached_keys in the table: not read.
				p.r.in.Version = lang.Version{Major: 3, Minor: 9}
			}
			counted := &countingMemory{mem: imageMemory(p.mem)}
			names, err := p.r.in.ThreadNames(counted)
			want := map[uint64]string{0x7f0000001000: "worker", 0x7f0000002000: "worker"}
			if err != nil || !reflect.DeepEqual(names, want) {
				t.Errorf("%v, %v; want %v", names, err, want)
			}
			t.Logf("%d reads with %d modules", counted.reads, maxDictEntries)

			// Every thread's dict: the most keys, of _name's length.
			p = newSynthProcess(t, minor)
			keys := make([]uint64, maxDictEntries)
			values := make([]uint64, maxDictEntries)
			for i := range keys {
				keys[i] = p.str("_namX")
				values[i] = keys[i]
			}
			threadDict = p.dict(keys, values)
			idents := make([]uint64, 64)
			for i := range idents {
				idents[i] = 0x7f0000000000 + uint64(i)<<12
			}
			p.process(10, idents, threadDict)
			counted = &countingMemory{mem: imageMemory(p.mem)}
			start := time.Now()
			names, err = p.r.in.ThreadNames(counted)
			if err == nil || !strings.Contains(err.Error(), "reads") || names != nil {
				t.Errorf("%v, %v; want an error saying the reads are too many", names, err)
			}
			if counted.reads > maxNameReads+1 {
				t.Errorf("%d reads, more than %d", counted.reads, maxNameReads)
			}
			t.Logf("%v: %d reads, %v", err, counted.reads, time.Since(start))
		})
	}
}

// TestNamesLayout313 takes the fields _Py_DebugOffsets carries from their
// slots (synthDebugOffsets has a distinct value in each), the rest from
// names313, and refuses what would send the reader outside a struct.
func TestNamesLayout313(t *testing.T) {
	b, d := synthDebugOffsets()
	got, err := namesLayout313(b, v313)
	if err != nil {
		t.Fatal(err)
	}
	want := names313
	want.InterpModules = d["interpreter_state.imports_modules"]
	want.DictKeys = d["dict_object.ma_keys"]
	want.DictValues = d["dict_object.ma_values"]
	want.LongSize = d["long_object.lv_tag"]
	want.LongDigits = d["long_object.ob_digit"]
	want.TypeFlags = d["type_object.tp_flags"]
	if got != want {
		t.Errorf("namesLayout313:\n got %+v\nwant %+v", got, want)
	}
	if _, err := namesLayout313(b, lang.Version{Major: 3, Minor: 12}); err == nil {
		t.Errorf("3.12: no error")
	}
	slot := map[string]int{}
	at := 24
	for _, g := range debugGroups313 {
		slot[g.name+".size"] = at
		at += 8
		for _, f := range g.offsets {
			slot[g.name+"."+f] = at
			at += 8
		}
	}
	for _, c := range []struct {
		name string
		val  uint64
		want string
	}{
		{"interpreter_state.imports_modules", d["interpreter_state.size"] - 4, "interpreter_state.imports_modules"},
		{"dict_object.ma_values", d["dict_object.size"] - 7, "dict_object.ma_values"},
		{"type_object.tp_flags", d["type_object.size"], "type_object.tp_flags"},
		{"long_object.lv_tag", d["long_object.ob_digit"] - 4, "long_object.lv_tag"},
	} {
		e := append([]byte(nil), b...)
		binary.LittleEndian.PutUint64(e[slot[c.name]:], c.val)
		nl, err := namesLayout313(e, v313)
		checkError(t, c.name, err, c.want)
		if nl != (namesLayout{}) {
			t.Errorf("%s: a layout with the error", c.name)
		}
	}
}
