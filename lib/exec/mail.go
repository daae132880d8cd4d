package exec

import (
	"fmt"
	"os"
	osexec "os/exec"
	"strings"

	"xce/lib/lsfout"
)

// Mail: with -B the job's start and with -N its report go by mail, through
// the local sendmail (-t reads the recipients from the headers). Without a
// sendmail the report goes to the output file instead, as LSF does when it
// cannot mail. XCE_SENDMAIL in xced's environment names another program
// (sites with a wrapper, and the tests).

// sendmail returns the mail program, "" when there is none.
func sendmail() string {
	cands := []string{"/usr/sbin/sendmail", "/usr/lib/sendmail"}
	if p := os.Getenv("XCE_SENDMAIL"); p != "" {
		cands = []string{p}
	}
	for _, p := range cands {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// recipient is where the job's mail goes: -u, else its user.
func (s *shepherd) recipient() string {
	if u := s.spec.GetMailUser(); u != "" {
		return u
	}
	return s.user
}

// mail sends one message; it reports whether sendmail took it.
func (s *shepherd) mail(subject, body string) bool {
	prog := sendmail()
	if prog == "" {
		return false
	}
	host := s.l.GetHost()
	msg := fmt.Sprintf("From: LSF System <%s@%s>\nTo: %s\nSubject: %s\n\n%s", lsfout.ReportAdmin(s.l.GetClusterAdmin()), host, s.recipient(), subject, body)
	cmd := osexec.Command(prog, "-t", "-oi")
	cmd.Stdin = strings.NewReader(msg)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.log.Warn("sendmail failed", "program", prog, "err", err, "output", string(out))
		return false
	}
	return true
}

// mailStart is bsub -B: a note that the job started.
func (s *shepherd) mailStart() {
	if !s.spec.GetNotifyBegin() {
		return
	}
	id := fmt.Sprint(s.job.GetJobId())
	if i := s.job.GetArrayIndex(); i > 0 {
		id += fmt.Sprintf("[%d]", i)
	}
	host := s.hosts[0].GetHost()
	s.mail(fmt.Sprintf("Job %s: <%s> started on <%s>", id, s.jobName(), host),
		fmt.Sprintf("Job <%s> was started on host <%s> in queue <%s>.\n", s.jobName(), host, s.spec.GetQueue()))
}

// mailReport is bsub -N: the report by mail. The report text begins with
// its own Sender and Subject lines, which become the mail's headers.
func (s *shepherd) mailReport(report string) bool {
	lines := strings.SplitN(report, "\n", 3)
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "Subject: ") {
		return s.mail("Job report", report)
	}
	return s.mail(strings.TrimPrefix(lines[1], "Subject: "), strings.TrimPrefix(lines[2], "\n"))
}

func (s *shepherd) jobName() string {
	if n := s.spec.GetJobName(); n != "" {
		if i := s.job.GetArrayIndex(); i > 0 {
			return fmt.Sprintf("%s[%d]", n, i)
		}
		return n
	}
	return s.spec.GetCommand()
}
