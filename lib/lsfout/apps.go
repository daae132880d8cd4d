package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
)

// appNameWidth is the width of bapp's APPLICATION_NAME column.
const appNameWidth = 20

// WriteApps writes the default bapp table for profiles in the order given:
// APPLICATION_NAME in 20 columns (cut unless wide; with wide the column
// grows to the longest name), then NJOBS PEND RUN SUSP as "%5d" separated
// by single spaces, SUSP being SSUSP plus USUSP.
func WriteApps(w io.Writer, apps []*api.App, noheader, wide bool) error {
	width := appNameWidth
	if wide {
		for _, a := range apps {
			width = max(width, runeLen(a.GetName()))
		}
	}
	var b bytes.Buffer
	if !noheader {
		b.WriteString(padRight("APPLICATION_NAME", width) + " NJOBS  PEND   RUN  SUSP\n")
	}
	for _, a := range apps {
		fmt.Fprintf(&b, "%s %5d %5d %5d %5d\n", fixed(a.GetName(), width),
			a.GetNjobs(), a.GetPend(), a.GetRun(), a.GetSsusp()+a.GetUsusp())
	}
	return flush(w, &b)
}

// WriteAppsLong writes bapp -l for profiles in the order given, records
// separated by a blank line and a line of 79 "-". A record holds:
// "APPLICATION NAME: name"; "  -- description"; STATISTICS: NJOBS PEND RUN
// SSUSP USUSP RSV in 8-column cells; PARAMETERS: the RUNLIMIT, MEMLIMIT and
// TASKLIMIT tables, then one "KEY: value" line each for RES_REQ, FIXED (the
// attributes a job cannot override), PRE_EXEC, POST_EXEC, JOB_EXEC (whether
// a job may bring its own -E and -Ep: "allowed" or "not allowed"),
// JOB_STARTER and ENV_VARS.
func WriteAppsLong(w io.Writer, apps []*api.App) error {
	var b bytes.Buffer
	for i, a := range apps {
		if i > 0 {
			b.WriteString(QueueSeparator + "\n")
		}
		appLong(&b, a)
	}
	return flush(w, &b)
}

func appLong(b *bytes.Buffer, a *api.App) {
	b.WriteString("APPLICATION NAME: " + a.GetName() + "\n")
	desc := a.GetDescription()
	if desc == "" {
		desc = "No description provided."
	}
	b.WriteString("  -- " + desc + "\n\n")

	b.WriteString("STATISTICS:\n")
	b.WriteString("   NJOBS     PEND      RUN    SSUSP    USUSP      RSV\n")
	fmt.Fprintf(b, "%8d %8d %8d %8d %8d %8d\n\n",
		a.GetNjobs(), a.GetPend(), a.GetRun(), a.GetSsusp(), a.GetUsusp(), a.GetRsv())

	b.WriteString("PARAMETERS:\n")
	b.WriteString(limitTables(a.GetRunLimitSec(), a.GetMemLimitKb(),
		taskLimit(a.GetMinTasks(), a.GetDefaultTasks(), a.GetMaxTasks())))
	b.WriteByte('\n')
	line := func(key, val string) {
		if val != "" {
			b.WriteString(key + ": " + val + "\n")
		}
	}
	line("RES_REQ", a.GetResReq())
	line("GPU_REQ", a.GetGpuReq())
	line("FIXED", strings.Join(a.GetFixed(), " "))
	line("PRE_EXEC", a.GetPreExec())
	line("POST_EXEC", a.GetPostExec())
	if a.GetAllowJobExec() {
		line("JOB_EXEC", "allowed")
	} else {
		line("JOB_EXEC", "not allowed")
	}
	line("JOB_STARTER", a.GetJobStarter())
	line("CONTAINER", a.GetContainer())
	line("EXEC_DRIVER", a.GetExecDriver())
	line("ENV_VARS", envVars(a.GetEnv()))
	b.WriteByte('\n')
}

// envVars writes a profile's environment as NAME=value words by name, a
// value with blanks or quotes quoted as Go does.
func envVars(env map[string]string) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(env)) {
		v := env[n]
		if v == "" || strings.ContainsAny(v, " \t\"'\\") {
			v = strconv.Quote(v)
		}
		parts = append(parts, n+"="+v)
	}
	return strings.Join(parts, " ")
}
