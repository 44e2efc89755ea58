package main

import (
	"flag"
	"path/filepath"

	"github.com/cctop/cctop/annotate"
)

// annotateFlags are where the annotate view and view --list find source
// files, as go tool pprof's -source_path and -trim_path say.
type annotateFlags struct {
	sourcePath, trimPath string
}

func addAnnotateFlags(fs *flag.FlagSet) *annotateFlags {
	af := &annotateFlags{}
	fs.StringVar(&af.sourcePath, "source-path", "", "look for source files under `DIRS` (separated by "+string(filepath.ListSeparator)+"), as pprof's -source_path")
	fs.StringVar(&af.trimPath, "trim-path", "", "remove `PREFIXES` from recorded source paths before looking, as pprof's -trim_path")
	return af
}

func (af *annotateFlags) options() annotate.Options {
	return annotate.Options{SourcePath: filepath.SplitList(af.sourcePath), TrimPath: filepath.SplitList(af.trimPath)}
}
