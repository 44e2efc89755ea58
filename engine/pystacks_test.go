package engine

import (
	"strings"
	"testing"

	"github.com/cctop/cctop/python"
	"github.com/cctop/cctop/symbol"
)

const testLibpython = "/usr/lib/libpython3.9.so.1.0"

// nativeFrames makes symbol frames, innermost first, from "name@module"
// (module "py" is the interpreter's; a "+" suffix marks an inlined frame).
func nativeFrames(specs ...string) []symbol.Frame {
	var out []symbol.Frame
	for _, s := range specs {
		inl := strings.HasSuffix(s, "+")
		s = strings.TrimSuffix(s, "+")
		name, mod, _ := strings.Cut(s, "@")
		if mod == "py" {
			mod = testLibpython
		}
		out = append(out, symbol.Frame{Func: name, Module: mod, Inlined: inl})
	}
	return out
}

// pyFrames makes a read stack, innermost first: a name is a frame, "|" the
// end of an evaluation.
func pyFrames(specs ...string) []python.Frame {
	var out []python.Frame
	for _, s := range specs {
		if s == "|" {
			out = append(out, python.Frame{})
			continue
		}
		out = append(out, python.Frame{Code: &python.Code{Name: s, Qualname: s, File: "/app/" + s + ".py", FirstLine: 1}, Line: 7})
	}
	return out
}

func testPyStacks() *pyStacks {
	return &pyStacks{names: map[*python.Code]pyName{}, byKey: map[string]pyName{}, interp: map[uint32]string{1: testLibpython}}
}

// evalsOf sets ps.evals as mergePython does.
func (ps *pyStacks) evalsOf(user []symbol.Frame) {
	ps.evals, ps.tramps = ps.evals[:0], ps.tramps[:0]
	for i, f := range user {
		switch {
		case isEval(f.Func) && !f.Inlined:
			ps.evals = append(ps.evals, i)
		case strings.HasPrefix(f.Func, pyPrefix):
			ps.tramps = append(ps.tramps, f.Func)
		}
	}
}

func frameNames(fs []symbol.Frame) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Func)
	}
	return strings.Join(out, " ")
}

// TestMergePython: each evaluation becomes its Python frames, the frames
// inlined at its pc go with it, the interpreter calling itself between two
// Python frames goes, a C extension between them stays, and so does the
// interpreter's work below the innermost Python frame and above the
// outermost.
func TestMergePython(t *testing.T) {
	ps := testPyStacks()
	user := nativeFrames(
		"long_add@py",
		"call_function@py+", "_PyEval_EvalFrameDefault@py", // innermost evaluation
		"_PyFunction_Vectorcall@py",
		"encoder_call@/lib/_json.so", // a C extension between two evaluations
		"PyObject_Call@py",
		"_PyEval_EvalFrameDefault.cold@py",
		"PyEval_EvalCode@py", "main@/usr/bin/python3.9", "_start@/usr/bin/python3.9")
	ps.evalsOf(user)
	if len(ps.evals) != 2 {
		t.Fatalf("evaluations at %v", ps.evals)
	}
	got := frameNames(ps.merge(1, user, pyFrames("spin", "heavy", "|", "run", "|")))
	want := "long_add py::spin:/app/spin.py py::heavy:/app/heavy.py encoder_call py::run:/app/run.py PyEval_EvalCode main _start"
	if got != want {
		t.Errorf("merged\n got %s\nwant %s", got, want)
	}
}

// TestMergePythonCut: a native stack cut short (one evaluation of three
// unwound) gets the outer Python frames after its own.
func TestMergePythonCut(t *testing.T) {
	ps := testPyStacks()
	user := nativeFrames("x_add@py", "_PyEval_EvalFrameDefault@py", "_PyFunction_Vectorcall@py")
	ps.evalsOf(user)
	got := frameNames(ps.merge(1, user, pyFrames("spin", "|", "heavy", "|", "<module>", "|")))
	want := "x_add py::spin:/app/spin.py _PyFunction_Vectorcall py::heavy:/app/heavy.py py::<module>:/app/<module>.py"
	if got != want {
		t.Errorf("merged\n got %s\nwant %s", got, want)
	}
}

// TestTrampolinesAgree: each evaluation's outermost Python frame against
// the perf trampoline around it, innermost first.
func TestTrampolinesAgree(t *testing.T) {
	ps := testPyStacks()
	user := nativeFrames("_PyEval_EvalFrameDefault@py", "py::spin:/app/spin.py@[anon]", "_PyEval_EvalFrameDefault@py", "py::heavy:/app/heavy.py@[anon]")
	ps.evalsOf(user)
	if !ps.trampolinesAgree(pyFrames("spin", "|", "heavy", "|")) {
		t.Errorf("the same functions disagree")
	}
	if ps.trampolinesAgree(pyFrames("spin", "|", "medium", "|")) {
		t.Errorf("medium agrees with heavy's trampoline")
	}
	// Merged, the trampolines go: their functions are the frames.
	got := frameNames(ps.merge(1, user, pyFrames("spin", "|", "heavy", "|")))
	if want := "py::spin:/app/spin.py py::heavy:/app/heavy.py"; got != want {
		t.Errorf("merged\n got %s\nwant %s", got, want)
	}
	// Where the read disagrees, the trampolines' own functions stand.
	got = frameNames(ps.merge(1, user, ps.trampolineFrames()))
	if want := "py::spin:/app/spin.py py::heavy:/app/heavy.py"; got != want {
		t.Errorf("from the trampolines\n got %s\nwant %s", got, want)
	}
}

// TestShareOverlap: the overlap of two distributions of counts.
func TestShareOverlap(t *testing.T) {
	a := map[string]uint64{"f": 60, "g": 30, "h": 10}
	b := map[string]uint64{"f": 30, "g": 60, "h": 10}
	if got := shareOverlap(a, b); got < 0.699 || got > 0.701 {
		t.Errorf("overlap %.3f, want 0.700", got)
	}
	if got := shareOverlap(a, a); got < 0.999 {
		t.Errorf("a distribution overlaps itself by %.3f", got)
	}
	if got := shareOverlap(a, nil); got != 0 {
		t.Errorf("with nothing: %.3f", got)
	}
}
