package container

import (
	"fmt"
	"strings"
)

// ExecDriver is LSF's EXEC_DRIVER of a docker (or podman) profile:
//
//	context[user(USER)] starter[PATH] controller[PATH] monitor[PATH]
//
// The scripts run as USER (the job's user when none is named). The
// starter is the job's process in place of the runtime's CLI: its
// arguments are the command line Build makes (`docker run ... IMAGE
// COMMAND`), so that one that only prepares ends with `exec "$@"`; the
// controller runs at each signal the job is sent, with the signal's
// name; the monitor runs periodically while the job runs (lib/exec's
// driver.go, lib/worker's driver.go).
type ExecDriver struct {
	User       string // context[user(...)]
	Starter    string
	Controller string
	Monitor    string
}

// ParseExecDriver parses an exec_driver value.
func ParseExecDriver(value string) (*ExecDriver, error) {
	fail := func(format string, a ...any) (*ExecDriver, error) {
		return nil, &ExecDriverError{Value: value, Msg: fmt.Sprintf(format, a...)}
	}
	if len(value) > maxValue {
		return fail("the value is longer than %d bytes", maxValue)
	}
	d := &ExecDriver{}
	seen := map[string]bool{}
	s := strings.TrimSpace(value)
	for i := 0; ; {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		kw := strings.ToLower(s[i:j])
		if kw == "" {
			return fail("unexpected %q; expected context[...], starter[...], controller[...] or monitor[...]", s[i:i+1])
		}
		if j == len(s) || s[j] != '[' {
			return fail("%s: expected '[' after it", kw)
		}
		end := strings.IndexByte(s[j:], ']')
		if end < 0 {
			return fail("%s[: no matching ']'", kw)
		}
		arg := strings.TrimSpace(s[j+1 : j+end])
		i = j + end + 1
		if seen[kw] {
			return fail("%s[] is given twice", kw)
		}
		seen[kw] = true
		switch kw {
		case "context":
			u, ok := strings.CutPrefix(arg, "user(")
			if !ok || !strings.HasSuffix(u, ")") || strings.TrimSpace(u[:len(u)-1]) == "" {
				return fail("context[%s]: expected context[user(USER)]", arg)
			}
			d.User = strings.TrimSpace(u[:len(u)-1])
		case "starter", "controller", "monitor":
			if arg == "" {
				return fail("%s[] names no program", kw)
			}
			switch kw {
			case "starter":
				d.Starter = arg
			case "controller":
				d.Controller = arg
			default:
				d.Monitor = arg
			}
		default:
			return fail("unknown keyword %s[]; expected context, starter, controller or monitor", kw)
		}
	}
	if d.Starter == "" {
		return fail("no starter[]; an execution driver needs one")
	}
	return d, nil
}

// ExecDriverError is a malformed exec_driver value.
type ExecDriverError struct {
	Value string
	Msg   string
}

func (e *ExecDriverError) Error() string {
	return fmt.Sprintf("EXEC_DRIVER=%s: %s", e.Value, e.Msg)
}

// String is the value in canonical form.
func (d *ExecDriver) String() string {
	var parts []string
	if d.User != "" {
		parts = append(parts, "context[user("+d.User+")]")
	}
	for _, p := range []struct{ kw, v string }{{"starter", d.Starter}, {"controller", d.Controller}, {"monitor", d.Monitor}} {
		if p.v != "" {
			parts = append(parts, p.kw+"["+p.v+"]")
		}
	}
	return strings.Join(parts, " ")
}
