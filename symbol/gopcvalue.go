package symbol

// A pc-value table maps the pcs of one function to int32 values: the SP
// delta, the file number, the line, or one of the PCDATA tables such as
// the inline tree index. It is a sequence of (value delta, pc delta)
// varint pairs starting from value -1 at the function's entry; the value
// delta is zig-zag encoded, the pc delta counts pc quanta, and a zero
// value delta other than the first ends the table (runtime.step).

// maxVarint is the longest varint a 32-bit value takes. The runtime reads
// longer ones by wrapping the shift; only a corrupt table has them, and
// refusing those keeps each read bounded.
const maxVarint = 5

// readVarint decodes the unsigned LEB128 varint at p[i:] and returns it
// and its length, or ok false if it runs off p or is longer than
// maxVarint.
func readVarint(p []byte, i int) (v uint32, n int, ok bool) {
	var shift uint
	for n < maxVarint {
		if i < 0 || i+n >= len(p) {
			return 0, 0, false
		}
		b := p[i+n]
		n++
		v |= uint32(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, n, true
		}
		shift += 7
	}
	return 0, 0, false
}

// pcvalue returns the value at target of the table at tab[off:] for the
// function starting at entry, or ok false if there is no table (off 0, as
// the linker writes it), the table does not cover target, or it is
// malformed. Each step consumes at least two bytes, so a corrupt table
// costs at most len(tab)/2 steps.
func pcvalue(tab []byte, off uint32, entry, target uint64, quantum uint64) (val int32, ok bool) {
	if off == 0 || uint64(off) >= uint64(len(tab)) || target < entry {
		return -1, false
	}
	i := int(off)
	pc := entry
	val = -1
	for first := true; ; first = false {
		uv, n, ok := readVarint(tab, i)
		if !ok || (uv == 0 && !first) {
			return -1, false
		}
		i += n
		val += int32(-(uv & 1) ^ (uv >> 1))
		pd, n, ok := readVarint(tab, i)
		if !ok {
			return -1, false
		}
		i += n
		next := pc + uint64(pd)*quantum
		if next < pc {
			return -1, false
		}
		pc = next
		if target < pc {
			return val, true
		}
	}
}
