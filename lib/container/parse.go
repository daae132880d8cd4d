package container

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mattn/go-shellwords"
)

// Runtime is a container runtime XCE drives.
type Runtime string

// The runtimes.
const (
	Podman       Runtime = "podman"
	Docker       Runtime = "docker"
	NvidiaDocker Runtime = "nvidia-docker"
	Apptainer    Runtime = "apptainer"
	Singularity  Runtime = "singularity"
	Enroot       Runtime = "enroot"
)

// Runtimes are the runtimes Parse accepts, in the order error messages
// name them.
var Runtimes = []Runtime{Podman, Docker, NvidiaDocker, Apptainer, Singularity, Enroot}

// OCI reports whether the runtime takes docker's `run` options.
func (r Runtime) OCI() bool { return r == Podman || r == Docker || r == NvidiaDocker }

// ImageVar is the variable with which a job chooses its image.
const ImageVar = "LSB_CONTAINER_IMAGE"

// Spec is a parsed container value.
type Spec struct {
	Runtime Runtime
	// Image as configured; it may name $LSB_CONTAINER_IMAGE (Image
	// resolves it).
	Image string
	// Options are the words of options(); a word "@PATH" is a script
	// whose output replaces it on the execution host.
	Options     []string
	ContainerIO bool // container_io()
	JobPrePost  bool // job_pre_post()
}

// ParseError is a malformed container or exec_driver value; its message
// is the one bsub and the configuration show.
type ParseError struct {
	Value string
	Msg   string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("CONTAINER=%s: %s", e.Value, e.Msg)
}

// maxValue bounds a value: a profile's line, not a file.
const maxValue = 64 << 10

// Parse parses an application profile's container value, LSF's
// CONTAINER syntax: RUNTIME[image(IMAGE) options(OPTIONS) container_io()
// job_pre_post()].
func Parse(value string) (*Spec, error) {
	fail := func(format string, a ...any) (*Spec, error) {
		return nil, &ParseError{Value: value, Msg: fmt.Sprintf(format, a...)}
	}
	if len(value) > maxValue {
		return fail("the value is longer than %d bytes", maxValue)
	}
	s := strings.TrimSpace(value)
	open := strings.IndexByte(s, '[')
	if open < 0 || !strings.HasSuffix(s, "]") {
		return fail("expected RUNTIME[image(IMAGE) options(OPTIONS)]")
	}
	name := strings.TrimSpace(s[:open])
	rt := Runtime(strings.ToLower(name))
	switch {
	case name == "":
		return fail("no container runtime before '['")
	case rt == "shifter" || rt == "kubernetes":
		return fail("container runtime %s is not supported; use %s", name, runtimeList())
	case !slices.Contains(Runtimes, rt):
		return fail("unknown container runtime %q; use %s", name, runtimeList())
	}
	sp := &Spec{Runtime: rt}
	seen := map[string]bool{}
	body := s[open+1 : len(s)-1]
	for i := 0; ; {
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		if i == len(body) {
			break
		}
		j := i
		for j < len(body) && (isWordByte(body[j])) {
			j++
		}
		kw := strings.ToLower(body[i:j])
		if kw == "" {
			return fail("unexpected %q at column %d of the brackets; expected image(...) or options(...)", body[i:i+1], i+1)
		}
		if j == len(body) || body[j] != '(' {
			return fail("%s: expected '(' after it", kw)
		}
		arg, end, ok := balanced(body, j)
		if !ok {
			return fail("%s(: no matching ')'", kw)
		}
		i = end
		if seen[kw] {
			return fail("%s() is given twice", kw)
		}
		seen[kw] = true
		switch kw {
		case "image":
			sp.Image = strings.TrimSpace(arg)
			if sp.Image == "" {
				return fail("image() is empty")
			}
			if msg := checkImage(sp.Image, true); msg != "" {
				return fail("image(%s): %s", sp.Image, msg)
			}
		case "options":
			words, err := splitWords(arg)
			if err != nil {
				return fail("options(%s): %v", arg, err)
			}
			if r := reserved(rt, words); r != "" {
				return fail("options(): %s is reserved: XCE sets it for every job", r)
			}
			if len(words) > 0 {
				sp.Options = words
			}
		case "container_io", "job_pre_post":
			if strings.TrimSpace(arg) != "" {
				return fail("%s() takes no argument", kw)
			}
			if kw == "container_io" {
				sp.ContainerIO = true
			} else {
				sp.JobPrePost = true
			}
		default:
			return fail("unknown keyword %s(); expected image(), options(), container_io() or job_pre_post()", kw)
		}
	}
	if sp.Image == "" {
		return fail("no image(); every container needs one")
	}
	return sp, nil
}

func runtimeList() string {
	names := make([]string, len(Runtimes))
	for i, r := range Runtimes {
		names[i] = string(r)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// balanced returns what is between the '(' at s[open] and its matching
// ')', and the index after that ')'. Parentheses nest; a quoted one
// does not count.
func balanced(s string, open int) (inner string, end int, ok bool) {
	depth := 0
	var quote byte
	for i := open; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(s) {
				i++
			}
		case c == '\\' && i+1 < len(s):
			i++
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return s[open+1 : i], i + 1, true
			}
		}
	}
	return "", 0, false
}

// splitWords splits options as a shell does, without expanding anything.
func splitWords(s string) ([]string, error) {
	p := shellwords.NewParser()
	p.ParseEnv, p.ParseBacktick = false, false
	words, err := p.Parse(s)
	if err != nil {
		return nil, err
	}
	if p.Position >= 0 {
		return nil, fmt.Errorf("unexpected %q", s[p.Position:])
	}
	for _, w := range words {
		if strings.ContainsRune(w, 0) {
			return nil, fmt.Errorf("a NUL byte in %q", w)
		}
		if w == "@" {
			return nil, fmt.Errorf("'@' names no script")
		}
	}
	return words, nil
}

// reserved is the first option of words that XCE sets itself, "" when
// none is.
func reserved(rt Runtime, words []string) string {
	var flags []string
	switch {
	case rt.OCI():
		flags = []string{"--user", "-u", "--name", "--cgroup-parent", "-w", "--workdir", "--ulimit"}
	case rt == Apptainer || rt == Singularity:
		flags = []string{"--pwd"}
	}
	for _, w := range words {
		name, _, _ := strings.Cut(w, "=")
		if slices.Contains(flags, name) {
			return name
		}
	}
	return ""
}

// EnvLookup looks a name up in env (NAME=VALUE entries; the last one
// wins, as for a process's environment): ResolveImage's lookup for a
// job's environment.
func EnvLookup(env []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
}

// ResolveImage is the image a job runs: the configured one with
// $LSB_CONTAINER_IMAGE (or ${LSB_CONTAINER_IMAGE}) replaced by the job's
// value, looked up by lookup. An image that names the variable when the
// job sets none, or sets it empty or with spaces, is an error that names
// the variable.
func (s *Spec) ResolveImage(lookup func(string) (string, bool)) (string, error) {
	img := s.Image
	if !strings.Contains(img, "$") {
		return img, nil
	}
	v, ok := lookup(ImageVar)
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return "", fmt.Errorf("the application profile's image is $%s, but the job sets no %s (bsub -env \"all, %s=IMAGE\")", ImageVar, ImageVar, ImageVar)
	}
	if msg := checkImage(v, false); msg != "" {
		return "", fmt.Errorf("%s=%q: %s", ImageVar, v, msg)
	}
	img = strings.ReplaceAll(img, "${"+ImageVar+"}", v)
	return strings.ReplaceAll(img, "$"+ImageVar, v), nil
}

// checkImage says what is wrong with an image name, "" when nothing is.
// An image is a reference ([REGISTRY/]NAME[:TAG][@DIGEST]), a transport
// URL (docker://..., library://...) or a file's path, so it is held to
// the characters those use: it goes on the runtime's command line, where
// it must never be taken for an option, and back into the canonical
// value, where it must not end image() early. withVar allows the
// configured image's $LSB_CONTAINER_IMAGE or ${LSB_CONTAINER_IMAGE}.
func checkImage(img string, withVar bool) string {
	if withVar {
		img = strings.ReplaceAll(img, "${"+ImageVar+"}", "x")
		img = strings.ReplaceAll(img, "$"+ImageVar, "x")
	}
	if strings.HasPrefix(img, "-") {
		return "an image name does not start with '-'"
	}
	for _, c := range img {
		ok := c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == '@' || c == '+' || c == '=' || c == '%' || c == '~' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !ok {
			if c == '$' {
				return "only $" + ImageVar + " can be expanded"
			}
			return fmt.Sprintf("%q cannot be part of an image name", c)
		}
	}
	return ""
}

// Scripts are the @script words of the options, the paths without '@'.
func (s *Spec) Scripts() []string {
	var out []string
	for _, w := range s.Options {
		if p, ok := strings.CutPrefix(w, "@"); ok {
			out = append(out, p)
		}
	}
	return out
}

// ExpandOptions is the options with each @script word replaced by the
// words of its output (run returns a script's output); the result is
// checked for reserved options as the configured ones were.
func (s *Spec) ExpandOptions(run func(script string) (string, error)) ([]string, error) {
	var out []string
	for _, w := range s.Options {
		p, ok := strings.CutPrefix(w, "@")
		if !ok {
			out = append(out, w)
			continue
		}
		text, err := run(p)
		if err != nil {
			return nil, fmt.Errorf("options script %s: %w", p, err)
		}
		words, err := splitWords(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("options script %s printed %q: %w", p, text, err)
		}
		if r := reserved(s.Runtime, words); r != "" {
			return nil, fmt.Errorf("options script %s printed %s, which XCE reserves", p, r)
		}
		out = append(out, words...)
	}
	return out, nil
}

// String is the value in canonical form: lower-case runtime, keywords in
// LSF's order, options joined with single spaces and quoted where needed.
func (s *Spec) String() string {
	var b strings.Builder
	b.WriteString(string(s.Runtime) + "[image(" + s.Image + ")")
	if len(s.Options) > 0 {
		q := make([]string, len(s.Options))
		for i, w := range s.Options {
			q[i] = quoteWord(w)
		}
		b.WriteString(" options(" + strings.Join(q, " ") + ")")
	}
	if s.ContainerIO {
		b.WriteString(" container_io()")
	}
	if s.JobPrePost {
		b.WriteString(" job_pre_post()")
	}
	b.WriteString("]")
	return b.String()
}

// quoteWord quotes a word for options() when a shell would split or
// change it.
func quoteWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n\r'\"\\()$`;&|<>*?[]{}#~!") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
