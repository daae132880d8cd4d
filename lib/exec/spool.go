package exec

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"xce/lib/api"
)

// spooled is a job whose -o (and -e) output goes to spool files while it
// runs and is copied to those files, under the job report, when it ends:
// LSF's way without LSB_STDOUT_DIRECT. The job may so create the -o
// file's directory itself, and bpeek reads the spool file.
type spooled struct {
	base     string // what a relative -o or -e is relative to (-outdir, else the working directory)
	errSpool string // the spool file of a separate -e, "" when stderr shares the output's
}

// directSentence ends the report of lsfout.JobReport before its PS part;
// a spooled report says instead that the output follows.
const (
	directSentence  = "The output (if any) is above this job summary.\n\n"
	spooledSentence = "The output (if any) follows:\n\n"
)

// openSpooled opens the spool files of a job with -o: the spool file for
// stdout (and stderr, unless -e names another file, which gets a spool file
// of its own next to it). LSB_OUTPUTFILE and LSB_ERRORFILE name where the
// output will be.
func (s *shepherd) openSpooled(base string) error {
	if err := s.openSpool(); err != nil {
		return setupErrorf(exitSetup, "cannot open the spool file %s: %v", s.spoolPath(), unwrapPath(err))
	}
	s.spool = &spooled{base: base}
	s.outPath, s.outShown, _ = s.resolveOutput(s.spec.GetOutputFile(), ".out", base)
	e := s.spec.GetErrorFile()
	if e == "" {
		return nil
	}
	path, shown, _ := s.resolveOutput(e, ".err", base)
	if path == s.outPath {
		return nil // -e names the -o file: one file for both
	}
	errSpool := s.spoolPath() + ".err"
	f, err := os.OpenFile(errSpool, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return setupErrorf(exitSetup, "cannot open the spool file %s: %v", errSpool, unwrapPath(err))
	}
	s.stderr, s.errPath, s.errShown, s.spool.errSpool = s.relayTo(f), path, shown, errSpool
	return nil
}

// deliverSpool copies the spooled output to the -o file (created, with its
// directory for the directory form, as the job's user: the shepherd is the
// job's user), the job report at the top, LSF's layout, and a separate
// stderr to the -e file. -N mails the report instead, the output alone
// going to the file. Output that cannot be copied is kept in
// $HOME/.lsbatch (LSF's default job spool directory), else left in the
// spool file; the event's detail and the kept file's report say where.
func (s *shepherd) deliverSpool(ev *api.Event, start time.Time) {
	sp := s.spool
	// The files are created with the job's umask, as a job writing them
	// directly would.
	if m := s.spec.GetUmask(); m != 0 {
		umaskMu.Lock()
		old := syscall.Umask(int(m & 0o777))
		defer func() {
			syscall.Umask(old)
			umaskMu.Unlock()
		}()
	}
	// Resolved again: the job may have made the directory it names.
	outPath, outShown, outDir := s.resolveOutput(s.spec.GetOutputFile(), ".out", sp.base)
	s.outShown = outShown
	var errPath, errShown, errDir string
	if sp.errSpool != "" {
		errPath, errShown, errDir = s.resolveOutput(s.spec.GetErrorFile(), ".err", sp.base)
		s.errShown = errShown
	}
	if outPath == os.DevNull && !s.mailIt(ev) {
		// The output and the report would be dropped: neither is made
		// nor copied (about 0.6 ms of a short job's shepherd, perf).
		os.Remove(s.spoolPath())
	} else {
		s.deliverOutput(ev, start, outPath, outShown, outDir)
	}
	if sp.errSpool != "" {
		if errPath == os.DevNull {
			os.Remove(sp.errSpool)
		} else if err := copySpool(sp.errSpool, errPath, errDir, s.spec.GetErrorOverwrite(), "", ""); err != nil {
			s.keep(ev, sp.errSpool, ".err", "", "", fmt.Sprintf("The error file <%s> could not be written (%v).", errShown, unwrapPath(err)))
		}
	}
}

// deliverOutput writes the job report and the spooled output into the -o
// file outPath (or mails the report, with -N), as deliverSpool describes.
func (s *shepherd) deliverOutput(ev *api.Event, start time.Time, outPath, outShown, outDir string) {
	report := s.report(ev, start)
	head, tail, found := strings.Cut(report, directSentence)
	if !found {
		head, tail = report, ""
	}
	var before, after string
	if !(s.mailIt(ev) && s.mailReport(report)) {
		before, after = head+spooledSentence, tail
	}
	if err := copySpool(s.spoolPath(), outPath, outDir, s.spec.GetOutputOverwrite(), before, after); err != nil {
		note := fmt.Sprintf("The output file <%s> could not be written (%v).", outShown, unwrapPath(err))
		if before != "" {
			before = head + note + "\n" + spooledSentence
		}
		s.keep(ev, s.spoolPath(), ".out", before, after, note)
	}
}

// keep saves a spool file that could not be copied to its destination in
// $HOME/.lsbatch/<job file>.out (or .err), before and after around it, and
// notes in the event where it is.
func (s *shepherd) keep(ev *api.Event, spool, ext, before, after, note string) {
	where := spool
	dir := filepath.Join(s.home, ".lsbatch")
	kept := filepath.Join(dir, filepath.Base(s.l.GetJobFile())+ext)
	if err := os.MkdirAll(dir, 0o700); err == nil {
		if before != "" {
			before = strings.Replace(before, note+"\n", note+"\nThe output is kept in <"+kept+">.\n", 1)
		}
		if err := copySpool(spool, kept, "", true, before, after); err == nil {
			where = kept
		} else {
			s.log.Warn("cannot keep the job's output", "file", kept, "err", err)
		}
	}
	s.log.Warn("the job's output was not copied", "note", note, "kept", where)
	s.notes = append(s.notes, note+" It is kept in "+where)
	ev.Detail = strings.Join(s.notes, "; ")
}

// copySpool appends (overwrite: writes) before, the spool file's content
// and after to dst, creating dir first when it is not "", and removes the
// spool file once that worked.
func copySpool(spool, dst, dir string, overwrite bool, before, after string) error {
	in, err := os.Open(spool)
	if err != nil {
		return err
	}
	defer in.Close()
	if dir != "" {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	}
	out, err := openOutput(dst, overwrite)
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, before)
	if err == nil {
		_, err = io.Copy(out, in)
	}
	if err == nil {
		_, err = io.WriteString(out, after)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	os.Remove(spool)
	return nil
}
