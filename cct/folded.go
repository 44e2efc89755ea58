package cct

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// inlinedSuffix marks inlined frames in folded stacks, as FlameGraph's
// stackcollapse-perf.pl --inline does: tools that compare with profilers
// that see physical frames only (perf script) can drop them.
const inlinedSuffix = "_[i]"

// WriteFolded writes the folded-stack format of flame graph tools: one line per stack,
// "root;...;leaf N", N the self samples; inlined frames end in "_[i]". Contexts that differ only by call site fold to the
// same line and are summed; lines are sorted so that output is reproducible. Samples with an
// empty stack have no line.
func (t *Tree) WriteFolded(w io.Writer) error {
	return t.WriteFoldedOf(w, func(m Metrics) int64 { return m.Samples })
}

// WriteFoldedOf is WriteFolded with another self value per line: off-CPU or
// wall-clock nanoseconds, say.
func (t *Tree) WriteFoldedOf(w io.Writer, value func(Metrics) int64) error {
	counts := make(map[string]int64)
	names := make([]string, len(t.funcs))
	for i := range t.funcs {
		names[i] = foldedName(t.funcs[i].Name)
	}
	var sb strings.Builder
	var path []NodeID
	for id := 1; id < len(t.nodes); id++ {
		if n := value(t.nodes[id].Self); n > 0 {
			sb.Reset()
			path = path[:0]
			for x := NodeID(id); x > 0; x = t.nodes[x].Parent {
				path = append(path, x)
			}
			for i := len(path) - 1; i >= 0; i-- {
				nd := &t.nodes[path[i]]
				sb.WriteString(names[nd.Func])
				if nd.Inlined {
					sb.WriteString(inlinedSuffix)
				}
				if i > 0 {
					sb.WriteByte(';')
				}
			}
			counts[sb.String()] += n
		}
	}
	lines := make([]string, 0, len(counts))
	for k := range counts {
		lines = append(lines, k)
	}
	slices.Sort(lines)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(counts[l], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// foldedName keeps a name from breaking the format: ';' separates frames and a newline ends
// the record, so ';' becomes ':' and control characters become spaces. Spaces are fine:
// readers split the count off at the last space.
func foldedName(name string) string {
	if name == "" {
		return "[unknown]"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == ';':
			return ':'
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, name)
}
