package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/atomicfile"
)

// ExpandPattern replaces %J with the job ID and %I with the array index (0
// for a job that is not an array element) in an -o, -e, -i or -cwd path.
func ExpandPattern(s string, jobID int64, index int32) string {
	if !strings.Contains(s, "%") {
		return s
	}
	return strings.NewReplacer(
		"%J", strconv.FormatInt(jobID, 10),
		"%I", strconv.Itoa(int(index)),
	).Replace(s)
}

// OutputPath is where a started job's standard output is, as bpeek and
// xcetop's output tail read it: the spool file while it exists (a job
// without -o, or one whose -o output is spooled, the default without
// LSB_STDOUT_DIRECT, until it is copied at the end), else its -o file (%J
// and %I expanded, relative to its working directory); "" before it
// starts.
func OutputPath(j *api.Job) string {
	if j.GetStartTime() == 0 {
		return ""
	}
	o := j.GetEffective().GetOutputFile()
	if o == "" {
		return j.GetSpoolOutput()
	}
	if sp := j.GetSpoolOutput(); sp != "" {
		// Before its START is recorded the job's working directory is
		// unknown; the spool file is where spooled output will be.
		if _, err := os.Stat(sp); err == nil || j.GetExecCwd() == "" {
			return sp
		}
	}
	o = ExpandPattern(o, j.GetJobId(), j.GetArrayIndex())
	if !filepath.IsAbs(o) {
		o = filepath.Join(j.GetExecCwd(), o)
	}
	return o
}

// pathVars holds what the longer pattern list of -cwd and -outdir refers to.
type pathVars struct {
	jobID    int64
	index    int32
	user     string
	group    string // -G user group
	host     string
	project  string
	jobGroup string
}

// hasPattern reports whether s contains a %-pattern expandFull knows.
func hasPattern(s string) bool {
	for _, p := range []string{"%J", "%I", "%U", "%G", "%H", "%P", "%EJ", "%EI"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// expandFull expands the patterns bsub -cwd and -outdir accept: %J, %I,
// %JG (job group), %EJ and %EI (execution job ID and index, the same as %J
// and %I in a single cluster), %U (execution user), %G (-G user group), %H
// (first execution host) and %P (project).
func expandFull(s string, v pathVars) string {
	if !strings.Contains(s, "%") {
		return s
	}
	id := strconv.FormatInt(v.jobID, 10)
	idx := strconv.Itoa(int(v.index))
	// strings.Replacer prefers the longest match at each position, so %JG
	// wins over %J.
	return strings.NewReplacer(
		"%JG", strings.Trim(v.jobGroup, "/"),
		"%EJ", id, "%EI", idx,
		"%J", id, "%I", idx,
		"%U", v.user, "%G", v.group, "%H", v.host, "%P", v.project,
	).Replace(s)
}

// writeMessage writes a protobuf message to path atomically.
func writeMessage(path string, m proto.Message, sync bool) error {
	b, err := api.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := atomicfile.Write(path, b, 0o600, sync); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
