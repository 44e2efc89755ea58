package symbol

import (
	"cmp"
	"debug/elf"
	"slices"
	"strconv"
)

// PLT stubs have no symbols, yet a program that calls a library function
// in a tight loop spends a few percent of its time in them. They are named
// the way perf report names them (tools/perf/util/symbol-elf.c,
// dso__synthesize_plt_symbols), "memcpy@plt", after the symbol of the GOT
// slot the stub jumps through; symbol names carry no version (.dynstr
// has none: memcpy@plt, not memcpy@GLIBC_2.14@plt), and C++ names are
// demangled later, with the rest (the pipeline keeps the "@plt").
//
// On x86-64 the three stub sections are read by decoding each stub rather
// than by counting, which holds for every layout ld and lld produce (lazy
// .plt, -z now, IBT's .plt.sec, .plt.got):
//
//   - A stub is sh_entsize bytes (8 or 16; otherwise 8 if the section is
//     8-aligned, else 16, as perf guesses).
//   - A stub that starts with jmp *disp32(%rip) (ff 25), possibly behind
//     endbr64 (f3 0f 1e fa) and a bnd prefix (f2), jumps through the GOT
//     slot at the end of that instruction plus disp32. The slot must lie in
//     .got or .got.plt, and is named by the relocation that fills it: one
//     in .rela.plt (R_X86_64_JUMP_SLOT) for .plt and .plt.sec, in .rela.dyn
//     (R_X86_64_GLOB_DAT) for .plt.got, the stubs of functions whose
//     address is also taken.
//   - A stub that does not decode is named as perf names it. In .plt that
//     is the header, PLT0 (push GOT+8; jmp *GOT+16), ".plt" like perf; and
//     when .plt.sec exists, all of .plt is ".plt": its stubs (endbr64; push
//     n; jmp PLT0) run once per function, to bind it lazily. Otherwise the
//     i-th stub after the header is the i-th .rela.plt entry by GOT
//     address, perf's rule (there is no header when .plt has exactly one
//     stub per relocation); the same holds for .plt.sec, without header. In
//     .plt.got, "offset_0x<file offset>@plt".
//   - A relocation without a symbol is an IFUNC of this binary
//     (R_X86_64_IRELATIVE, whose addend is the resolver): it takes the name
//     of the STT_GNU_IFUNC symbol there. Failing that, the stub is
//     "offset_0x<file offset>@plt".
//
// i386 stubs go through %ebx or an absolute slot, and the other
// architectures' through adrp/ldr pairs and the like; they are named by
// order alone, with the stub sizes perf documents (get_plt_sizes): i386 as
// x86-64 (its .plt.got stays unnamed), ARM a 20-byte header and 12-byte
// stubs, AArch64 and LoongArch 32 and 16. On ARM, AArch64 and LoongArch a .plt whose size is not exactly
// header + stubs (Thumb entry stubs, BTI's 24-byte stubs) is left unnamed
// rather than misnamed. Other architectures are not named.

// pltReloc is a relocation that fills a GOT slot.
type pltReloc struct {
	slot   uint64 // r_offset: the slot's link-time address
	sym    uint32 // index in the linked symbol table, 0 for none
	typ    uint32
	addend int64
}

// pltStubs is one section of stubs.
type pltStubs struct {
	addr, off uint64 // link-time address and file offset
	data      []byte
	es        uint64 // stub size
	n         int    // stubs looked at
}

func (s *pltStubs) stub(i int) (uint64, []byte) {
	at := uint64(i) * s.es
	return s.addr + at, s.data[at : at+s.es]
}

// pltReader holds what naming a module's stubs needs.
type pltReader struct {
	f              *elf.File
	size           int64
	symtab, dynsym []elf.Symbol
	ifuncs         map[uint64]string // STT_GNU_IFUNC symbols by address, made on first use
}

// pltSource names the PLT stubs of a module. It is a source of its own, not
// a symtab, so that the unwinder's checks of function extents (funcRange)
// do not take a stub for the function a call through it reaches: a call to
// lib_inner@plt lands in lib_inner.
type pltSource struct{ symtab }

// pltCands returns a symbol candidate for each PLT stub of f that can be
// named. symtab and dynsym are f's symbols; size is f's size, which bounds
// every section read.
func pltCands(f *elf.File, symtab, dynsym []elf.Symbol, size int64) []symCand {
	p := &pltReader{f: f, size: size, symtab: symtab, dynsym: dynsym}
	rel := f.Section(".rela.plt")
	if rel == nil {
		rel = f.Section(".rel.plt")
	}
	relocs := p.relocs(rel)
	syms := p.linked(rel)
	switch f.Machine {
	case elf.EM_X86_64:
		return p.x86(relocs, syms, true)
	case elf.EM_386:
		return p.x86(relocs, syms, false)
	case elf.EM_ARM:
		return p.fixed(relocs, syms, 20, 12)
	case elf.EM_AARCH64, elf.EM_LOONGARCH:
		return p.fixed(relocs, syms, 32, 16)
	}
	return nil
}

// x86 names the stubs of .plt, .plt.sec and .plt.got, decoding them when
// decode is set (x86-64) and by order otherwise.
func (p *pltReader) x86(relocs []pltReloc, syms []elf.Symbol, decode bool) []symCand {
	// The order rule needs the relocations by slot: IFUNC relocations
	// are not in stub order.
	order := slices.Clone(relocs)
	slices.SortStableFunc(order, func(a, b pltReloc) int { return cmp.Compare(a.slot, b.slot) })
	// A section has at most one stub per relocation, plus .plt's header:
	// stubs past that have no name, and a corrupt section size must not
	// make us allocate for them.
	plt := p.stubs(".plt", len(relocs)+1)
	sec := p.stubs(".plt.sec", len(relocs))
	var got pltStubs
	var slots map[uint64]string
	if decode {
		dyn := p.f.Section(".rela.dyn")
		dynRelocs := p.relocs(dyn)
		got = p.stubs(".plt.got", len(dynRelocs))
		slots = p.slotNames(relocs, syms, dynRelocs, p.linked(dyn))
	}
	var out []symCand
	add := func(addr, size uint64, name string) {
		out = append(out, symCand{addr: addr, size: size, name: name, bind: elf.STB_GLOBAL})
	}
	header := sec.n == 0 && plt.n != len(order)
	for i := range plt.n {
		addr, code := plt.stub(i)
		name := p.decoded(addr, code, slots)
		switch {
		case name != "":
		case sec.n > 0 || header && i == 0:
			if n := len(out); n > 0 && out[n-1].name == ".plt" && out[n-1].addr+out[n-1].size == addr {
				out[n-1].size += plt.es // one ".plt" over the stubs of lazy binding
				continue
			}
			name = ".plt"
		default:
			k := i
			if header {
				k--
			}
			if k >= len(order) {
				continue
			}
			name = p.relocName(order[k], syms, plt.off+uint64(i)*plt.es)
		}
		add(addr, plt.es, name)
	}
	for i := range sec.n {
		addr, code := sec.stub(i)
		name := p.decoded(addr, code, slots)
		if name == "" {
			if i >= len(order) {
				continue
			}
			name = p.relocName(order[i], syms, sec.off+uint64(i)*sec.es)
		}
		add(addr, sec.es, name)
	}
	for i := range got.n {
		addr, code := got.stub(i)
		name := p.decoded(addr, code, slots)
		if name == "" {
			name = offsetName(got.off + uint64(i)*got.es)
		}
		add(addr, got.es, name)
	}
	return out
}

// fixed names .plt by order, for architectures whose stubs perf counts
// with fixed sizes.
func (p *pltReader) fixed(relocs []pltReloc, syms []elf.Symbol, header, entry uint64) []symCand {
	s := p.f.Section(".plt")
	data := p.data(s)
	n := uint64(len(relocs))
	if data == nil || n == 0 {
		return nil
	}
	size := uint64(len(data))
	switch {
	case size == n*entry:
		header = 0
	case size != header+n*entry:
		return nil
	}
	var out []symCand
	if header > 0 {
		out = append(out, symCand{addr: s.Addr, size: header, name: ".plt", bind: elf.STB_GLOBAL})
	}
	for i, r := range relocs {
		at := header + uint64(i)*entry
		out = append(out, symCand{addr: s.Addr + at, size: entry, name: p.relocName(r, syms, s.Offset+at), bind: elf.STB_GLOBAL})
	}
	return out
}

// stubs reads a stub section, looking at no more than max stubs.
func (p *pltReader) stubs(name string, max int) pltStubs {
	s := p.f.Section(name)
	data := p.data(s)
	if data == nil {
		return pltStubs{}
	}
	es := s.Entsize
	if es != 8 && es != 16 {
		es = 16
		if s.Addralign == 8 {
			es = 8
		}
	}
	n := min(uint64(len(data))/es, uint64(max))
	return pltStubs{addr: s.Addr, off: s.Offset, data: data, es: es, n: int(n)}
}

// decoded names the stub at addr by the GOT slot it jumps through, or "".
func (p *pltReader) decoded(addr uint64, code []byte, slots map[uint64]string) string {
	if slots == nil {
		return ""
	}
	slot, ok := x86JumpSlot(code, addr)
	if !ok {
		return ""
	}
	if p.f.Class == elf.ELFCLASS32 { // x32: addresses wrap at 4 GB
		slot &= 0xffffffff
	}
	return slots[slot]
}

// x86JumpSlot decodes jmp *disp32(%rip) at the start of a stub, behind an
// optional endbr64 and bnd prefix, and returns the slot it reads.
func x86JumpSlot(code []byte, addr uint64) (uint64, bool) {
	n := 0
	if len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa {
		n = 4
	}
	if n < len(code) && code[n] == 0xf2 {
		n++
	}
	if len(code) < n+6 || code[n] != 0xff || code[n+1] != 0x25 {
		return 0, false
	}
	disp := int32(uint32(code[n+2]) | uint32(code[n+3])<<8 | uint32(code[n+4])<<16 | uint32(code[n+5])<<24)
	return addr + uint64(n+6) + uint64(int64(disp)), true
}

// slotNames maps the GOT slots that relocations fill to stub names. Slots
// outside .got and .got.plt are not GOT slots, whatever the relocation says.
func (p *pltReader) slotNames(plt []pltReloc, pltSyms []elf.Symbol, dyn []pltReloc, dynSyms []elf.Symbol) map[uint64]string {
	var gots [][2]uint64
	for _, s := range p.f.Sections {
		if (s.Name == ".got" || s.Name == ".got.plt") && s.Flags&elf.SHF_ALLOC != 0 && s.Addr+s.Size > s.Addr {
			gots = append(gots, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	inGOT := func(a uint64) bool {
		return slices.ContainsFunc(gots, func(g [2]uint64) bool { return a >= g[0] && a < g[1] })
	}
	m := make(map[uint64]string, len(plt))
	add := func(rs []pltReloc, syms []elf.Symbol) {
		for _, r := range rs {
			if _, dup := m[r.slot]; dup || !inGOT(r.slot) {
				continue
			}
			if name, ok := p.relocSym(r, syms); ok {
				m[r.slot] = name + "@plt"
			}
		}
	}
	add(plt, pltSyms)
	add(dyn, dynSyms)
	return m
}

// relocName is the name of the stub of r at file offset off.
func (p *pltReader) relocName(r pltReloc, syms []elf.Symbol, off uint64) string {
	if name, ok := p.relocSym(r, syms); ok {
		return name + "@plt"
	}
	return offsetName(off)
}

// relocSym is the symbol r fills its slot with: the named symbol, or for
// an IFUNC relocation the IFUNC at its addend.
func (p *pltReader) relocSym(r pltReloc, syms []elf.Symbol) (string, bool) {
	if r.sym != 0 {
		if int(r.sym) <= len(syms) && syms[r.sym-1].Name != "" {
			return syms[r.sym-1].Name, true
		}
		return "", false
	}
	irelative := p.f.Machine == elf.EM_X86_64 && r.typ == uint32(elf.R_X86_64_IRELATIVE) ||
		p.f.Machine == elf.EM_386 && r.typ == uint32(elf.R_386_IRELATIVE)
	if !irelative {
		return "", false
	}
	if p.ifuncs == nil {
		p.ifuncs = ifuncNames(p.symtab, p.dynsym)
	}
	name, ok := p.ifuncs[uint64(r.addend)]
	return name, ok
}

// ifuncNames maps the addresses of IFUNC symbols to their best name.
func ifuncNames(tabs ...[]elf.Symbol) map[uint64]string {
	best := map[uint64]symCand{}
	for i, syms := range tabs {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_GNU_IFUNC || s.Value == 0 || s.Name == "" {
				continue
			}
			c := symCand{addr: s.Value, size: s.Size, name: s.Name, bind: elf.ST_BIND(s.Info), dyn: i > 0}
			if b, ok := best[s.Value]; !ok || compareAlias(c, b) < 0 {
				best[s.Value] = c
			}
		}
	}
	m := make(map[uint64]string, len(best))
	for a, c := range best {
		m[a] = c.name
	}
	return m
}

func offsetName(off uint64) string {
	return "offset_0x" + strconv.FormatUint(off, 16) + "@plt"
}

// relocs reads a relocation section. Entry sizes come from the ELF class,
// not from sh_entsize, which a corrupt file may set to anything.
func (p *pltReader) relocs(s *elf.Section) []pltReloc {
	data := p.data(s)
	if data == nil || (s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL) {
		return nil
	}
	rela := s.Type == elf.SHT_RELA
	is64 := p.f.Class == elf.ELFCLASS64
	es := 8
	switch {
	case is64 && rela:
		es = 24
	case is64:
		es = 16
	case rela:
		es = 12
	}
	bo := p.f.ByteOrder
	out := make([]pltReloc, 0, len(data)/es)
	for b := data; len(b) >= es; b = b[es:] {
		var r pltReloc
		if is64 {
			info := bo.Uint64(b[8:])
			r.slot, r.sym, r.typ = bo.Uint64(b), uint32(info>>32), uint32(info)
			if rela {
				r.addend = int64(bo.Uint64(b[16:]))
			}
		} else {
			info := bo.Uint32(b[4:])
			r.slot, r.sym, r.typ = uint64(bo.Uint32(b)), info>>8, info&0xff
			if rela {
				r.addend = int64(int32(bo.Uint32(b[8:])))
			}
		}
		out = append(out, r)
	}
	return out
}

// linked returns the symbol table a relocation section refers to: .dynsym,
// or .symtab in a static executable whose IFUNCs have a .plt.
func (p *pltReader) linked(s *elf.Section) []elf.Symbol {
	if s == nil || s.Link == 0 || int(s.Link) >= len(p.f.Sections) {
		return nil
	}
	switch p.f.Sections[s.Link].Type {
	case elf.SHT_DYNSYM:
		return p.dynsym
	case elf.SHT_SYMTAB:
		return p.symtab
	}
	return nil
}

// data returns the contents of s, or nil for a section that is missing,
// empty, without file data, or does not fit in the file.
func (p *pltReader) data(s *elf.Section) []byte {
	if s == nil || s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_COMPRESSED != 0 ||
		s.Size == 0 || p.size <= 0 || s.Size > uint64(p.size) || s.Offset > uint64(p.size)-s.Size {
		return nil
	}
	b, err := s.Data()
	if err != nil || uint64(len(b)) != s.Size {
		return nil
	}
	return b
}
