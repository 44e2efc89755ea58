// Package jit reads the jitdump files that JIT runtimes write for
// profilers (node --perf-prof, the JVM's perf agent, python3.12+ -X
// perf_jit) and answers which code was at an address at a time.
//
// It owns the file format, as linux's
// tools/perf/Documentation/jitdump-specification.txt describes it: the
// file header, the records (code load, move, debug info, close, unwinding
// info, and cctop's own inline chains, JIT_CODE_INLINE), their bounds and
// what a damaged file means; an incremental decoder that takes the file's
// bytes in chunks as the runtime appends them; and the table of code by
// address and time that the records build, with each code's source lines,
// call frame information and inline chains.
//
// It is pure: it is handed bytes and asked about pcs and times. Finding
// the file of a process, reading it and the clock are the caller's
// (symbol/jitdump.go). Nothing here panics or loops on malformed input,
// and what it keeps is bounded whatever the file says.
package jit

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The file header (jitheader in perf's util/jitdump.h).
const (
	magic        = 0x4A695444 // "JiTD" in the writer's byte order
	magicSwapped = 0x4454694A // the same, written by a machine of the other byte order
	version      = 1
	// headerSize is the header as version 1 defines it: magic, version,
	// total_size, elf_mach, pad1, pid (u32 each), timestamp, flags (u64).
	headerSize = 40
	// maxHeader bounds the header's total_size: a later version may add
	// fields, which are skipped, but not kilobytes of them.
	maxHeader = 4096
	// FlagArchTimestamp (JITDUMP_FLAGS_ARCH_TIMESTAMP): the records are
	// timed by an architecture's counter (x86's TSC), not CLOCK_MONOTONIC.
	FlagArchTimestamp = 1 << 0
)

// Record types (enum jit_record_type).
const (
	recLoad      = 0 // JIT_CODE_LOAD
	recMove      = 1 // JIT_CODE_MOVE
	recDebugInfo = 2 // JIT_CODE_DEBUG_INFO
	recClose     = 3 // JIT_CODE_CLOSE
	recUnwinding = 4 // JIT_CODE_UNWINDING_INFO
	// recInline (JIT_CODE_INLINE, "cc" and 1) is cctop's own record, which
	// its JVMTI agent (package jvmagent) writes just before the
	// JIT_CODE_LOAD of a compiled method, as a debug info is written: the
	// inlining the JIT did, per recorded pc, as the chain of methods whose
	// code is there, innermost first, the compiled method last:
	//
	//	u64 code_addr, u64 nr_entry, then nr_entry entries of
	//	  u64 pc, u32 depth, then depth frames of
	//	    u32 line, name (NUL-terminated), file (NUL-terminated)
	//
	// padded with zeros to 8 bytes. An id far above the standard ones,
	// which perf skips (util/jitdump.c: "unknown record type").
	recInline = 0x63630001
)

const (
	// recordHeader is every record's: id, total_size (u32), timestamp (u64).
	recordHeader = 16
	// MaxRecord bounds a record's total_size. The largest real records
	// are code loads, which carry the code: a few megabytes for the
	// largest functions. A size beyond it is a damaged file, not a
	// record to wait for.
	MaxRecord = 64 << 20
	// loadFixed, moveFixed, debugFixed and unwindFixed are the fixed
	// fields of each record type, header included.
	loadFixed   = recordHeader + 4 + 4 + 8*4
	moveFixed   = recordHeader + 4 + 4 + 8*5
	debugFixed  = recordHeader + 8 + 8
	unwindFixed = recordHeader + 8*3
	inlineFixed = recordHeader + 8 + 8
	// inlineEntryMin is the smallest inline entry: pc (u64), depth (u32);
	// inlineFrameMin a frame's: line (u32) and two empty names.
	inlineEntryMin = 8 + 4
	inlineFrameMin = 4 + 1 + 1
	// maxInlineDepth bounds the frames of one chain; a deeper chain is a
	// damaged record.
	maxInlineDepth = 256
	// debugEntryMin is the smallest debug entry: addr (u64), lineno,
	// discrim (u32) and an empty file name's terminator.
	debugEntryMin = 8 + 4 + 4 + 1
	// maxName bounds the bytes kept of a function or file name; the rest
	// is cut. The record's size bounds what is read.
	maxName = 4096
	// maxLines bounds the debug entries kept for one code; the rest are
	// read and dropped. A JIT's function has one per statement or so.
	maxLines = 1 << 16
	// maxEHFrame bounds the unwinding data kept for one code: a JIT's
	// function has one FDE or a handful, a few hundred bytes.
	maxEHFrame = 1 << 20
)

// FormatError is a damaged jitdump: what is wrong, and the file offset of
// the header or record where decoding stopped. What was decoded before it
// stays valid.
type FormatError struct {
	Offset int64
	What   string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("offset %d: %s", e.Offset, e.What)
}

// Header is the file header.
type Header struct {
	Version   uint32
	ElfMach   uint32 // ELF e_machine of the code (62: x86-64)
	PID       uint32 // the runtime's pid, as its PID namespace numbers it
	Timestamp uint64 // when the file was created, in the records' clock
	Flags     uint64
	// Swapped: the file was written in the other byte order than this
	// machine's reading of the magic assumed; the decoder reads it so.
	Swapped bool
}

// ArchTimestamp reports whether the records are timed by an
// architecture's counter rather than CLOCK_MONOTONIC: such times cannot
// be compared with a sample's, so the table orders code by file order
// and answers with the newest (Table.Timeless).
func (h Header) ArchTimestamp() bool { return h.Flags&FlagArchTimestamp != 0 }

// reader decodes the fields of one record. Reading past the end sets bad
// and yields zeros, so a record is checked once after its fields.
type reader struct {
	b     []byte
	pos   int
	order binary.ByteOrder
	bad   bool
}

func (r *reader) take(n int) []byte {
	if n < 0 || n > len(r.b)-r.pos {
		r.bad = true
		r.pos = len(r.b)
		return nil
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return r.order.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return r.order.Uint64(b)
	}
	return 0
}

// cstring is the NUL-terminated string at the current position, without
// its terminator, uncopied; ok is false when the record ends first.
func (r *reader) cstring() (s []byte, ok bool) {
	for i := r.pos; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s = r.b[r.pos:i]
			r.pos = i + 1
			return s, true
		}
	}
	return nil, false
}

func (r *reader) left() int { return len(r.b) - r.pos }

// CleanName keeps a name as the runtime wrote it, cut to maxName bytes,
// except for what must not reach a terminal or a profile: control
// characters (a hostile target could drive the user's terminal through
// the TUI) and invalid UTF-8.
func CleanName(b []byte) string {
	if len(b) > maxName {
		b = b[:maxName]
	}
	clean := utf8.Valid(b)
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return string(b)
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
