package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// sgr is a style reduced to what it writes before and after its text. For a style of
// colors and attributes alone (no width, padding, margin, border or transform), lipgloss
// writes one line without tabs as exactly pre, the text, post; but its Render parses and
// measures the text on every call: the tree's rows and the header's items were two thirds of
// the live view's drawing.
// ok is false where the reduction does not hold, and Render is used.
type sgr struct {
	style     lipgloss.Style
	pre, post string
	ok        bool
}

// sgrProbe is text no escape sequence contains, to find where the style's text goes.
const sgrProbe = "\uFFFD"

func newSGR(s lipgloss.Style) sgr {
	g := sgr{style: s}
	r := s.Render(sgrProbe)
	i := strings.Index(r, sgrProbe)
	if i < 0 || strings.Contains(r[i+len(sgrProbe):], sgrProbe) {
		return g
	}
	g.pre, g.post = r[:i], r[i+len(sgrProbe):]
	// Only a style that wraps any text the same way is reduced: one that pads, aligns
	// or styles spaces apart gives itself away on a longer probe.
	const long = "a b\u2026c"
	g.ok = s.Render(long) == g.pre+long+g.post
	return g
}

// write appends text in the style; nothing for no text.
func (g sgr) write(b *strings.Builder, text string) {
	switch {
	case text == "":
	case g.ok && strings.IndexByte(text, '\t') < 0 && strings.IndexByte(text, '\n') < 0:
		b.WriteString(g.pre)
		b.WriteString(text)
		b.WriteString(g.post)
	default:
		b.WriteString(g.style.Render(text))
	}
}

// reducedStyles is the styles of what every frame draws again: the tree's rows and the
// header's items.
type reducedStyles struct {
	hot, warm, percent, metric, deltaUp, deltaDn sgr
	glyph, name, match, inlined, callSite        sgr
	label, value, warn, title                    sgr
}

// reduced reduces the styles once per Styles value: a change of background assigns a
// new Styles, whose styles are reduced at its first frame.
func (s *Styles) reduced() *reducedStyles {
	if s.sgrs == nil {
		s.sgrs = &reducedStyles{
			hot: newSGR(s.Hot), warm: newSGR(s.Warm), percent: newSGR(s.Percent), metric: newSGR(s.Metric),
			deltaUp: newSGR(s.DeltaUp), deltaDn: newSGR(s.DeltaDn), glyph: newSGR(s.Glyph), name: newSGR(s.Name),
			match: newSGR(s.Match), inlined: newSGR(s.Inlined), callSite: newSGR(s.CallSite),
			label: newSGR(s.Label), value: newSGR(s.Value), warn: newSGR(s.Warn), title: newSGR(s.Title),
		}
	}
	return s.sgrs
}
