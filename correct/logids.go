package correct

// ids is a column of the log's node or thread ids: two bytes an entry while
// every id of its block is in [0, smallIDs), four from the first that is
// not. Contexts and threads are numbered densely from 0, so the columns of
// a profile under 65,535 contexts (most) and of threads (nearly all) are
// the small kind.
type ids struct {
	small []uint16
	wide  []int32 // non-nil once widened (a column has room when it widens)
}

// smallIDs bounds the ids a small column holds.
const smallIDs = 1<<16 - 1

func fitsSmall(v int32) bool { return uint32(v) < smallIDs }

func (c *ids) isWide() bool { return c.wide != nil }

func (c *ids) len() int {
	if c.isWide() {
		return len(c.wide)
	}
	return len(c.small)
}

func (c *ids) get(i int) int32 {
	if c.isWide() {
		return c.wide[i]
	}
	return int32(c.small[i])
}

// grow moves the column into one of room r.
func (c *ids) grow(m *logMem, r int) {
	if c.isWide() {
		c.wide = regrow(m, c.wide, r)
	} else {
		c.small = regrow(m, c.small, r)
	}
}

// push appends v; the column has room.
func (c *ids) push(m *logMem, v int32) {
	if !c.isWide() && !fitsSmall(v) {
		c.widen(m)
	}
	if c.isWide() {
		c.wide = append(c.wide, v)
	} else {
		c.small = append(c.small, uint16(v))
	}
}

// set overwrites entry i with v.
func (c *ids) set(m *logMem, i int, v int32) {
	if !c.isWide() && !fitsSmall(v) {
		c.widen(m)
	}
	if c.isWide() {
		c.wide[i] = v
	} else {
		c.small[i] = uint16(v)
	}
}

// widen moves a small column into a wide one of the same room.
func (c *ids) widen(m *logMem) {
	w := column[int32](m, len(c.small), cap(c.small))
	for i, v := range c.small {
		w[i] = int32(v)
	}
	free(m, c.small)
	c.small, c.wide = nil, w
}

// truncate empties the column, keeping its room.
func (c *ids) truncate() {
	c.small, c.wide = c.small[:0], c.wide[:0]
}

// release returns the column's memory.
func (c *ids) release(m *logMem) {
	free(m, c.small)
	free(m, c.wide)
	*c = ids{}
}

// bytes is the memory the column holds at room r.
func (c *ids) bytes(r int) int64 {
	if c.isWide() {
		return 4 * int64(r)
	}
	return 2 * int64(r)
}
