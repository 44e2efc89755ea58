package main

import (
	"flag"
	"io"
	"os"

	"github.com/cctop/cctop/annotate"
	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/tui"
)

func cmdView(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("view", flag.ContinueOnError)
	var o engine.ViewOptions
	fs.StringVar(&o.Base, "base", "", "compare against this profile `FILE`")
	fs.StringVar(&o.SampleIndex, "sample-index", "", "the sample type shown first: its name or index")
	fs.IntVar(&o.Seconds, "seconds", 0, "a URL's profile length in seconds")
	var timeout durationFlag
	fs.Var(&timeout, "timeout", "how long to wait for a URL's profile")
	fs.StringVar(&o.TagFocus, "tagfocus", "", "only samples whose labels match")
	fs.StringVar(&o.TagIgnore, "tagignore", "", "no samples whose labels match")
	top := fs.Int("top", 0, "print the flat top N functions and exit")
	list := fs.String("list", "", "print the annotated source of the functions matching `REGEX` and exit, as go tool pprof -list")
	disasm := fs.String("disasm", "", "print the annotated machine code of the functions matching `REGEX` and exit, as go tool pprof -disasm")
	af := addAnnotateFlags(fs)
	// Go's flag package stops at the first non-flag: the sources may
	// stand anywhere among the flags.
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		o.Sources = append(o.Sources, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(o.Sources) == 0:
		return usageError("view takes a profile: a file, - for stdin, or a URL")
	case o.Seconds < 0:
		return usageError("--seconds must be positive")
	case *top < 0:
		return usageError("--top must be positive")
	case isFlagSet(fs, "list") && isFlagSet(fs, "disasm"), (isFlagSet(fs, "list") || isFlagSet(fs, "disasm")) && isFlagSet(fs, "top"):
		return usageError("--top, --list and --disasm each print one report: give one")
	}
	o.Timeout = timeout.d
	o.Stdin = os.Stdin
	if isFlagSet(fs, "top") {
		return engine.WriteTop(stdout, o, *top)
	}
	ao := af.options()
	if isFlagSet(fs, "list") {
		return engine.WriteListing(stdout, stderr, o, *list, false, annotate.New(ao), ao)
	}
	if isFlagSet(fs, "disasm") {
		return engine.WriteListing(stdout, stderr, o, *disasm, true, annotate.New(ao), ao)
	}
	src, err := engine.OpenProfiles(o)
	if err != nil {
		return err
	}
	prog := newTUI(tui.New(src, tui.Options{Annotator: annotate.New(ao)}))
	defer quitOnSignals(prog)()
	_, err = prog.Run()
	return tuiError(err)
}

func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
