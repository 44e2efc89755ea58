package annotate

import (
	"errors"

	"github.com/cctop/cctop/cct"
)

// Options say where source files are looked for, as pprof's flags do.
type Options struct {
	// SourcePath is pprof's -source_path: directories searched for a
	// source file that is not where the debug information says.
	SourcePath []string
	// TrimPath is pprof's -trim_path: prefixes removed from the recorded
	// paths before searching SourcePath.
	TrimPath []string
}

// Annotator builds listings, keeping what it read of modules and sources
// between calls (a live view rebuilds its listing as samples come). It is
// safe for use by one goroutine at a time.
type Annotator struct {
	opts Options
}

// New returns an Annotator that finds sources as o says.
func New(o Options) *Annotator { return &Annotator{opts: o} }

// Build is the listing of function fn of t, over all its contexts, each
// node weighing self[node] (the weight the view shows, per node of t).
func (a *Annotator) Build(t *cct.Tree, self []float64, fn cct.FuncID) (*Listing, error) {
	return nil, errors.New("annotate: not built yet")
}
