package top

import "strings"

// Frame draws one frame of width w and height h, with the model's current
// data: xcetop --once and the golden tests. With Options.Once the frame is
// for a pipe: at most h lines, no cursor, no key hints, no blank lines to
// fill the height and no blanks at the ends of lines.
func (m *Model) Frame(w, h int) string {
	m.w, m.h = w, h
	m.refresh()
	m.layoutDetail()
	f := m.View()
	if !m.opt.Once {
		return f
	}
	lines := strings.Split(f, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
