package cfi

// FuncStart returns the first pc of the FDE covering pc. Compilers emit one
// FDE per function (or per hot/cold part of one), so for code whose symbols
// were stripped this is where its function starts: the one place that
// names the function, for a reader with the binary and no symbols.
func (t *Table) FuncStart(pc uint64) (uint64, bool) {
	i := t.find(pc)
	if i < 0 {
		return 0, false
	}
	return t.fdes[i].begin, true
}
