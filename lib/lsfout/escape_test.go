package lsfout

import (
	"bytes"
	"testing"
)

func TestEscapeControls(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain name", "plain name"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"over\rwrite\x7f\x00", `over\x0dwrite\x7f\x00`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"8-bit \x9b2J", `8-bit \x9b2J`},
		{"héllo ☃ \xff", "héllo ☃ \xff"},
	} {
		if got := EscapeControls(tc.in); got != tc.want {
			t.Errorf("EscapeControls(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var b bytes.Buffer
		n, err := EscapingWriter(&b).Write([]byte(tc.in))
		if err != nil || n != len(tc.in) || b.String() != tc.want {
			t.Errorf("EscapingWriter(%q) = %q (%d, %v), want %q", tc.in, b.String(), n, err, tc.want)
		}
	}
}

func FuzzEscapeControls(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2J", "\u009b", "\xc2", "\x9b", "ok\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := EscapeControls(s)
		for i := 0; i < len(out); i++ {
			if control(out[i]) {
				t.Fatalf("EscapeControls(%q) = %q keeps control byte %#x", s, out, out[i])
			}
		}
		if bytes.Contains([]byte(out), []byte("\u009b")) || bytes.Contains([]byte(out), []byte("\u0085")) {
			t.Fatalf("EscapeControls(%q) = %q keeps a C1 character", s, out)
		}
	})
}
