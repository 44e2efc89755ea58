package main

import (
	"flag"
	"io"
	"strings"

	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/tui"
)

func cmdView(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("view", flag.ContinueOnError)
	base := fs.String("base", "", "compare against this profile `FILE`")
	// Go's flag package stops at the first non-flag: take FILE from
	// wherever it stands.
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 || file == "" {
		return usageError("view takes one profile file")
	}
	src, err := engine.OpenProfile(file, *base)
	if err != nil {
		return err
	}
	prog := newTUI(tui.New(src, tui.Options{}))
	defer quitOnSignals(prog)()
	_, err = prog.Run()
	return tuiError(err)
}
