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
	// Func names the inlined function whose line this is ("" for the
	// function's own lines). Its rows follow the own line that inlined it.
	Func string
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

	// Hot is the index in Lines of the own line with the most flat weight
	// (then cum), where the view starts; -1 when no line has weight.
	Hot int
	// Addrs is the function's physical code by address, ascending: the
	// weights Insns add up, and where the profile had no code to read,
	// all there is. Line is the function's own line there.
	Addrs []Addr
	// Unplaced is the weight of the function's code at no known address.
	Unplaced float64
	// SourceErr is why the source file could not be read, in pprof's
	// words ("" when it was): `view --list` prints it as pprof does.
	SourceErr string
	// LinesFlat and LinesCum add up every own line's weights, as pprof's
	// ROUTINE header does (a recursion through two lines counts at each).
	LinesFlat, LinesCum float64
	// Syms are the symbols whose code Insns holds, by address.
	Syms []Sym
	// LineSource is where the instructions' lines come from: "go" (the
	// pclntab), "dwarf", or "" none.
	LineSource string
}

// Sym is one function symbol of the module: Insns from Start to End.
type Sym struct {
	Name       string
	Start, End uint64
}
