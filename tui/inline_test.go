package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
)

// cxxFuncs are the functions of a C++ server profile, with the names the demangler
// gives them: long, templated, and partly inlined.
var cxxFuncs = map[string]cct.Func{
	"main":     {Name: "main", File: "/src/server/main.cc"},
	"run":      {Name: "server::Server::run()", File: "/src/server/server.cc"},
	"handle":   {Name: "server::Server::handle(server::Request const&)", File: "/src/server/server.cc"},
	"spin":     {Name: "long shapes::spin<long>(long, int)", File: "/src/shapes/spin.h"},
	"add":      {Name: "shapes::Accumulator<long>::add(long)", File: "/src/shapes/accumulator.h"},
	"push":     {Name: "std::vector<long, std::allocator<long> >::push_back(long const&)", File: "/usr/include/c++/13/bits/stl_vector.h"},
	"realloc":  {Name: "void std::vector<long, std::allocator<long> >::_M_realloc_insert<long const&>(__gnu_cxx::__normal_iterator<long*, std::vector<long, std::allocator<long> > >, long const&)", File: "/usr/include/c++/13/bits/vector.tcc"},
	"new":      {Name: "operator new(unsigned long)"},
	"parse":    {Name: "(anonymous namespace)::parse(std::basic_string_view<char, std::char_traits<char> >)", File: "/src/server/server.cc"},
	"lambda":   {Name: "server::Server::handle(server::Request const&)::{lambda(int)#1}::operator()(int) const", File: "/src/server/server.cc"},
	"memcpy":   {Name: "__memmove_avx_unaligned_erms"},
	"epoll":    {Name: "epoll_wait"},
	"evloop":   {Name: "server::EventLoop::poll(std::chrono::duration<long, std::ratio<1l, 1000l> >)", File: "/src/server/loop.cc"},
	"truncate": {Name: "[truncated]"},
}

// cxxSamples: spin has Accumulator::add inlined, which has vector::push_back inlined,
// which calls _M_realloc_insert; handle has parse and a lambda inlined; memcpy is
// called from handle both directly and from the inlined parse; a second thread polls.
var cxxSamples = []sample{
	{[]string{"push+", "add+", "spin", "handle", "run", "main"}, 1, 300, 250, 0},
	{[]string{"realloc", "push+", "add+", "spin", "handle", "run", "main"}, 1, 120, 150, 0},
	{[]string{"new", "realloc", "push+", "add+", "spin", "handle", "run", "main"}, 1, 40, 60, 0},
	{[]string{"add+", "spin", "handle", "run", "main"}, 1, 200, 180, 0},
	{[]string{"spin", "handle", "run", "main"}, 1, 50, 40, 0},
	{[]string{"memcpy", "parse+", "handle", "run", "main"}, 1, 90, 110, 0},
	{[]string{"parse+", "handle", "run", "main"}, 1, 60, 50, 0},
	{[]string{"lambda+", "handle", "run", "main"}, 1, 30, 40, 0},
	{[]string{"memcpy", "handle", "run", "main"}, 1, 20, 30, 0},
	{[]string{"epoll", "evloop", "run", "main"}, 2, 70, 80, 0},
	{[]string{"evloop", "run", "main"}, 2, 10, 10, 0},
	{[]string{"add+", "truncate"}, 2, 15, 10, 0},
}

func cxxSnapshot() Snapshot {
	s := buildTreeOf(cxxFuncs, cxxSamples, inOrder(len(cxxSamples)))
	s.Header.Target = "pid 5151 (server)"
	s.Threads = []cct.Thread{{TID: 1, PID: 5151, Name: "worker"}, {TID: 2, PID: 5151, Name: "loop"}}
	return s
}

func cxxName(k string) string { return cxxFuncs[k].Name }

// rowsByName is every visible row's weights by full name, summed over rows of the same
// function.
func rowsByName(m *Model) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, r := range m.tree.rows {
		w := out[m.tree.prof.names[r.g.fn]]
		out[m.tree.prof.names[r.g.fn]] = [2]float64{w[0] + r.g.self, w[1] + r.g.total}
	}
	return out
}

func expandEverything(m *Model) {
	for i := 0; i < len(m.tree.rows); i++ {
		m.tree.open(i)
	}
}

func TestPhysicalFrames(t *testing.T) {
	m := newPlain(newFake(cxxSnapshot()), Options{})
	expandEverything(m)
	logical := rowsByName(m)
	if _, ok := logical[cxxName("add")]; !ok {
		t.Fatal("test setup: no Accumulator::add row in the logical view")
	}
	send(m, press("I"))
	if !m.physical || !strings.Contains(screen(m), "physical frames") {
		t.Fatalf("I did not switch to physical frames:\n%s", screen(m))
	}
	expandEverything(m)
	phys := rowsByName(m)
	for _, k := range []string{"push", "parse", "lambda"} {
		if _, ok := phys[cxxName(k)]; ok {
			t.Errorf("physical frames show the inlined %s", k)
		}
	}
	if got := phys[cxxName("add")]; got[1] != 15e6 {
		t.Errorf("physical add %v, want only the row under [truncated]", got)
	}
	// The inlined add at the top of a truncated stack has nothing to merge into.
	var inl []string
	for _, r := range m.tree.rows {
		if r.g.inlined {
			inl = append(inl, m.tree.prof.names[r.g.fn])
		}
	}
	if !slices.Equal(inl, []string{cxxName("add")}) {
		t.Errorf("inlined rows in physical frames: %q, want only add under [truncated]", inl)
	}
	// spin's self is its own and that of what was inlined into it: 50 + 200 + 300 ms.
	if got := phys[cxxName("spin")]; got[0] != 550e6 || got[1] != 710e6 {
		t.Errorf("physical spin self/total %v, want 550ms/710ms", got)
	}
	// handle holds parse and the lambda; memcpy from the inlined parse and from handle
	// itself are one row under handle.
	if got := phys[cxxName("handle")]; got[0] != 90e6 {
		t.Errorf("physical handle self %v, want 90ms (parse 60 + lambda 30)", got[0])
	}
	if got := phys[cxxName("memcpy")]; got[0] != 110e6 {
		t.Errorf("physical memcpy %v, want one row of 110ms", got)
	}
	for name, w := range logical {
		if p, ok := phys[name]; ok && name != cxxName("add") && p[1] < w[1] {
			t.Errorf("%s: physical total %v below logical %v", name, p[1], w[1])
		}
	}
	// The comparison gets the same transform: the grand totals and the rows' shares
	// stay consistent.
	p := m.tree.prof
	if p.grand != float64(m.snap.Tree.Total().Time) || p.cmpGrand != float64(m.snap.Tree.Total().Samples) {
		t.Errorf("physical grand totals %v, %v", p.grand, p.cmpGrand)
	}
	for _, r := range m.tree.rows {
		if m.tree.prof.names[r.g.fn] == cxxName("spin") && r.g.cmpSelf != 40+180+250 {
			t.Errorf("physical spin comparison self %v, want 470 samples", r.g.cmpSelf)
		}
	}
	send(m, press("I"))
	if m.physical || strings.Contains(screen(m), "physical frames") {
		t.Error("I did not switch back to logical frames")
	}
	expandEverything(m)
	if got := rowsByName(m); fmt.Sprint(got) != fmt.Sprint(logical) {
		t.Errorf("back to logical frames, the rows differ:\n got %v\nwant %v", got, logical)
	}
}

// The cursor stays on its context across the toggle: inlined steps are dropped going
// physical and found again going back.
func TestPhysicalCarriesCursorAndFocus(t *testing.T) {
	m := newPlain(newFake(cxxSnapshot()), Options{})
	send(m, press("e"))
	i := slices.IndexFunc(m.tree.rows, func(r row) bool { return m.tree.prof.names[r.g.fn] == cxxName("realloc") })
	if i < 0 {
		t.Fatalf("test setup: no _M_realloc_insert row:\n%s", screen(m))
	}
	m.tree.moveTo(i)
	want := []string{"main", "run", "handle", "spin", "add", "push", "realloc"}
	name := func(ks ...string) []string {
		var out []string
		for _, k := range ks {
			out = append(out, cxxName(k))
		}
		return out
	}
	if got := m.tree.cursorPathNames(); !slices.Equal(got, name(want...)) {
		t.Fatalf("cursor on %q", got)
	}
	send(m, press("I"))
	if got := m.tree.cursorPathNames(); !slices.Equal(got, name("main", "run", "handle", "spin", "realloc")) {
		t.Errorf("physical: cursor on %q", got)
	}
	send(m, press("I"))
	if got := m.tree.cursorPathNames(); !slices.Equal(got, name(want...)) {
		t.Errorf("logical again: cursor on %q", got)
	}

	// Focus on the inlined push_back: in physical frames the focus is the frame it is
	// part of, spin; back in logical frames it stays on spin.
	i = slices.IndexFunc(m.tree.rows, func(r row) bool { return m.tree.prof.names[r.g.fn] == cxxName("push") })
	m.tree.moveTo(i)
	send(m, press("f"))
	send(m, press("I"))
	if got := m.viewInfo().focus; len(got) == 0 || got[len(got)-1] != "shapes::spin" {
		t.Errorf("physical focus %q, want it on shapes::spin", got)
	}
	if strings.Contains(screen(m), "gone") {
		t.Errorf("the toggle lost the focus:\n%s", screen(m))
	}
	send(m, press("I"))
	if got := m.viewInfo().focus; len(got) == 0 || got[len(got)-1] != "shapes::spin" {
		t.Errorf("logical focus %q", got)
	}
	send(m, press("F"))
	if m.viewInfo().focus != nil {
		t.Error("unfocus after the toggles")
	}
}

// Physical frames compose with the other views: bottom-up leaves and flat functions
// are physical, the thread filter weighs the thread's samples, split keeps call sites.
func TestPhysicalComposes(t *testing.T) {
	m := newPlain(newFake(cxxSnapshot()), Options{})
	send(m, keys("I", "t")...)
	flat := rowsByName(m)
	if _, ok := flat[cxxName("push")]; ok {
		t.Error("flat physical view lists the inlined push_back")
	}
	if got := flat[cxxName("spin")][0]; got != 550e6 {
		t.Errorf("flat physical spin self %v", got)
	}
	send(m, keys("t", "i")...) // bottom-up
	bu := rowsByName(m)
	if got := bu[cxxName("spin")][1]; got != 550e6 {
		t.Errorf("bottom-up physical spin %v, want 550ms", got)
	}
	if got := bu[cxxName("add")][1]; got != 15e6 {
		t.Errorf("bottom-up physical add %v, want only the truncated stack's 15ms", got)
	}
	// Bottom-up, the callers of spin's row are physical too.
	i := slices.IndexFunc(m.tree.rows, func(r row) bool { return m.tree.prof.names[r.g.fn] == cxxName("spin") })
	for _, c := range m.tree.forest.children(m.tree.rows[i].g) {
		if n := m.tree.prof.names[c.fn]; n != cxxName("handle") {
			t.Errorf("bottom-up spin called from %s", n)
		}
	}
	send(m, keys("i", "T")...) // top-down, thread 1
	expandEverything(m)
	th := rowsByName(m)
	if got := th[cxxName("main")][1]; got != (300+120+40+200+50+90+60+30+20)*1e6 {
		t.Errorf("thread 1, physical: main total %v", got)
	}
	if _, ok := th[cxxName("add")]; ok {
		t.Error("thread 1, physical: the inlined add has a row")
	}
	send(m, keys("T", "T", "s")...) // all threads, split
	expandEverything(m)
	n := 0
	for _, r := range m.tree.rows {
		if m.tree.prof.names[r.g.fn] == cxxName("memcpy") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("split physical: %d memcpy rows under handle, want 2 (two call sites)", n)
	}
}

// The physical tree is built once per snapshot tree: frames, ticks and new snapshots
// of the same tree reuse it.
func TestPhysicalBuiltOncePerTree(t *testing.T) {
	src := newFake(cxxSnapshot())
	m := newPlain(src, Options{})
	send(m, press("I"))
	ph := m.phys
	for range 3 {
		m.View()
		send(m, tickMsg{}, press("down"))
	}
	s := src.Snapshot()
	s.Seq++
	src.set(s)
	send(m, tickMsg{})
	if m.phys != ph {
		t.Error("the physical tree was rebuilt for the same snapshot tree")
	}
	s = cxxSnapshot()
	s.Seq = 9
	src.set(s)
	send(m, tickMsg{})
	if m.phys == ph || m.phys.logical != s.Tree {
		t.Error("a new snapshot tree did not get a new physical tree")
	}
	send(m, press("I"))
	if m.phys != nil {
		t.Error("the physical tree is kept while logical frames are shown")
	}
}

func TestNamesToggle(t *testing.T) {
	m := newPlain(newFake(cxxSnapshot()), Options{Width: 200})
	send(m, press("e"))
	if !strings.Contains(screen(m), "shapes::Accumulator::add [inl]") || strings.Contains(screen(m), "<long>") {
		t.Errorf("short names are not the default:\n%s", screen(m))
	}
	send(m, press("v"))
	if !strings.Contains(screen(m), "shapes::Accumulator<long>::add(long) [inl]") || !strings.Contains(screen(m), "full names") {
		t.Errorf("v did not show full names:\n%s", screen(m))
	}
	send(m, press("v"))
	if strings.Contains(screen(m), "<long>") || !strings.Contains(screen(m), "short names") {
		t.Errorf("v did not go back to short names:\n%s", screen(m))
	}
	// The focus in the header follows.
	i := slices.IndexFunc(m.tree.rows, func(r row) bool { return m.tree.prof.names[r.g.fn] == cxxName("spin") })
	m.tree.moveTo(i)
	send(m, press("f"))
	if got := m.viewInfo().focus; got[len(got)-1] != "shapes::spin" {
		t.Errorf("short focus %q", got)
	}
	send(m, press("v"))
	if got := m.viewInfo().focus; got[len(got)-1] != cxxName("spin") {
		t.Errorf("full focus %q", got)
	}
}

// Search matches what is on screen and what is not: the short name and the full one.
func TestSearchMatchesShortAndFullNames(t *testing.T) {
	for _, q := range []string{"Accumulator::add", "Accumulator<long>", "accumulator"} {
		for _, full := range []bool{false, true} {
			m := newPlain(newFake(cxxSnapshot()), Options{})
			if full {
				send(m, press("v"))
			}
			send(m, press("/"))
			send(m, typed(q)...)
			send(m, press("enter"))
			if got := cursorName(m); got != cxxName("add") {
				t.Errorf("search %q (full names %v) went to %s", q, full, got)
			}
		}
	}
}

// The toggles are views: export asks the Source for the profile as recorded, whatever
// is shown, and the snapshot's tree is left as it was.
func TestTogglesLeaveExportAlone(t *testing.T) {
	src := newFake(cxxSnapshot())
	tree := src.Snapshot().Tree
	n := tree.Len()
	m := newPlain(src, Options{})
	send(m, keys("I", "v", "x", "enter")...)
	if got := src.done(); len(got) != 1 || got[0] != (Action{Kind: Export, Path: "cctop.pb.gz"}) {
		t.Errorf("actions %+v", got)
	}
	if tree.Len() != n || !tree.HasInlined() {
		t.Error("the physical view changed the snapshot's tree")
	}
}

func TestGoldenInline(t *testing.T) {
	steps := []struct {
		name string
		msgs []tea.Msg
	}{
		{"inline_logical", keys("e")},
		{"inline_physical", keys("I", "e")},
		{"inline_full", keys("v", "e")},
		{"inline_physical_full", keys("I", "v", "e")},
		{"inline_physical_bottomup", keys("I", "i", "e")},
	}
	for _, st := range steps {
		for _, sz := range [][2]int{{80, 24}, {160, 50}} {
			name := fmt.Sprintf("%s_%dx%d", st.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				m := newPlain(newFake(cxxSnapshot()), Options{Width: sz[0], Height: sz[1]})
				send(m, st.msgs...)
				// Open every row on screen below the hot path too, so that the
				// merged rows show.
				expandEverything(m)
				got := screen(m)
				checkScreen(t, got, sz[0], sz[1])
				checkGolden(t, name, got)
			})
		}
	}
}
