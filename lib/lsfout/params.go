package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"xce/lib/api"
)

// WriteParams writes bparams's default listing: the default queue and the
// intervals LSF prints, with XCE's values (XCE has no mbatchd sleep: it
// schedules on events, at most every 20 ms, and at least every second).
func WriteParams(w io.Writer, info *api.ClusterInfo) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Default Queues:  %s\n", info.GetDefaultQueue())
	b.WriteString("MBD_SLEEP_TIME used for calculations:  1 seconds\n")
	b.WriteString("Job Checking Interval:  1 seconds\n")
	b.WriteString("Job Accepting Interval:  0 seconds\n")
	fmt.Fprintf(&b, "CLEAN_PERIOD:  %d seconds\n", info.GetCleanPeriodSec())
	fmt.Fprintf(&b, "MAX_JOB_ARRAY_SIZE:  %d\n", info.GetMaxArraySize())
	return flush(w, &b)
}

// WriteGroups writes bugroup's or bmgroup's listing: GROUP_NAME then the
// members (USERS or HOSTS), the name padded to 13 columns as OpenLava
// prints it ("all" stands for every user or host).
func WriteGroups(w io.Writer, groups []*api.Group, membersTitle string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-13s %s\n", "GROUP_NAME", membersTitle)
	for _, g := range groups {
		fmt.Fprintf(&b, "%-13s %s\n", g.GetName(), strings.Join(g.GetMembers(), " "))
	}
	return flush(w, &b)
}
