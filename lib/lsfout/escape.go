package lsfout

import (
	"io"
	"unicode/utf8"
)

// Control characters in what the commands print are escaped, Go-style: a
// job name, command, path, environment value, description or reason is
// some user's text, and a user's ESC sequences must not reach another
// user's terminal (clear it, retitle it, hide lines, or worse on old
// terminals). C0 controls other than newline and tab, DEL, and C1 controls
// (U+0080 to U+009F, and the bytes 0x80 to 0x9F where they are not part
// of a UTF-8 character, which 8-bit terminals take as C1) become \xHH, or
// \u00HH for a C1 character. The commands apply it once, to all they
// write (lib/cli), not per format.

// EscapeControls returns s with its control characters escaped.
func EscapeControls(s string) string {
	if !needsEscape([]byte(s)) {
		return s
	}
	return string(appendEscaped(nil, []byte(s)))
}

// EscapingWriter returns a writer that escapes control characters in what
// it writes to w. A UTF-8 C1 character split between two writes is
// escaped byte by byte, which hides it as well.
func EscapingWriter(w io.Writer) io.Writer {
	return &escaper{w: w}
}

type escaper struct {
	w   io.Writer
	buf []byte
}

func (e *escaper) Write(p []byte) (int, error) {
	if !needsEscape(p) {
		return e.w.Write(p)
	}
	e.buf = appendEscaped(e.buf[:0], p)
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

const hexDigits = "0123456789abcdef"

// control reports whether the byte is a C0 control to escape, or DEL.
func control(c byte) bool {
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f
}

func needsEscape(p []byte) bool {
	for _, c := range p {
		if control(c) || (c >= 0x80 && c <= 0x9f) {
			// A byte 0x80-0x9F is most often the tail of a UTF-8
			// character: appendEscaped decides.
			return true
		}
	}
	return false
}

func appendEscaped(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case control(c):
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			i++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(p[i:])
			switch {
			case r == utf8.RuneError && n <= 1:
				if c <= 0x9f {
					dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
				} else {
					dst = append(dst, c)
				}
				i++
			case r >= 0x80 && r <= 0x9f:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&15])
				i += n
			default:
				dst = append(dst, p[i:i+n]...)
				i += n
			}
		}
	}
	return dst
}
