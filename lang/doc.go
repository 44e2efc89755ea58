// Package lang owns what cctop knows of language runtimes as programs: which
// runtime an executable is (CPython and its version, node, a JVM), what it
// can publish for profilers (CPython 3.12's perf trampolines, V8's and the
// JVM's perf maps and jitdump files), the environment that turns that on for
// a program cctop launches, and the advice for one it attaches to. It reads
// files and environments; it samples nothing and names no frames (symbol/
// and jit/ do).
package lang
