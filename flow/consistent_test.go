package flow

import "fmt"

// consistent checks what Decode promises of any CFG, conservative or not:
// blocks sorted, disjoint, inside the bounds, the entry first, successor
// indices valid, every call site inside its block and in order, every
// byte outside the blocks padding by the arch's own classification, and
// Unreached true to the successors.
func consistent(g *CFG, arch string, code []byte) error {
	if g.End-g.Start != uint64(len(code)) {
		return fmt.Errorf("bounds [%#x,%#x) for %d bytes", g.Start, g.End, len(code))
	}
	if len(g.Blocks) == 0 {
		if len(code) > 0 && !g.Conservative {
			return fmt.Errorf("no blocks")
		}
		return nil
	}
	if g.Blocks[0].Start != g.Start {
		return fmt.Errorf("entry block at %#x, function at %#x", g.Blocks[0].Start, g.Start)
	}
	step := stepFor(arch)
	prev := g.Start
	for i, b := range g.Blocks {
		if b.Start >= b.End || b.Start < prev || b.End > g.End {
			return fmt.Errorf("block %d [%#x,%#x) after %#x in [%#x,%#x)", i, b.Start, b.End, prev, g.Start, g.End)
		}
		// The gap before this block must be padding.
		for pc := prev; pc < b.Start; {
			in := step(code[pc-g.Start:], pc)
			if !in.pad {
				return fmt.Errorf("%#x, between blocks, is not padding", pc)
			}
			pc += uint64(in.n)
		}
		prev = b.End
		for _, s := range b.Succs {
			if s < 0 || s >= len(g.Blocks) {
				return fmt.Errorf("block %d: successor %d of %d", i, s, len(g.Blocks))
			}
		}
		last := b.Start
		for _, c := range b.Calls {
			if c.Block != i || c.Addr < last || c.Addr >= b.End || c.Ret <= c.Addr || c.Ret > b.End {
				return fmt.Errorf("block %d [%#x,%#x): call %+v", i, b.Start, b.End, c)
			}
			last = c.Ret
		}
	}
	for pc := prev; pc < g.End; {
		in := step(code[pc-g.Start:], pc)
		if !in.pad {
			return fmt.Errorf("%#x, after the last block, is not padding", pc)
		}
		pc += uint64(in.n)
	}
	// Unreached is what the successors say, and a CFG callers may draw
	// relations from leaves no reached block without a way on.
	reach := make([]bool, len(g.Blocks))
	reached(g, reach, nil)
	for i, b := range g.Blocks {
		if b.Unreached == reach[i] {
			return fmt.Errorf("block %d: Unreached %v", i, b.Unreached)
		}
		if !g.Conservative && !b.Unreached && !b.Exit && len(b.Succs) == 0 {
			return fmt.Errorf("block %d: reached, no exit and no successor", i)
		}
	}
	return nil
}
