// Package cct owns the calling context tree: the profile of one run as a tree of calling
// contexts, with the functions it mentions interned once (short display names computed at
// intern time), self and total metrics per context, self metrics per thread, and the
// derived views every consumer shares (children in display order, bottom-up tree, flat
// function list). It also owns the file formats of that tree: pprof profile.proto (read and
// write) and folded stacks (write).
//
// It is a pure data model: no I/O besides io.Reader/io.Writer, no formatting for screens, no
// locking. A Tree has one owner; hand other goroutines a Clone.
package cct
