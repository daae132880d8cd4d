package top

// Frame draws one frame of width w and height h, with the model's current
// data: xcetop --once and the golden tests.
func (m *Model) Frame(w, h int) string {
	m.w, m.h = w, h
	m.refresh()
	m.layoutDetail()
	return m.View()
}
