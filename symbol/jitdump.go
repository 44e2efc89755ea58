package symbol

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/cctop/cctop/jit"
	"github.com/cctop/cctop/symbol/cfi"
)

// JIT runtimes that support perf's jitdump (node --perf-prof, the JVM's
// perf agent, python3.12+ -X perf_jit) write /tmp/jit-PID.dump: every
// function compiled, with the time it was placed at its address, its
// source lines and its unwinding information (package jit). perf finds
// the file because the runtime maps it with PROT_EXEC, as a marker: cctop
// sees that as an executable mapping, in a MMAP2 record or
// /proc/PID/maps, whose base name is jit-PID.dump.
//
// Unlike a perf map, a jitdump says when code was at an address, so a
// sample is named by the code that was there at its time (SetTime), not by
// whatever was compiled there last. It is asked before the perf map.

const (
	// jitDumpCatchUp is how often, at most, the file is read again while
	// the samples being symbolized are as new as what was read: a code
	// load they need may have been written since.
	jitDumpCatchUp = time.Millisecond
	// jitWriteSlack is how long after taking a record's timestamp a
	// runtime may take to write the record: a read at time T is taken to
	// hold every record timed before T minus this.
	jitWriteSlack = 10 * time.Millisecond
	// jitDumpReopen is how often a file that could not be opened is
	// tried again.
	jitDumpReopen = time.Second
	// maxJITDumpRead bounds the bytes read per refresh, as for perf maps.
	maxJITDumpRead = 16 << 20
	// maxJITProblems bounds the problem lines kept of processes gone.
	maxJITProblems = 16
)

// monoNow is CLOCK_MONOTONIC in ns, the clock of the samples' times and of
// the jitdump records, read as the Go runtime reads it (sampler.MonoNow).
var monoNow = func() uint64 { return uint64(nanotime()) }

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// jitDumps is the resolver's jitdump state beyond each process's.
type jitDumps struct {
	// time is the time of the sample being symbolized (SetTime), in
	// CLOCK_MONOTONIC ns; 0 when unknown.
	time uint64
	// done are the problems of the jitdumps of processes gone (or that
	// exec'd), one line each; more counts those past maxJITProblems.
	done []string
	more int
	// paths are the files of the jitdumps read, as their processes named
	// them, the first maxJITDumpPaths (JITDumpPaths).
	paths []string
}

// maxJITDumpPaths bounds the jitdump paths kept for JITDumpPaths.
const maxJITDumpPaths = 4096

// JITDumpPaths are the jitdump files the resolver read (the first
// maxJITDumpPaths, of processes gone included), by the path their
// processes mapped: the files a runtime cctop asked for one wrote, for
// cctop to remove.
func (r *Resolver) JITDumpPaths() []string { return r.dumps.paths }

// SetTime tells the resolver the time of the sample it is about to
// symbolize and unwind (CLOCK_MONOTONIC ns, the clock the sampler's
// events use; 0: unknown). JIT code named by a jitdump is named by the
// code that was at the address at that time.
func (r *Resolver) SetTime(ns uint64) { r.dumps.time = ns }

// isJITDump reports whether a mapping's path is a jitdump marker: a file
// whose base name is jit-<pid>.dump. The pid is the runtime's in its own
// PID namespace, so it is not compared with ours.
func isJITDump(path string) bool {
	base := filepath.Base(strings.TrimSuffix(path, " (deleted)"))
	digits, ok := strings.CutPrefix(base, "jit-")
	if !ok {
		return false
	}
	digits, ok = strings.CutSuffix(digits, ".dump")
	if !ok || digits == "" || len(digits) > 10 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// jitDump is one process's jitdump as read so far. The file is opened
// once, when its marker mapping is seen and the process surely alive, and
// kept open: it is read incrementally, and after the process is gone too.
type jitDump struct {
	pid     int
	mapping Mapping // the marker
	f       *os.File
	openErr error  // why the file could not be opened, while f is nil
	opened  uint64 // when it was last tried (CLOCK_MONOTONIC ns)
	dec     *jit.Decoder
	// checked is when the file was last read (CLOCK_MONOTONIC ns; 0:
	// never); known is up to when it is taken to hold every record.
	checked, known uint64
	hits           uint // lookups answered, to space out clock reads
}

// noteJITDump starts reading pid's jitdump when m is its marker, unless
// that file is being read already.
func (r *Resolver) noteJITDump(pid int, p *proc, m Mapping) {
	if !isJITDump(m.Path) {
		return
	}
	if d := p.dump; d != nil && d.mapping.Path == m.Path && (m.Inode == 0 || d.mapping.Inode == 0 || m.Inode == d.mapping.Inode) {
		return // the same file mapped again
	}
	r.retire(p)
	if path := strings.TrimSuffix(m.Path, " (deleted)"); len(r.dumps.paths) < maxJITDumpPaths && !slices.Contains(r.dumps.paths, path) {
		r.dumps.paths = append(r.dumps.paths, path)
	}
	d := &jitDump{pid: pid, mapping: m, dec: jit.NewDecoder()}
	d.open()
	p.dump = d
}

// loadJITDumps carries pid's jitdump over from old to p, its mappings
// read anew (LoadProc), and notes a marker among them.
func (r *Resolver) loadJITDumps(pid int, old, p *proc) {
	if old != nil {
		p.dump = old.dump
	}
	for i := range p.maps {
		r.noteJITDump(pid, p, p.maps[i].Mapping)
	}
}

// open opens the jitdump as the process sees it: through its root
// directory (its mount namespace), then the mapping itself
// (/proc/PID/map_files, which needs CAP_SYS_ADMIN or
// CAP_CHECKPOINT_RESTORE), then the path in ours, if it is the same file.
// The target controls these paths: a symlink it planted is not followed,
// a FIFO not blocked on, anything but a regular file not read.
func (d *jitDump) open() {
	d.opened = monoNow()
	p := "/proc/" + strconv.Itoa(d.pid)
	path := strings.TrimSuffix(d.mapping.Path, " (deleted)")
	var f *os.File
	var err error
	for i, name := range []string{
		p + "/root" + path,
		p + "/map_files/" + strconv.FormatUint(d.mapping.Start, 16) + "-" + strconv.FormatUint(d.mapping.Limit, 16),
		path,
	} {
		flags := os.O_RDONLY | syscall.O_NONBLOCK
		if i != 1 {
			// map_files entries are the kernel's links to the mapped
			// file itself.
			flags |= syscall.O_NOFOLLOW
		}
		var g *os.File
		if g, err = os.OpenFile(name, flags, 0); err != nil {
			continue
		}
		fi, serr := g.Stat()
		switch {
		case serr != nil:
			err = serr
		case !fi.Mode().IsRegular():
			err = fmt.Errorf("%s is not a regular file", name)
		case i == 2 && !sameInode(fi, d.mapping.Inode):
			err = fmt.Errorf("%s is not the file the process mapped", name)
		default:
			f = g
		}
		if f != nil {
			break
		}
		g.Close()
	}
	if f == nil {
		d.openErr = err
		return
	}
	d.f, d.openErr = f, nil
}

// sameInode reports whether fi is the file of inode ino (0: unknown).
func sameInode(fi os.FileInfo, ino uint64) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ino == 0 || !ok || uint64(st.Ino) == ino
}

// lookup is the code at pc at time at (0: unknown). The file is read
// again, for what the runtime appended, when the samples are as new as
// what was read (at most every jitDumpCatchUp), and on a miss, or every
// hitsPerCheck hits, at most every perfMapRecheck: a runtime that buffers
// its writes puts records in the file well after their time.
func (d *jitDump) lookup(pc, at uint64) (jit.Code, bool) {
	c, ok := d.dec.Table().Lookup(pc, at)
	behind := at != 0 && at+uint64(jitWriteSlack) >= d.known
	if ok && !behind {
		if d.hits++; d.hits%hitsPerCheck != 0 {
			return c, ok
		}
	}
	now := monoNow()
	every := uint64(perfMapRecheck)
	if behind {
		every = uint64(jitDumpCatchUp)
	}
	if d.checked != 0 && now-d.checked < every {
		return c, ok
	}
	if !d.refresh(now) {
		return c, ok
	}
	return d.dec.Table().Lookup(pc, at)
}

// refresh reads what the runtime appended since the last read, and
// reports whether the table may have changed.
func (d *jitDump) refresh(now uint64) bool {
	d.checked = now
	if d.f == nil {
		if now-d.opened < uint64(jitDumpReopen) {
			return false
		}
		if d.open(); d.f == nil {
			return false
		}
	}
	if d.dec.Err() != nil {
		d.known = now // nothing more will be decoded
		return false
	}
	fi, err := d.f.Stat()
	if err != nil {
		return false
	}
	if fi.Size() < d.dec.Fed() {
		// Truncated: the runtime started the file over.
		d.dec = jit.NewDecoder()
	}
	if fi.Size() == d.dec.Fed() {
		d.known = now
		return false // nothing new: the common case, one fstat
	}
	buf := make([]byte, 64<<10)
	eof := false
	for read := 0; read < maxJITDumpRead; {
		n, err := d.f.ReadAt(buf, d.dec.Fed())
		if d.dec.Feed(buf[:n]) != nil {
			break
		}
		read += n
		if err != nil || n == 0 {
			eof = true // io.EOF: the rest is not written yet
			break
		}
	}
	if eof || d.dec.Err() != nil {
		d.known = now
	}
	return true
}

// problem is the jitdump's trouble in one line, "" when there is none:
// decoding stopped at a damaged record, or (when the file is final) the
// file ends inside one, or it could not be read, or its times are not
// CLOCK_MONOTONIC.
func (d *jitDump) problem(final bool) string {
	loads, _ := d.dec.Records()
	kept := fmt.Sprintf("the %d functions loaded before it are named", loads[0])
	switch {
	case d.f == nil && d.openErr != nil:
		return fmt.Sprintf("%s: cannot read it: %v", d.mapping.Path, d.openErr)
	case d.dec.Err() != nil:
		return fmt.Sprintf("%s: damaged at %v; %s, the rest is not", d.mapping.Path, d.dec.Err(), kept)
	case final && d.dec.Incomplete() != nil:
		return fmt.Sprintf("%s: truncated at %v; %s", d.mapping.Path, d.dec.Incomplete(), kept)
	case d.dec.Table().Timeless():
		return fmt.Sprintf("%s: timed by the CPU's counter (JITDUMP_FLAGS_ARCH_TIMESTAMP), not CLOCK_MONOTONIC: each address is named by the newest code the file puts there", d.mapping.Path)
	}
	return ""
}

// retire reads the last of p's jitdump, its process gone or its image
// replaced, keeps its problem for JITProblems and closes it.
func (r *Resolver) retire(p *proc) {
	d := p.dump
	if d == nil {
		return
	}
	p.dump = nil
	if d.f != nil {
		d.refresh(monoNow())
		d.f.Close()
	}
	r.dumps.keep(d.problem(true))
}

func (s *jitDumps) keep(problem string) {
	switch {
	case problem == "":
	case len(s.done) < maxJITProblems:
		s.done = append(s.done, problem)
	default:
		s.more++
	}
}

// retireJITDump retires pid's jitdump (Exit, Exec).
func (r *Resolver) retireJITDump(pid int) {
	if p := r.procs[pid]; p != nil {
		r.retire(p)
	}
}

// JITProblems says what went wrong with the jitdumps read, one line per
// file: a damaged record (decoding stopped there, what came before is
// used), a file that ends inside a record, one that could not be read, one
// timed by the CPU's counter. The files of processes still running are
// read to their current end first; a record they end inside counts only
// if the process is gone.
func (r *Resolver) JITProblems() []string {
	out := append([]string(nil), r.dumps.done...)
	more := r.dumps.more
	for pid, p := range r.procs {
		d := p.dump
		if d == nil {
			continue
		}
		d.refresh(monoNow())
		if s := d.problem(procGone(pid)); s != "" {
			if len(out) < maxJITProblems {
				out = append(out, s)
			} else {
				more++
			}
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more jitdump files with problems", more))
	}
	return out
}

// jitDumpLookup appends the frame of pc from p's jitdump, if it names pc
// at the sample's time.
func (r *Resolver) jitDumpLookup(p *proc, pc uint64, dst []Frame) ([]Frame, bool) {
	if p.dump == nil {
		return dst, false
	}
	c, ok := p.dump.lookup(pc, r.dumps.time)
	if !ok {
		return dst, false
	}
	f := Frame{Func: c.Name, Module: jitModule, Addr: pc}
	if file, line, ok := c.Line(pc); ok {
		f.File, f.Line = file, line
	}
	// The inlining the runtime recorded there (cctop's JVMTI agent):
	// the methods inlined, innermost first, then the compiled method
	// itself, at the line of the call in it.
	if chain := c.Inline(pc); len(chain) > 0 {
		for _, in := range chain[:len(chain)-1] {
			dst = append(dst, Frame{Func: in.Func, File: in.File, Line: in.Line, Module: jitModule, Addr: pc, Inlined: true})
		}
		if out := chain[len(chain)-1]; out.File != "" {
			f.File, f.Line = out.File, out.Line
		}
	}
	return append(dst, f), true
}

// jitDumpRule is the CFI rule at pc from the unwinding information p's
// jitdump gives for the code there at the sample's time.
func (r *Resolver) jitDumpRule(p *proc, pc uint64) (cfi.Rule, bool) {
	if p == nil || p.dump == nil {
		return cfi.Rule{}, false
	}
	c, ok := p.dump.lookup(pc, r.dumps.time)
	if !ok {
		return cfi.Rule{}, false
	}
	return c.Rule(pc)
}

// procGone reports whether pid has ended: gone, or a zombie not yet
// reaped (the target cctop launched, at the end of a recording).
func procGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}
