package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"xce/lib/api"
)

// Standalone claim listings (bclaim list; an XCE command, no LSF
// format to keep).

const claimHeader = "NAME         CREATOR     STATUS  HOST         NJOBS  RUSAGE\n"

// WriteClaims writes bclaim list: one row per claim (NAME cut at 12
// characters unless long), STATUS HELD or PEND, HOST where it is held
// ("-" while it pends), NJOBS its unfinished jobs, RUSAGE its -R. With
// long, each claim is a paragraph: its fields, the instances it holds,
// its pending reason and its jobs. loc is the time zone times are shown
// in.
func WriteClaims(w io.Writer, claims []*api.ClaimInfo, long bool, loc *time.Location) error {
	var b bytes.Buffer
	if len(claims) == 0 {
		b.WriteString("No claim found\n")
		return flush(w, &b)
	}
	if long {
		for i, ci := range claims {
			if i > 0 {
				b.WriteByte('\n')
			}
			writeClaimLong(&b, ci, loc)
		}
		return flush(w, &b)
	}
	b.WriteString(claimHeader)
	for _, ci := range claims {
		name := ci.GetName()
		if len(name) > 12 {
			name = name[:12]
		}
		fmt.Fprintf(&b, "%-12s %-11s %-7s %-12s %-6d %s\n", name, ci.GetCreator(), claimStatus(ci), dash(ci.GetHost()),
			len(ci.GetJobs()), ci.GetResReq())
	}
	return flush(w, &b)
}

func claimStatus(ci *api.ClaimInfo) string {
	if ci.GetHost() != "" {
		return "HELD"
	}
	return "PEND"
}

func writeClaimLong(b *bytes.Buffer, ci *api.ClaimInfo, loc *time.Location) {
	t := func(sec int64) string {
		if sec == 0 {
			return "-"
		}
		return time.Unix(sec, 0).In(loc).Format("Mon Jan _2 15:04:05 2006")
	}
	users := strings.Join(append([]string{ci.GetCreator()}, ci.GetUsers()...), " ")
	if g := ci.GetGroup(); g != "" {
		users += " (group " + g + ")"
	}
	excl := "no"
	if ci.GetExclusive() {
		excl = "yes"
	}
	fmt.Fprintf(b, "CLAIM <%s>\n", ci.GetName())
	fmt.Fprintf(b, " Creator: %s\n Status: %s\n Requirement: %s\n", ci.GetCreator(), claimStatus(ci), ci.GetResReq())
	fmt.Fprintf(b, " Candidate hosts: %s\n Users: %s\n Exclusive: %s\n", dash(strings.Join(ci.GetHosts(), " ")), users, excl)
	fmt.Fprintf(b, " Created: %s\n End: %s\n", t(ci.GetCreated()), t(ci.GetEnd()))
	if ci.GetHost() != "" {
		fmt.Fprintf(b, " Held on: %s since %s\n", ci.GetHost(), t(ci.GetAllocated()))
		for _, ia := range ci.GetInstances() {
			fmt.Fprintf(b, " Instances: %s=%s\n", ia.GetResource(), strings.Join(ia.GetNames(), ","))
		}
	} else if r := ci.GetPendReason(); r != "" {
		fmt.Fprintf(b, " PENDING REASONS:\n")
		for _, l := range strings.Split(r, "; ") {
			fmt.Fprintf(b, " %s;\n", l)
		}
	}
	if len(ci.GetJobs()) > 0 {
		var js []string
		for _, j := range ci.GetJobs() {
			js = append(js, jobRefString(j.GetJobId(), j.GetArrayIndex())+" "+StateName(j.GetState()))
		}
		fmt.Fprintf(b, " Jobs: %s\n", strings.Join(js, ", "))
	}
}

// claimLong is bjobs -l's line for a job of a claim (bsub -claim).
func claimLong(b *bytes.Buffer, j *api.Job) {
	if name := effective(j).GetClaim(); name != "" {
		b.WriteString("\n CLAIM: " + name + "\n")
	}
}
