package engine

import (
	"path/filepath"
	"strings"

	"github.com/cctop/cctop/cct"
)

// pyPrefix begins the names CPython's perf trampolines publish for Python
// functions: "py::QUALNAME:FILE".
const pyPrefix = "py::"

// pyFunc is the tree's function for a Python function named by a perf
// trampoline: "name (file.py)", as a person reads it, with the path in
// File (the details pane) and the trampoline's name as the linkage name.
func pyFunc(name, module string) (cct.Func, bool) {
	rest, ok := strings.CutPrefix(name, pyPrefix)
	if !ok {
		return cct.Func{}, false
	}
	qual, file, ok := strings.Cut(rest, ":")
	if !ok || qual == "" || file == "" {
		return cct.Func{}, false
	}
	return cct.Func{Name: qual + " (" + filepath.Base(file) + ")", Module: module, File: file, System: name}, true
}
