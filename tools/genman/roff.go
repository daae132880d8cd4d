package main

import (
	"fmt"
	"regexp"
	"strings"
)

// The hand-written parts of the pages (man/src/*.md) use a small subset
// of Markdown, rendered to roff (man(7) macros) here:
//
//	## NAME          a section (.SH); the text up to the next ## is its body
//	### -opt value   a tagged paragraph (.TP): the heading is the tag, the
//	                 paragraphs below it (up to the next heading) its body
//	- item           a bullet; lines indented below it continue it
//	```              a literal block, up to the next ```
//	`code` **b**     bold; *it* is italic; other text is escaped
//
// Anything else is a paragraph; lines of a paragraph are joined.

// section is one "## NAME" part of a source file.
type section struct {
	name string
	body string
}

// splitSections cuts a source file at its "## " headings; text before the
// first heading is ignored (a title or a comment for editors).
func splitSections(src string) []section {
	var out []section
	inCode := false
	for _, line := range strings.SplitAfter(src, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(line, "## ") {
			out = append(out, section{name: strings.TrimSpace(line[3:])})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].body += line
		}
	}
	return out
}

// roffBlocks renders a section's body.
func roffBlocks(body string) string {
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	inTerm := false // after a ### heading: paragraphs are indented
	para := func() string {
		if inTerm {
			return ".IP\n"
		}
		return ".PP\n"
	}
	for i := 0; i < len(lines); {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "":
			i++
		case strings.HasPrefix(line, "```"):
			b.WriteString(para())
			b.WriteString(".RS 4\n.nf\n")
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				b.WriteString(escapeLine(lines[i], false) + "\n")
			}
			b.WriteString(".fi\n.RE\n")
			i++
		case strings.HasPrefix(line, "### "):
			b.WriteString(".TP\n" + inline(strings.TrimSpace(line[4:])) + "\n")
			inTerm = true
			i++
			// The first paragraph is the tag's body, with no macro of its own.
			var text []string
			for ; i < len(lines) && isText(lines[i]); i++ {
				text = append(text, strings.TrimSpace(lines[i]))
			}
			if len(text) > 0 {
				b.WriteString(inline(strings.Join(text, " ")) + "\n")
			}
		case strings.HasPrefix(line, "- "):
			text := []string{strings.TrimSpace(line[2:])}
			for i++; i < len(lines) && strings.HasPrefix(lines[i], "  ") && strings.TrimSpace(lines[i]) != ""; i++ {
				text = append(text, strings.TrimSpace(lines[i]))
			}
			indent := "2"
			if inTerm {
				b.WriteString(".RS\n")
			}
			b.WriteString(".IP \\(bu " + indent + "\n" + inline(strings.Join(text, " ")) + "\n")
			if inTerm {
				b.WriteString(".RE\n")
			}
		default:
			var text []string
			for ; i < len(lines) && isText(lines[i]); i++ {
				text = append(text, strings.TrimSpace(lines[i]))
			}
			b.WriteString(para() + inline(strings.Join(text, " ")) + "\n")
		}
	}
	return b.String()
}

// isText reports whether a line continues a paragraph.
func isText(l string) bool {
	return strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "```") &&
		!strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "- ")
}

var inlineRE = regexp.MustCompile("`[^`]+`|\\*\\*[^*]+\\*\\*|\\*[^*\\s][^*]*\\*")

// inline renders one paragraph's text: code and bold in bold, emphasis in
// italics, everything escaped.
func inline(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range inlineRE.FindAllStringIndex(s, -1) {
		b.WriteString(escape(s[last:m[0]]))
		tok := s[m[0]:m[1]]
		switch {
		case tok[0] == '`':
			b.WriteString(`\fB` + escape(tok[1:len(tok)-1]) + `\fR`)
		case strings.HasPrefix(tok, "**"):
			b.WriteString(`\fB` + escape(tok[2:len(tok)-2]) + `\fR`)
		default:
			b.WriteString(`\fI` + escape(tok[1:len(tok)-1]) + `\fR`)
		}
		last = m[1]
	}
	b.WriteString(escape(s[last:]))
	return guardLine(b.String())
}

// escape makes text literal in roff: backslashes and hyphens (so that an
// option's dash is a real minus sign that man can search and copy).
func escape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// escapeLine is escape for a whole output line, guarding a leading control
// character; hyphens in literal blocks stay minus signs too.
func escapeLine(s string, _ bool) string { return guardLine(escape(s)) }

// guardLine keeps a line that starts with . or ' from being a request.
func guardLine(s string) string {
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		return `\&` + s
	}
	return s
}

// th is a page's title line.
func th(name string, sect int, date, source, manual string) string {
	return fmt.Sprintf(".TH %q %q %q %q %q\n", strings.ToUpper(name), fmt.Sprint(sect), date, source, manual)
}
