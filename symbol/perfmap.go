package symbol

import (
	"bytes"
	"container/heap"
	"github.com/cctop/cctop/jit"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// JIT compilers (V8 with --perf-basic-prof, the JVM with perf-map-agent,
// .NET, LuaJIT, ...) put their code in anonymous memory, which has no file
// to read symbols from. Instead they write /tmp/perf-PID.map, one line per
// compiled function, as perf documents in
// tools/perf/Documentation/jit-interface.txt:
//
//	START SIZE symbolname
//
// START and SIZE are hex (perf writes them without 0x; we accept it), the
// name is the rest of the line and may contain spaces. The file only grows
// while the process runs, and a later line for the same addresses describes
// code compiled over freed code, so it supersedes the earlier one.

// jitModule is the Module of frames named by a perf map: one module for all
// JIT code, whatever mapping it lives in, so that one function recompiled
// into another code region stays one node.
const jitModule = "[jit]"

// JITModule is the Module of frames a perf map or jitdump named.
const JITModule = jitModule

const (
	// maxPerfMapEntries bounds one process's table. A JIT that runs for
	// days logs every function it ever compiled; past the bound the table
	// starts over from the newest entries, as the module caches do, since
	// code compiled long ago has mostly been freed or recompiled.
	maxPerfMapEntries = 1 << 20
	// maxPerfMapLine bounds a line; longer ones are garbage to us and
	// are skipped, so a file without newlines cannot grow a buffer.
	maxPerfMapLine = 16 << 10
	// perfMapBatch is how many parsed lines are merged into the table at
	// once: large enough that merging (linear in the table) is amortized,
	// small enough to bound the memory of a read in progress.
	perfMapBatch = 64 << 10
	// maxPerfMapRead bounds the bytes read per refresh, so a huge file is
	// taken in over several refreshes instead of stalling the sample
	// stream for seconds.
	maxPerfMapRead = 16 << 20
	// perfMapRecheck is how often a process's perf map is stat'ed for new
	// lines: lookups in JIT code come in storms of millions, and the names
	// a JIT writes matter to us within human time, not per sample.
	perfMapRecheck = 100 * time.Millisecond
)

// anonCode reports whether a mapping path is memory where JIT code may
// live: anonymous memory as /proc/PID/maps ("") and perf's MMAP records
// ("//anon") name it, named anonymous memory ("[anon:name]"), shared
// anonymous memory ("/dev/zero (deleted)"), memfds (used by JITs that map
// their code twice, writable and executable), huge pages, and the heap of
// old JITs that mprotect malloc'd memory.
func anonCode(path string) bool {
	if path == "" || path == "[heap]" {
		return true
	}
	for _, p := range []string{"//anon", "[anon", "/memfd:", "/dev/zero", "/anon_hugepage"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// jitSym is one named range of JIT code, [start, end).
type jitSym struct {
	start, end uint64
	name       string
}

// jitTable is a sorted, non-overlapping set of ranges.
type jitTable []jitSym

func (t jitTable) find(pc uint64) (string, bool) {
	s, ok := t.holding(pc)
	return s.name, ok
}

// merge returns t with batch (in file order) applied: every line's range
// replaces whatever the table, or an earlier line, had there.
func (t jitTable) merge(batch []jitSym) jitTable {
	news := paint(batch)
	if len(t)+len(news) > maxPerfMapEntries {
		// Start over from the newest; see maxPerfMapEntries.
		t = nil
	}
	if len(t) == 0 {
		return jitTable(news)
	}
	if len(news) == 0 {
		return t
	}
	if t[len(t)-1].end <= news[0].start {
		// Code compiled past everything seen so far: nothing to cut.
		return append(t, news...)
	}
	out := make(jitTable, 0, len(t)+2*len(news))
	j := 0 // first new range that may overlap the current old one
	k := 0 // next new range to emit
	emit := func(s jitSym) {
		// Emit the new ranges that start before s, keeping out sorted.
		for k < len(news) && news[k].start < s.start {
			out = append(out, news[k])
			k++
		}
		out = append(out, s)
	}
	for _, o := range t {
		for j < len(news) && news[j].end <= o.start {
			j++
		}
		cur := o.start
		for i := j; i < len(news) && news[i].start < o.end; i++ {
			if news[i].start > cur {
				emit(jitSym{cur, news[i].start, o.name})
			}
			cur = max(cur, news[i].end)
		}
		if cur < o.end {
			emit(jitSym{cur, o.end, o.name})
		}
	}
	return append(out, news[k:]...)
}

// paint resolves overlaps within a batch in file order: at every address
// the last line covering it wins. The result is sorted and disjoint.
func paint(batch []jitSym) []jitSym {
	disjoint := true
	for i := 1; i < len(batch); i++ {
		if batch[i].start < batch[i-1].end {
			disjoint = false
			break
		}
	}
	if disjoint {
		// The common case: a JIT filling a code region upwards.
		return batch
	}
	// Sweep the boundaries in address order, with the lines covering the
	// current point in a heap by file position.
	order := make([]int, len(batch))
	bounds := make([]uint64, 0, 2*len(batch))
	for i, s := range batch {
		order[i] = i
		bounds = append(bounds, s.start, s.end)
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := compareU64(batch[a].start, batch[b].start); c != 0 {
			return c
		}
		return a - b
	})
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	live := &newestFirst{}
	out := make([]jitSym, 0, len(batch))
	last := -1 // line that produced out's last range
	next := 0
	for b := 0; b+1 < len(bounds); b++ {
		x := bounds[b]
		for next < len(order) && batch[order[next]].start <= x {
			heap.Push(live, order[next])
			next++
		}
		for live.Len() > 0 && batch[(*live)[0]].end <= x {
			heap.Pop(live)
		}
		if live.Len() == 0 {
			last = -1
			continue
		}
		w := (*live)[0]
		if w == last && out[len(out)-1].end == x {
			out[len(out)-1].end = bounds[b+1]
			continue
		}
		out = append(out, jitSym{x, bounds[b+1], batch[w].name})
		last = w
	}
	return out
}

func compareU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// newestFirst is a max-heap of line numbers.
type newestFirst []int

func (h newestFirst) Len() int           { return len(h) }
func (h newestFirst) Less(i, j int) bool { return h[i] > h[j] }
func (h newestFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *newestFirst) Push(x any)        { *h = append(*h, x.(int)) }
func (h *newestFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// perfMapParser turns a perf map's bytes, fed in arbitrary chunks, into
// entries merged into a table. Only complete lines are parsed: a JIT's
// write may be caught halfway, and the rest of the line arrives later.
type perfMapParser struct {
	syms     jitTable
	batch    []jitSym // parsed lines not yet merged, in file order
	partial  []byte   // the incomplete last line
	skipping bool     // in a line longer than maxPerfMapLine: drop up to its newline
	lines    uint64   // lines parsed, all told
}

func (p *perfMapParser) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !p.skipping {
				if len(p.partial)+len(b) > maxPerfMapLine {
					p.partial, p.skipping = p.partial[:0], true
				} else {
					p.partial = append(p.partial, b...)
				}
			}
			return
		}
		switch {
		case p.skipping:
			p.skipping = false
		case len(p.partial) > 0:
			if len(p.partial)+i <= maxPerfMapLine {
				p.line(append(p.partial, b[:i]...))
			}
			p.partial = p.partial[:0]
		case i <= maxPerfMapLine:
			p.line(b[:i])
		}
		b = b[i+1:]
	}
}

func (p *perfMapParser) line(b []byte) {
	s, ok := parsePerfMapLine(b)
	if !ok {
		return
	}
	p.batch = append(p.batch, s)
	p.lines++
	if len(p.batch) >= perfMapBatch {
		p.flush()
	}
}

// flush merges the parsed lines into the table.
func (p *perfMapParser) flush() {
	if len(p.batch) == 0 {
		return
	}
	p.syms = p.syms.merge(p.batch)
	// The table may hold the batch itself (see merge and paint).
	p.batch = nil
}

// parsePerfMapLine parses "START SIZE name". Lines that are not that, or
// name an empty or wrapping range, are skipped by the caller.
func parsePerfMapLine(b []byte) (jitSym, bool) {
	start, b, ok := hexField(b)
	if !ok {
		return jitSym{}, false
	}
	size, b, ok := hexField(b)
	if !ok || size == 0 || start+size < start || len(b) == 0 || (b[0] != ' ' && b[0] != '\t') {
		return jitSym{}, false
	}
	name := bytes.TrimRight(bytes.TrimLeft(b, " \t"), " \t\r")
	if len(name) == 0 {
		return jitSym{}, false
	}
	return jitSym{start, start + size, jit.CleanName(name)}, true
}

// hexField parses blank-padded hex digits, with an optional 0x, and
// returns what follows them.
func hexField(b []byte) (uint64, []byte, bool) {
	b = bytes.TrimLeft(b, " \t")
	if len(b) >= 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	var v uint64
	n := 0
	for ; n < len(b); n++ {
		d, ok := unhex(b[n])
		if !ok {
			break
		}
		if v>>60 != 0 {
			return 0, nil, false // more than 64 bits
		}
		v = v<<4 | uint64(d)
	}
	if n == 0 {
		return 0, nil, false
	}
	return v, b[n:], true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// perfMap is one process's perf map as read so far. It is read
// incrementally: only the bytes past off are parsed on a refresh, and a
// file that was replaced or truncated is read again from the start.
type perfMap struct {
	paths   []string    // where the file may be, in order of preference
	name    string      // the file as the process names it (PerfMap.Path)
	file    os.FileInfo // the file read so far; nil before the first
	at      int         // the index in paths file was found at
	off     int64       // bytes of file consumed (parsed or held as partial)
	parser  perfMapParser
	checked time.Time     // last refresh; zero before the first
	every   time.Duration // minimum time between refreshes
	now     func() time.Time
	hits    uint // lookups answered, to space out clock reads
	// version changes whenever a refresh changes the table (PerfMap.Version).
	version uint64
}

// newPerfMap finds pid's perf map the way the JIT named it: inside its
// mount namespace, with its pid as its own PID namespace numbers it. The
// path in our namespace is the fallback for when /proc/PID/root cannot be
// followed (the process is gone, or we lack the permission).
func newPerfMap(pid int) *perfMap {
	p := strconv.Itoa(pid)
	name := "/tmp/perf-" + strconv.Itoa(nsPID(pid)) + ".map"
	return &perfMap{
		paths: []string{
			"/proc/" + p + "/root" + name, // PerfMapPath
			"/tmp/perf-" + p + ".map",
		},
		name:  name,
		every: perfMapRecheck,
		now:   time.Now,
	}
}

// PerfMapPath is where process pid's perf map is, seen from here: its
// /tmp, under the pid its own PID namespace gives it.
func PerfMapPath(pid int) string {
	return "/proc/" + strconv.Itoa(pid) + "/root/tmp/perf-" + strconv.Itoa(nsPID(pid)) + ".map"
}

// nsPID is pid as seen in its innermost PID namespace: the last field of
// the NSpid line of /proc/PID/status (Linux 4.1+), else pid itself.
func nsPID(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return pid
	}
	return parseNSpid(string(data), pid)
}

func parseNSpid(status string, pid int) int {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return pid
		}
		n, err := strconv.Atoi(f[len(f)-1])
		if err != nil || n <= 0 {
			return pid
		}
		return n
	}
	return pid
}

// lookup names pc from the perf map. The file is checked for new lines at
// most once per m.every: on a miss, the JIT may just have compiled the
// code; on a hit too, though the clock is only read every hitsPerCheck
// hits, because a JIT reuses freed code memory, so a hit can be a stale
// name that a newer line supersedes.
func (m *perfMap) lookup(pc uint64) (string, bool) {
	name, ok := m.parser.syms.find(pc)
	if m.hits++; ok && m.hits%hitsPerCheck != 0 {
		return name, ok
	}
	now := m.now()
	if !m.checked.IsZero() && now.Sub(m.checked) < m.every {
		return name, ok
	}
	m.checked = now
	m.refresh()
	return m.parser.syms.find(pc)
}

// hitsPerCheck spaces out clock reads on the hot path: a hit costs a
// binary search, and reading the clock can cost more (100 ns on some VMs).
const hitsPerCheck = 16

// refresh reads what was appended to the file since the last refresh.
func (m *perfMap) refresh() {
	at, path, fi := m.stat()
	if fi == nil {
		// Not there (yet, or any more: a JIT may remove it at exit).
		// What was read stays valid for the code still being sampled.
		return
	}
	if m.file != nil && os.SameFile(m.file, fi) && fi.Size() == m.off {
		return // nothing new: the common case, one lstat
	}
	if m.file != nil && at > m.at && !os.SameFile(m.file, fi) {
		// The file read before is out of reach where it was found (the
		// process is gone, and /proc/PID/root with it): another file at
		// a fallback path is another namespace's, not this process's.
		return
	}
	lines := m.parser.lines
	// The target controls this path: do not follow a symlink it planted,
	// and do not block on a FIFO.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if m.file == nil || !os.SameFile(m.file, fi) || fi.Size() < m.off {
		// Another file, or this one truncated: its lines describe
		// another process image (or the JIT started over).
		m.off, m.parser, lines = 0, perfMapParser{}, 0
		if m.file != nil {
			m.version++ // the old table is gone
		}
	}
	m.file, m.at = fi, at
	buf := make([]byte, 64<<10)
	for read := 0; read < maxPerfMapRead; {
		n, err := f.ReadAt(buf, m.off)
		m.parser.feed(buf[:n])
		m.off += int64(n)
		read += n
		if err != nil || n == 0 {
			break // io.EOF: the rest is not written yet
		}
	}
	m.parser.flush()
	if m.parser.lines != lines {
		m.version++
	}
}

// stat returns the first of m.paths that is a regular file, and its index.
func (m *perfMap) stat() (int, string, os.FileInfo) {
	for i, p := range m.paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return i, p, fi
		}
	}
	return 0, "", nil
}

// unnamedJIT marks what lookup appended for pc in anonymous memory,
// dst[n:], as JIT code a perf map may name later (Frame.JIT) when it is
// one frame without a name: a file-backed anonymous mapping (a memfd)
// whose file names nothing. Its Addr becomes the pc, by which a perf map
// names code.
func unnamedJIT(dst []Frame, n int, pc uint64) []Frame {
	if len(dst) == n+1 && dst[n].Func == "" {
		dst[n].JIT, dst[n].Addr = true, pc
	}
	return dst
}

// PerfMap is a process's perf map as the resolver has read it, for naming
// after the fact the pcs that no map named when they were sampled
// (Frame.JIT): runtimes write their maps late, the JVM with
// -XX:+DumpPerfMapAtExit only as it exits. The zero PerfMap, of a process
// that never ran anonymous code, names nothing.
//
// It belongs to the resolver's goroutine, as the resolver does. It stays
// usable after the process's exit or exec (Exit, Exec), which drop the
// resolver's own: whoever took it before reads the map's last lines after.
type PerfMap struct{ m *perfMap }

// PerfMap is pid's perf map, opened by the first lookup in its anonymous
// memory; the zero PerfMap when there was none.
func (r *Resolver) PerfMap(pid int) PerfMap {
	if p := r.procs[pid]; p != nil && p.jit != nil {
		return PerfMap{p.jit}
	}
	return PerfMap{}
}

// maxFinalReads bounds Refresh(true): the file is taken in maxPerfMapRead
// bytes at a time.
const maxFinalReads = 64

// Refresh reads what the map's file gained since it was last read: at
// most once per recheck interval, as lookups do, or with now at once and
// to the end of the file (the process ended, or the profile is being
// written). The clock and the file are all it touches.
func (pm PerfMap) Refresh(now bool) {
	m := pm.m
	if m == nil {
		return
	}
	t := m.now()
	if !now && !m.checked.IsZero() && t.Sub(m.checked) < m.every {
		return
	}
	m.checked = t
	for range maxFinalReads {
		file, off := m.file, m.off
		m.refresh()
		if !now || (m.file == file && m.off == off) {
			return
		}
	}
}

// Version changes whenever a read changes the map's table: a caller that
// keeps the last one it saw knows cheaply whether the map names more.
func (pm PerfMap) Version() uint64 {
	if pm.m == nil {
		return 0
	}
	return pm.m.version
}

// Frame names pc from the map as read so far, with no I/O: the frame
// Lookup gives JIT code that a perf map names.
func (pm PerfMap) Frame(pc uint64) (Frame, bool) {
	if pm.m == nil {
		return Frame{}, false
	}
	name, ok := pm.m.parser.syms.find(pc)
	if !ok {
		return Frame{}, false
	}
	return Frame{Func: name, Module: jitModule, Addr: pc}, true
}

// Path is the map's file as the process names it, /tmp/perf-PID.map with
// PID as its own namespace numbers it, whether or not it was found.
func (pm PerfMap) Path() string {
	switch {
	case pm.m == nil:
		return ""
	case pm.m.name != "":
		return pm.m.name
	case len(pm.m.paths) > 0:
		return pm.m.paths[len(pm.m.paths)-1]
	}
	return ""
}

// Found reports whether the map's file was found and read.
func (pm PerfMap) Found() bool { return pm.m != nil && pm.m.file != nil }

// Entries is how many ranges of code the map names.
func (pm PerfMap) Entries() int {
	if pm.m == nil {
		return 0
	}
	return len(pm.m.parser.syms)
}
