package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// TestSGRMatchesRender: a reduced style writes what lipgloss's Render writes, for every
// row and header style of every theme; a style whose output depends on its text's width is not
// reduced, and still writes what Render does.
func TestSGRMatchesRender(t *testing.T) {
	texts := []string{"12.3%", "  ", "▾ ", "main.(*T).run", "日本語 name", " @file.go:12", "a\tb", "x\ny", "…"}
	for name, st := range map[string]Styles{"dark": DefaultStyles(true), "light": DefaultStyles(false), "plain": PlainStyles()} {
		rs := st.reduced()
		for i, g := range []sgr{rs.hot, rs.warm, rs.percent, rs.metric, rs.deltaUp, rs.deltaDn, rs.glyph, rs.name, rs.match, rs.inlined, rs.callSite, rs.label, rs.value, rs.warn, rs.title} {
			// The search's match underlines: lipgloss styles spaces apart there.
			if !g.ok && !g.style.GetUnderline() {
				t.Errorf("%s: style %d not reduced", name, i)
			}
			for _, s := range texts {
				var b strings.Builder
				g.write(&b, s)
				if want := g.style.Render(s); b.String() != want {
					t.Errorf("%s: style %d writes %q as %q, Render %q", name, i, s, b.String(), want)
				}
			}
		}
	}
	for _, c := range []struct {
		s      lipgloss.Style
		reduce bool
	}{
		{lipgloss.NewStyle().Width(10), false},
		{lipgloss.NewStyle().Align(lipgloss.Right).Width(4), false},
		{lipgloss.NewStyle().PaddingLeft(2).Bold(true), true},
	} {
		g := newSGR(c.s)
		if g.ok != c.reduce {
			t.Errorf("style %q: reduced %v, want %v", c.s.Render("ab"), g.ok, c.reduce)
		}
		for _, s := range texts {
			var b strings.Builder
			g.write(&b, s)
			if want := c.s.Render(s); b.String() != want {
				t.Errorf("style %q writes %q, Render %q", c.s.Render("ab"), b.String(), want)
			}
		}
	}
}
