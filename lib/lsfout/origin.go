package lsfout

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
)

// The EFFECTIVE SETTINGS section of bjobs -l (an XCE addition): one row per
// layered value, label in 15 columns, value in 29, then where the value
// came from.
const (
	originLabelWidth = 15
	originValueWidth = 29
)

// originIndent lines a row's further lines up with its value; originAt
// lines an origin up with the origin column.
var (
	originIndent = strings.Repeat(" ", 1+originLabelWidth)
	originAt     = strings.Repeat(" ", 1+originLabelWidth+originValueWidth)
)

// originKeys are the fields of JobSpec.origin EFFECTIVE SETTINGS shows by
// name, in the order shown; any other field follows under its own name.
var originKeys = []string{
	"queue", "app", "project", "min_tasks", "max_tasks", "res_req", "run_limit_sec",
	"mem_limit_kb", "pre_exec", "post_exec", "job_starter", "env", "gpu", "container",
}

// effectiveSettings writes the EFFECTIVE SETTINGS section of a job whose
// effective spec carries origins; nothing otherwise.
func effectiveSettings(b *bytes.Buffer, e *api.JobSpec) {
	origin := e.GetOrigin()
	if len(origin) == 0 {
		return
	}
	b.WriteString("\n EFFECTIVE SETTINGS:\n")
	for _, key := range originKeys {
		o, ok := origin[key]
		if !ok {
			continue
		}
		switch key {
		case "queue":
			originRow(b, "queue", e.GetQueue(), o)
		case "app":
			originRow(b, "application", e.GetApp(), o)
		case "project":
			originRow(b, "project", e.GetProject(), o)
		case "min_tasks":
			originRow(b, "tasks", taskText(e), o)
		case "max_tasks":
			if _, shown := origin["min_tasks"]; !shown {
				originRow(b, "tasks", taskText(e), o)
			}
		case "res_req":
			originRow(b, "res_req", strings.Join(e.GetResReq(), " "), o)
		case "run_limit_sec":
			originRow(b, "run limit", limitMinutes(e.GetRunLimitSec()), o)
		case "mem_limit_kb":
			originRow(b, "mem limit", memLimitText(e.GetMemLimitKb()), o)
		case "pre_exec":
			// The chain runs outermost first; the origin lists innermost first.
			parts := strings.Split(o, " + ")
			slices.Reverse(parts)
			chainRows(b, "pre-exec", e.GetPreExecChain(), parts, o)
		case "post_exec":
			chainRows(b, "post-exec", e.GetPostExecChain(), strings.Split(o, " + "), o)
		case "job_starter":
			originRow(b, "job starter", e.GetJobStarter(), o)
		case "env":
			chainRows(b, "env", e.GetEnvOverlay(), nil, o)
		case "gpu":
			originRow(b, "gpu", e.GetGpu(), o)
		case "container":
			originRow(b, "container", e.GetContainer(), o)
		}
	}
	var rest []string
	for key := range origin {
		if !slices.Contains(originKeys, key) {
			rest = append(rest, key)
		}
	}
	slices.Sort(rest)
	for _, key := range rest {
		originRow(b, key, "", origin[key])
	}
}

// originRow writes one row: label, value, origin. A value too wide for its
// column is folded at 79 characters under itself and the origin goes on
// the next line, in its column.
func originRow(b *bytes.Buffer, label, value, origin string) {
	if value == "" {
		value = "-"
	}
	head := " " + padRight(label, originLabelWidth)
	if runeLen(value) < originValueWidth {
		b.WriteString(strings.TrimRight(head+padRight(value, originValueWidth)+origin, " ") + "\n")
		return
	}
	b.WriteString(head + foldAt(value, 79-runeLen(head), originIndent) + "\n")
	if origin != "" {
		b.WriteString(originAt + origin + "\n")
	}
}

// chainRows writes a list of values (commands of an exec chain, variables),
// one a line, the label on the first. With one origin part per value each
// value gets its own; otherwise the whole origin goes on the first line.
func chainRows(b *bytes.Buffer, label string, values, parts []string, origin string) {
	if len(values) == 0 {
		originRow(b, label, "", origin)
		return
	}
	for i, v := range values {
		o := ""
		switch {
		case len(parts) == len(values):
			o = parts[i]
		case i == 0:
			o = origin
		}
		if i > 0 {
			label = ""
		}
		originRow(b, label, v, o)
	}
}

// foldAt folds s at spaces so that no line passes width characters (a
// word longer than that is cut), joining the lines with "\n"+indent; the
// further lines have width characters too.
func foldAt(s string, width int, indent string) string {
	var lines []string
	for runeLen(s) > width {
		rs := []rune(s)
		cutAt := strings.LastIndexByte(string(rs[:width+1]), ' ')
		if cutAt <= 0 {
			head := string(rs[:width])
			lines = append(lines, head)
			s = string(rs[width:])
			continue
		}
		lines = append(lines, strings.TrimRight(s[:cutAt], " "))
		s = strings.TrimLeft(s[cutAt:], " ")
	}
	lines = append(lines, s)
	return strings.Join(lines, "\n"+indent)
}

func taskText(e *api.JobSpec) string {
	lo, hi := taskRange(e)
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func limitMinutes(sec int64) string {
	if sec <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f min", float64(sec)/60)
}

func memLimitText(kb int64) string {
	if kb <= 0 {
		return "-"
	}
	num, unit := scaleKB(kb)
	return num + " " + unit
}
