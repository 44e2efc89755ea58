package annotate

// Addr is what one address of a function holds in a profile: the weight of
// the samples whose own frame was the function at that address (Flat), and
// of those that passed through it (Cum: Flat plus the frames called from a
// call site there). A function that recurses counts a sample's cum once.
type Addr struct {
	Addr uint64 // module-relative pc (the ELF virtual address)
	Line int    // the function's own source line there, 0 if not known
	// File is the function's source file there ("" the function's).
	File      string
	Flat, Cum float64
}

// Line is one row of the source view: a line of the function's source file
// with the weights of the addresses attributed to it.
type Line struct {
	File      string
	Line      int
	Text      string // the source text, "" where the file could not be read
	Flat, Cum float64
	// Inline is the chain of functions this line was inlined into, outermost
	// first, each "name (file:line)"; empty for the function's own lines.
	Inline []string
}

// Insn is one row of the disassembly view.
type Insn struct {
	Addr      uint64
	Text      string // the instruction, in Go's assembler syntax for amd64/arm64
	Flat, Cum float64
	File      string // its source file and line from the module's line table
	Line      int
	// Target is the address a jump or call goes to (0 none); Call names a
	// call's target function. IsTarget: some jump of this function lands here.
	Target   uint64
	Call     string
	IsTarget bool
}

// Listing is one function's annotation.
type Listing struct {
	Func   string // the function's name
	Module string // its binary
	File   string // its main source file
	// Flat and Cum are the function's own and total weight; Total is the
	// profile's, which shares are of.
	Flat, Cum, Total float64
	Unit             string // of the weights: "ns", "samples", "bytes", …
	Lines            []Line // in file order, hot lines with context
	Insns            []Insn // in address order; nil where the code could not be read
	// Missing says, in one line, what could not be read and what the
	// listing shows instead ("" nothing missing): no source file, a
	// stripped binary, truncated debug information.
	Missing string
}
