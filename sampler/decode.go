package sampler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Record types of the perf ring (include/uapi/linux/perf_event.h).
const (
	recMmap        = 1
	recLost        = 2
	recComm        = 3
	recExit        = 4
	recThrottle    = 5
	recUnthrottle  = 6
	recFork        = 7
	recSample      = 9
	recMmap2       = 10
	recLostSamples = 13
	// PERF_RECORD_SWITCH: a task event's task switched in or out; the
	// body is the sample_id alone. SWITCH_CPU_WIDE, of a CPU-wide event,
	// adds the task switched to or from first.
	recSwitch        = 14
	recSwitchCPUWide = 15
)

// Sample format bits (perf_event_attr.sample_type).
const (
	sampleIP         = 1 << 0
	sampleTID        = 1 << 1
	sampleTime       = 1 << 2
	sampleAddr       = 1 << 3
	sampleRead       = 1 << 4
	sampleCallchain  = 1 << 5
	sampleID         = 1 << 6
	sampleCPU        = 1 << 7
	samplePeriod     = 1 << 8
	sampleStreamID   = 1 << 9
	sampleRaw        = 1 << 10
	sampleBranch     = 1 << 11
	sampleRegsUser   = 1 << 12
	sampleStackUser  = 1 << 13
	sampleIdentifier = 1 << 16
)

// Read format bits (perf_event_attr.read_format).
const (
	readTotalTimeEnabled = 1 << 0
	readTotalTimeRunning = 1 << 1
	readID               = 1 << 2
	readGroup            = 1 << 3
)

// Header misc bits.
const (
	miscCPUModeMask = 0x7
	miscKernel      = 1
	miscUser        = 2
	miscCommExec    = 1 << 13
	// PERF_RECORD_MISC_SWITCH_OUT and _OUT_PREEMPT, on switch records.
	miscSwitchOut        = 1 << 13
	miscSwitchOutPreempt = 1 << 14
	miscMmapBuildID      = 1 << 14
)

// Callchain context markers: the kernel separates the kernel and user parts of
// a callchain with these values in place of addresses.
const (
	contextHV          = ^uint64(32) + 1   // -32
	contextKernel      = ^uint64(128) + 1  // -128
	contextUser        = ^uint64(512) + 1  // -512
	contextGuest       = ^uint64(2048) + 1 // -2048
	contextGuestKernel = ^uint64(2176) + 1 // -2176
	contextGuestUser   = ^uint64(2560) + 1 // -2560
	contextMax         = ^uint64(4095) + 1 // -4095: values above this are markers
)

// Kind says what a Record holds.
type Kind uint8

const (
	KindSample Kind = iota + 1
	KindMmap
	KindComm
	KindFork
	KindExit
	KindLost
	KindThrottle
	KindUnthrottle
	// KindGone is made up by cctop: process PID has ended and every
	// record of it has been handed on; what is kept of it can go.
	KindGone
	// KindSwitch is a context switch of thread TID at Time
	// (PERF_RECORD_SWITCH, or SWITCH_CPU_WIDE): out of the CPU when
	// SwitchOut, back on it otherwise.
	KindSwitch
	// KindNewProcess is made up by cctop in an AllProcesses session:
	// process PID, which may have been running since before the session
	// began (the kernel reports no mappings of those), is tracked from
	// now on; what is kept of it is to be read from /proc. It comes
	// first in its batch (Time 0), before any record of the process.
	KindNewProcess
)

func (k Kind) String() string {
	switch k {
	case KindSample:
		return "sample"
	case KindMmap:
		return "mmap"
	case KindComm:
		return "comm"
	case KindFork:
		return "fork"
	case KindExit:
		return "exit"
	case KindLost:
		return "lost"
	case KindThrottle:
		return "throttle"
	case KindUnthrottle:
		return "unthrottle"
	case KindGone:
		return "gone"
	case KindSwitch:
		return "switch"
	case KindNewProcess:
		return "new process"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Value is one counter of a group read.
type Value struct {
	ID    uint64
	Value uint64
}

// Record is one decoded ring record. Only the fields of its Kind are set.
// Chain and Values alias the decoder's buffers: they are valid until the next
// decode, and Batch.add copies them.
type Record struct {
	Kind Kind
	Misc uint16
	PID  uint32
	TID  uint32
	Time uint64
	CPU  uint32
	ID   uint64 // event id (sample_id / identifier)

	// KindSample
	IP     uint64
	Period uint64
	// OffCPU: the sample is of a thread leaving the CPU or off it, not of
	// its running: taken at a context switch (the context-switches event)
	// or, Probed, read from /proc while the thread was blocked. Its weight
	// is the time off the CPU that the KindSwitch records measure.
	OffCPU, Probed bool
	// Syscall is the system call a probed thread was blocked in, -1 when
	// it was not in one (preempted in user space) or not known.
	//
	// A probed sample is made up by the wait probes (waitprobe.go): IP
	// is the thread's user PC, Regs and RegsMask are laid out as the
	// primary group's stack-copy samples with only IP and SP set (no
	// UserFP), Stack is copied from SP, Chain is the user marker and the
	// PC, Period is 1, and Time is CLOCK_MONOTONIC, as every event's is
	// under Config.OffCPU.
	Syscall int32
	// StackWord is the user stack's top word (the return address at a
	// function's entry), when HasStackWord; StackWord2 the next one, when
	// HasStackWord2. UserFP is the user frame-pointer register (BP, x29)
	// at the sample, when HasUserFP.
	StackWord, StackWord2       uint64
	HasStackWord, HasStackWord2 bool
	UserFP                      uint64
	HasUserFP                   bool
	// Regs are the user registers in the order of RegsMask's bits
	// (perf_regs.h numbering), and Stack the copy of the user stack from
	// the stack pointer up, when the format asks for them (UserStack).
	Regs     []uint64
	RegsMask uint64
	Stack    []byte
	// StackSize is the copy the sample's event asked for (its
	// sample_stack_user), which differs between threads whose copies
	// SetUserStacks changed; Stack holds as much of it as the stack had.
	StackSize   uint32
	Chain       []uint64 // raw callchain with context markers
	Branches    []Branch // the branch stack, newest first, when the format has one
	TimeEnabled uint64   // group read
	TimeRunning uint64
	Values      []Value

	// KindMmap (MMAP and MMAP2)
	Addr, Len, PgOff uint64
	Major, Minor     uint32
	Inode            uint64
	BuildID          []byte
	Prot, Flags      uint32
	Filename         string

	// KindComm
	Comm string

	// KindFork, KindExit: PID/TID are the new/exiting task
	PPID, PTID uint32

	// KindSwitch of a CPU-wide event (SWITCH_CPU_WIDE): the task
	// switched to (on a switch out) or from (on a switch in). Task
	// events, which cctop opens, do not say.
	NextPrevPID, NextPrevTID uint32

	// KindLost: number of records lost
	Lost uint64
}

// SwitchOut reports whether a KindSwitch record is the thread leaving the
// CPU (else it is coming back on).
func (r *Record) SwitchOut() bool { return r.Kind == KindSwitch && r.Misc&miscSwitchOut != 0 }

// Preempted reports whether a KindSwitch out of the CPU was a preemption:
// the thread was still runnable and waits in the run queue, not blocked.
func (r *Record) Preempted() bool { return r.SwitchOut() && r.Misc&miscSwitchOutPreempt != 0 }

// Exec reports whether a KindComm record comes from an exec.
func (r *Record) Exec() bool { return r.Kind == KindComm && r.Misc&miscCommExec != 0 }

// Format is what the decoder needs to know of the attr that produced records.
type Format struct {
	SampleType  uint64
	ReadFormat  uint64
	SampleIDAll bool
	RegsUser    uint64 // sample_regs_user mask
	// EntryProbe: samples come from a probe at a function's entry, where
	// the caller's return address is the word at SP (STACK_USER's first 8
	// bytes) and a frame-pointer walk does not see it.
	EntryProbe bool
	// Period is every sample's period when SampleType has no PERIOD: a
	// group sampled at a fixed period leaves it out (see buildAttrs).
	Period uint64
	// BranchType is the branch_sample_type of a format with a branch
	// stack: it decides the stack's layout.
	BranchType uint64
	// OffCPU: samples are taken at context switches out of the CPU (the
	// context-switches event), and decode with Record.OffCPU.
	OffCPU bool
}

var errShort = errors.New("record truncated")

// decoder decodes raw records without allocating for samples: Chain and
// Values reuse its buffers.
type decoder struct {
	format   Format
	byID     map[uint64]*Format // sample formats of groups that differ from format
	cur      *Format            // the format of the sample being decoded
	chain    []uint64
	values   []Value
	regs     []uint64
	branches []Branch
}

func newDecoder(f Format) *decoder {
	return &decoder{format: f, chain: make([]uint64, 0, 256), values: make([]Value, 0, 8)}
}

// setFormat says that samples carrying identifier id have format f. Every
// format must share the sample_id layout of the decoder's own.
func (d *decoder) setFormat(id uint64, f *Format) {
	if d.byID == nil {
		d.byID = map[uint64]*Format{}
	}
	d.byID[id] = f
}

// forget drops the format of a closed event's samples.
func (d *decoder) forget(id uint64) { delete(d.byID, id) }

// cursor reads native-endian fields from a record body, remembering whether
// it ran past the end instead of panicking.
type cursor struct {
	b   []byte
	bad bool
}

func (c *cursor) u64() uint64 {
	if b := c.bytes(8); b != nil {
		return binary.NativeEndian.Uint64(b)
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if b := c.bytes(4); b != nil {
		return binary.NativeEndian.Uint32(b)
	}
	return 0
}

// bytes is the next n bytes, or nil past the end: the cursor is then bad and
// empty.
func (c *cursor) bytes(n int) []byte {
	if n < 0 || len(c.b) < n {
		c.bad = true
		c.b = nil
		return nil
	}
	v := c.b[:n]
	c.b = c.b[n:]
	return v
}

// cstring reads a NUL-terminated string padded to 8 bytes, leaving the
// cursor after the padding. The tail after the string is the sample_id.
func (c *cursor) cstring(n int) string {
	raw := c.bytes(n)
	for i, ch := range raw {
		if ch == 0 {
			return string(raw[:i])
		}
	}
	return string(raw)
}

// decode decodes one whole record (header included). It returns ok=false for
// record types cctop does not use, and an error for malformed records.
func (d *decoder) decode(raw []byte, r *Record) (ok bool, err error) {
	if len(raw) < 8 {
		return false, errShort
	}
	typ := binary.NativeEndian.Uint32(raw)
	misc := binary.NativeEndian.Uint16(raw[4:])
	size := int(binary.NativeEndian.Uint16(raw[6:]))
	if size < 8 || size > len(raw) {
		return false, fmt.Errorf("record size %d out of range (have %d bytes)", size, len(raw))
	}
	*r = Record{Misc: misc}
	c := cursor{b: raw[8:size]}
	switch typ {
	case recSample:
		r.Kind = KindSample
		d.sample(&c, r)
	case recMmap, recMmap2:
		r.Kind = KindMmap
		r.PID, r.TID = c.u32(), c.u32()
		r.Addr, r.Len, r.PgOff = c.u64(), c.u64(), c.u64()
		if typ == recMmap2 {
			if misc&miscMmapBuildID != 0 {
				head := c.bytes(4) // build_id_size, then 3 reserved bytes
				id := c.bytes(20)
				n := 0
				if len(head) == 4 {
					n = int(head[0])
				}
				if n > 20 {
					n = 20
				}
				if len(id) >= n {
					r.BuildID = append([]byte(nil), id[:n]...)
				}
			} else {
				r.Major, r.Minor = c.u32(), c.u32()
				r.Inode = c.u64()
				c.u64() // ino_generation
			}
			r.Prot, r.Flags = c.u32(), c.u32()
		}
		r.Filename = c.cstring(d.stringLen(&c))
		d.sampleID(&c, r)
	case recComm:
		r.Kind = KindComm
		r.PID, r.TID = c.u32(), c.u32()
		r.Comm = c.cstring(d.stringLen(&c))
		d.sampleID(&c, r)
	case recFork, recExit:
		r.Kind = KindFork
		if typ == recExit {
			r.Kind = KindExit
		}
		r.PID, r.PPID = c.u32(), c.u32()
		r.TID, r.PTID = c.u32(), c.u32()
		r.Time = c.u64()
		t := r.Time
		d.sampleID(&c, r)
		r.Time = t
	case recLost:
		r.Kind = KindLost
		r.ID = c.u64()
		r.Lost = c.u64()
		d.sampleID(&c, r)
	case recLostSamples:
		r.Kind = KindLost
		r.Lost = c.u64()
		d.sampleID(&c, r)
	case recSwitch, recSwitchCPUWide:
		r.Kind = KindSwitch
		if typ == recSwitchCPUWide {
			r.NextPrevPID, r.NextPrevTID = c.u32(), c.u32()
		}
		// The switching task (the one leaving or arriving) and the
		// time are the sample_id's.
		d.sampleID(&c, r)
	case recThrottle, recUnthrottle:
		r.Kind = KindThrottle
		if typ == recUnthrottle {
			r.Kind = KindUnthrottle
		}
		r.Time = c.u64()
		r.ID = c.u64()
		c.u64() // stream_id
		t := r.Time
		d.sampleID(&c, r)
		r.Time = t
	default:
		return false, nil
	}
	if c.bad {
		return false, fmt.Errorf("%v record: %w", r.Kind, errShort)
	}
	return true, nil
}

// stringLen is the length of the string field: everything up to the
// trailing sample_id block.
func (d *decoder) stringLen(c *cursor) int {
	n := len(c.b) - d.sampleIDSize()
	if n < 0 {
		return -1
	}
	return n
}

func (d *decoder) sampleIDSize() int {
	if !d.format.SampleIDAll {
		return 0
	}
	st := d.format.SampleType
	n := 0
	for _, bit := range []uint64{sampleTID, sampleTime, sampleID, sampleStreamID, sampleCPU, sampleIdentifier} {
		if st&bit != 0 {
			n += 8
		}
	}
	return n
}

// sampleID decodes the sample_id block that sample_id_all appends to
// non-sample records.
func (d *decoder) sampleID(c *cursor, r *Record) {
	if !d.format.SampleIDAll {
		return
	}
	st := d.format.SampleType
	if st&sampleTID != 0 {
		pid, tid := c.u32(), c.u32()
		if r.PID == 0 && r.TID == 0 {
			r.PID, r.TID = pid, tid
		}
	}
	if st&sampleTime != 0 {
		r.Time = c.u64()
	}
	if st&sampleID != 0 {
		r.ID = c.u64()
	}
	if st&sampleStreamID != 0 {
		c.u64()
	}
	if st&sampleCPU != 0 {
		r.CPU = c.u32()
		c.u32()
	}
	if st&sampleIdentifier != 0 {
		r.ID = c.u64()
	}
}

func (d *decoder) sample(c *cursor, r *Record) {
	d.cur = &d.format
	st := d.format.SampleType
	if st&sampleIdentifier != 0 {
		r.ID = c.u64()
		if f, ok := d.byID[r.ID]; ok {
			d.cur = f
			st = f.SampleType
		}
	}
	if st&sampleIP != 0 {
		r.IP = c.u64()
	}
	if st&sampleTID != 0 {
		r.PID, r.TID = c.u32(), c.u32()
	}
	if st&sampleTime != 0 {
		r.Time = c.u64()
	}
	if st&sampleAddr != 0 {
		c.u64()
	}
	if st&sampleID != 0 {
		r.ID = c.u64()
	}
	if st&sampleStreamID != 0 {
		c.u64()
	}
	if st&sampleCPU != 0 {
		r.CPU = c.u32()
		c.u32()
	}
	if st&samplePeriod != 0 {
		r.Period = c.u64()
	} else {
		r.Period = d.cur.Period
	}
	r.OffCPU = d.cur.OffCPU
	if st&sampleRead != 0 {
		d.read(c, r)
	}
	if st&sampleCallchain != 0 {
		n := c.u64()
		if n > uint64(len(c.b)/8) {
			c.bad = true
			return
		}
		d.chain = d.chain[:0]
		for i := uint64(0); i < n; i++ {
			d.chain = append(d.chain, c.u64())
		}
		r.Chain = d.chain
	}
	if st&sampleRaw != 0 {
		// u32 size, then the data: with the size word, a multiple of 8.
		n := c.u32()
		c.bytes(int(n))
	}
	if st&sampleBranch != 0 {
		d.branchStack(c, r)
	}
	if st&sampleRegsUser != 0 {
		if abi := c.u64(); abi != 0 {
			mask := d.cur.RegsUser
			n := bits.OnesCount64(mask)
			if n > len(c.b)/8 {
				c.bad = true
				return
			}
			d.regs = d.regs[:0]
			for i := 0; i < n; i++ {
				d.regs = append(d.regs, c.u64())
			}
			r.Regs, r.RegsMask = d.regs, mask
			if v, ok := r.Reg(fpReg); ok {
				r.UserFP, r.HasUserFP = v, true
			}
		}
	}
	if st&sampleStackUser != 0 {
		size := c.u64()
		if size > uint64(len(c.b)) {
			c.bad = true
			return
		}
		stack := c.bytes(int(size))
		r.StackSize = uint32(size)
		if size != 0 {
			dyn := c.u64()
			if dyn < size {
				stack = stack[:dyn]
			}
		}
		if len(stack) > 0 {
			r.Stack = stack
		}
		if len(stack) >= 8 {
			r.StackWord, r.HasStackWord = binary.NativeEndian.Uint64(stack), true
		}
		if len(stack) >= 16 {
			r.StackWord2, r.HasStackWord2 = binary.NativeEndian.Uint64(stack[8:]), true
		}
		if ret, ok := r.CallerAtEntry(); ok && d.cur.EntryProbe {
			d.insertCaller(r, ret)
		}
	}
}

// Reg returns user register n (perf_regs.h numbering) of a sample, when
// it was sampled.
func (r *Record) Reg(n int) (uint64, bool) {
	if n < 0 || n > 63 || r.RegsMask&(1<<n) == 0 {
		return 0, false
	}
	i := bits.OnesCount64(r.RegsMask & (1<<n - 1))
	if i >= len(r.Regs) {
		return 0, false
	}
	return r.Regs[i], true
}

// DWARFRegs stores the sampled user registers in DWARF numbering (see
// dwarfRegs) into dst and returns the mask of those present.
func (r *Record) DWARFRegs(dst []uint64) (valid uint64) {
	for d, p := range dwarfRegs {
		if d >= len(dst) {
			break
		}
		if v, ok := r.Reg(p); ok {
			dst[d] = v
			valid |= 1 << d
		}
	}
	return valid
}

// UserSP is the sampled user stack pointer, the address of Stack[0].
func (r *Record) UserSP() (uint64, bool) { return r.Reg(spReg) }

// CallerAtEntry is the caller's return address of a sample taken at a
// function's entry or just after its one-byte PUSHQ BP (where a trap on
// that instruction reports the user IP): the word at SP, or the next one
// when the word at SP is the frame pointer just pushed.
func (r *Record) CallerAtEntry() (uint64, bool) {
	if !r.HasStackWord {
		return 0, false
	}
	if r.HasUserFP && r.HasStackWord2 && r.StackWord == r.UserFP {
		return r.StackWord2, true
	}
	return r.StackWord, true
}

// insertCaller puts ret, the return address found at SP on a function's
// entry, after the first user frame, unless the kernel's unwinder already
// did (it does for entries that start with push %rbp or endbr64).
func (d *decoder) insertCaller(r *Record, ret uint64) {
	for i, pc := range d.chain {
		if pc != contextUser {
			continue
		}
		first := i + 1
		if first >= len(d.chain) || (first+1 < len(d.chain) && d.chain[first+1] == ret) {
			return
		}
		d.chain = append(d.chain, 0)
		copy(d.chain[first+2:], d.chain[first+1:])
		d.chain[first+1] = ret
		r.Chain = d.chain
		return
	}
}

func (d *decoder) read(c *cursor, r *Record) {
	rf := d.cur.ReadFormat
	d.values = d.values[:0]
	if rf&readGroup != 0 {
		n := c.u64()
		if rf&readTotalTimeEnabled != 0 {
			r.TimeEnabled = c.u64()
		}
		if rf&readTotalTimeRunning != 0 {
			r.TimeRunning = c.u64()
		}
		per := uint64(8)
		if rf&readID != 0 {
			per += 8
		}
		if n > uint64(len(c.b))/per {
			c.bad = true
			return
		}
		for i := uint64(0); i < n; i++ {
			v := Value{Value: c.u64()}
			if rf&readID != 0 {
				v.ID = c.u64()
			}
			d.values = append(d.values, v)
		}
	} else {
		v := Value{Value: c.u64()}
		if rf&readTotalTimeEnabled != 0 {
			r.TimeEnabled = c.u64()
		}
		if rf&readTotalTimeRunning != 0 {
			r.TimeRunning = c.u64()
		}
		if rf&readID != 0 {
			v.ID = c.u64()
		}
		d.values = append(d.values, v)
	}
	r.Values = d.values
}

// SplitChain splits a raw callchain into its kernel and user parts, dropping
// the context markers. Both alias chain.
func SplitChain(chain []uint64) (kernel, user []uint64) {
	var cur *[]uint64
	start := 0
	flush := func(end int) {
		if cur != nil {
			*cur = chain[start:end]
		}
	}
	for i, pc := range chain {
		if pc < contextMax {
			continue
		}
		flush(i)
		start = i + 1
		switch pc {
		case contextKernel:
			cur = &kernel
		case contextUser:
			cur = &user
		default:
			cur = nil // hypervisor and guest frames are not ours
		}
	}
	flush(len(chain))
	return kernel, user
}

// Decoder decodes raw ring records of one Format; it is what the sampler
// uses, exported for recorded records (tests, replay) and fuzzing.
type Decoder struct{ d *decoder }

// NewDecoder returns a decoder for records of format f.
func NewDecoder(f Format) *Decoder { return &Decoder{newDecoder(f)} }

// Decode decodes one record. ok is false for record types cctop does not
// use. r's slices alias the decoder's buffers until the next call.
func (d *Decoder) Decode(raw []byte, r *Record) (ok bool, err error) { return d.d.decode(raw, r) }

// SessionFormat is the format of the primary group's samples as Open sets
// it up (without uprobe stack words).
func SessionFormat() Format {
	return Format{
		SampleType:  sampleIdentifier | sampleIP | sampleTID | sampleTime | sampleCPU | samplePeriod | sampleRead | sampleCallchain,
		ReadFormat:  readGroup | readID | readTotalTimeEnabled | readTotalTimeRunning,
		SampleIDAll: true,
	}
}
