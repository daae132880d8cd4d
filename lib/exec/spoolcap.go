package exec

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The spool's cap. A spool file lives in the worker's state directory,
// beside the controller's store on a single host: a job writing without
// end into it would fill that disk, and the controller, below its
// free-space floor, would refuse every user's submissions. So a spooled
// job does not write to its spool file: it writes to a pipe, and the
// shepherd (the job's user, as the job) copies what comes to the spool
// file while the disk holding it keeps more than the reserve free. Past
// that the output is read and dropped (the job is not blocked or
// killed), and a line in the output and the job's FINISH record say where
// it was cut. The
// worker sets the reserve (SpoolReserveEnv, in MB) above the store's
// floor, so one job's output never takes the controller's disk below it.
//
// The other way, LSF's default of spooling under the user's ~/.lsbatch,
// would take the output off the controller's disk only where homes live
// on another one, and would have root remove the user's files in a
// directory the user controls; the reserve holds wherever the state
// directory is.

// SpoolReserveEnv names the shepherd's environment variable that holds
// the spool's reserve in MB; DefaultSpoolReserve applies without it.
const SpoolReserveEnv = "XCE_SPOOL_RESERVE_MB"

// DefaultSpoolReserve is twice the store's default free-space floor.
const DefaultSpoolReserve = 128 << 20

// relayDrain bounds how long the end of a job waits for the last of its
// output: a process it left holding the pipe keeps it open.
const relayDrain = 2 * time.Second

// spoolReserve is the free space the spool keeps on its disk.
func spoolReserve() uint64 {
	if v, err := strconv.ParseUint(os.Getenv(SpoolReserveEnv), 10, 64); err == nil && v > 0 {
		return v << 20
	}
	return DefaultSpoolReserve
}

// relay copies a job's output from a pipe to its spool file.
type relay struct {
	r, out  *os.File
	reserve uint64
	done    chan struct{}
	written int64
	cut     bool
	err     error // a write error other than the disk being full
}

// startRelay returns the pipe end the job writes to in place of out, the
// spool file, and starts copying.
func startRelay(out *os.File) (*os.File, *relay, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	rl := &relay{r: r, out: out, reserve: spoolReserve(), done: make(chan struct{})}
	go rl.copy()
	return w, rl, nil
}

// checkEvery is how much output is copied between two checks of the
// free space: what the reserve may be overrun by.
const checkEvery = 1 << 20

func (rl *relay) copy() {
	defer close(rl.done)
	buf := make([]byte, 64<<10)
	var sinceCheck int64 = checkEvery
	for {
		n, rerr := rl.r.Read(buf)
		if n > 0 && !rl.cut {
			if sinceCheck >= checkEvery {
				sinceCheck = 0
				var st unix.Statfs_t
				if unix.Fstatfs(int(rl.out.Fd()), &st) == nil && st.Bavail*uint64(st.Bsize) < rl.reserve+checkEvery {
					rl.cut = true
				}
			}
			if !rl.cut {
				w, err := rl.out.Write(buf[:n])
				rl.written += int64(w)
				sinceCheck += int64(w)
				if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
					rl.cut = true
				} else if err != nil && rl.err == nil {
					rl.err = err
					rl.cut = true
				}
			}
		}
		if rerr != nil {
			return
		}
	}
}

// end waits up to wait for the job's output to end, stops the copy, and
// closes the pipe and the spool file. It returns the note for the job's
// record when the output was cut, else "".
func (rl *relay) end(wait time.Duration) string {
	if rl == nil {
		return ""
	}
	rl.r.SetReadDeadline(time.Now().Add(wait))
	<-rl.done
	rl.r.Close()
	defer rl.out.Close()
	switch {
	case rl.err != nil:
		return fmt.Sprintf("The job's output could not be spooled after %d bytes (%v); the rest was dropped", rl.written, rl.err)
	case rl.cut:
		note := fmt.Sprintf("The job's output was cut after %d bytes: the disk holding the spool file keeps %d MB free for the controller; the rest was dropped", rl.written, rl.reserve>>20)
		// Where it was cut, for whoever reads the output (a line: the
		// reserve has room for it).
		rl.out.WriteString("\n" + note + ".\n")
		return note
	}
	return ""
}

// endRelays ends the job's output relays (see relay.end), the notes of
// cut output added to the job's record and to the spool file.
func (s *shepherd) endRelays(wait time.Duration) {
	for _, rl := range s.relays {
		if note := rl.end(wait); note != "" {
			s.notes = append(s.notes, note)
			s.log.Warn("the job's output was cut", "note", note)
		}
	}
	s.relays = nil
}
