package cct

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func foldedTree() *Tree {
	tr := New()
	addPath(tr, "main;github.com/x/y/pkg.(*T).Run;memcpy", 1, ms(3, 30))
	addPath(tr, "main;github.com/x/y/pkg.(*T).Run", 2, ms(2, 20))
	addPath(tr, "main;f;f;f", 1, ms(1, 10))
	// Two call sites of g: one line, summed.
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x10}, fr{name: "g"}), 1, ms(4, 40))
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x20}, fr{name: "g"}), 1, ms(1, 10))
	// Names that would break the format.
	odd := tr.Intern(Func{Name: "operator;weird\nname"})
	tr.Add([]Frame{{Func: odd}, {Func: tr.Intern(Func{Name: "std::map<int, int>::find(int const&)"})}}, 0, ms(7, 70))
	tr.Add([]Frame{{Func: tr.Intern(Func{Name: ""})}, {Func: tr.Intern(Func{Name: "main", Module: "/bin/app", File: "app.c"})}}, 0, ms(1, 1))
	// An inlined frame (mix inlined into sweep) carries the _[i] mark.
	tr.Add([]Frame{{Func: tr.Intern(Func{Name: "mix"}), Inlined: true}, {Func: tr.Intern(Func{Name: "sweep"})}, {Func: tr.Intern(Func{Name: "main"})}}, 0, ms(2, 20))
	// Contexts with time but no samples, and an empty stack, have no line.
	addPath(tr, "main;timeonly", 1, ms(0, 99))
	tr.Add(nil, 0, ms(5, 5))
	return tr
}

func TestWriteFoldedGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := foldedTree().WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "folded.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Errorf("WriteFolded:\n%s\nwant (%s):\n%s", buf.String(), golden, want)
	}
}

// TestWriteFoldedParses reads the output back the way flame graph tools do and checks the
// stacks and counts against the tree.
func TestWriteFoldedParses(t *testing.T) {
	tr := foldedTree()
	var buf bytes.Buffer
	if err := tr.WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	var total int64
	var prev string
	sc := bufio.NewScanner(&buf)
	lines := 0
	for sc.Scan() {
		line := sc.Text()
		lines++
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			t.Fatalf("line %q has no count", line)
		}
		n, err := strconv.ParseInt(line[sp+1:], 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("line %q: bad count", line)
		}
		if line[:sp] <= prev {
			t.Errorf("line %q is out of order or repeated", line)
		}
		prev = line[:sp]
		for _, frame := range strings.Split(line[:sp], ";") {
			if frame == "" {
				t.Errorf("line %q has an empty frame", line)
			}
		}
		total += n
	}
	if lines != 7 {
		t.Errorf("%d lines, want 7", lines)
	}
	// Every sample is on a line but the empty stack's.
	if want := tr.Total().Samples - tr.Node(tr.Root()).Self.Samples; total != want {
		t.Errorf("folded counts sum to %d, want %d", total, want)
	}
}
