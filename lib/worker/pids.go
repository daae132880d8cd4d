package worker

import (
	"fmt"
	"log/slog"
	"os"
)

// recordPids writes the job's shepherd and process group into its pids
// record (pidsName), which makeJobDir created empty and left open: in
// place, one write and a truncate, where a temporary file and a rename
// would be (a create and a rename in root's directory, twice
// per job). Only a restarted worker reads the record, so no reader meets
// it half written; a record that reads as nothing (empty, or cut short
// by a crash of the host) is a job whose pids are unknown, as without
// the file. The pgid's write only lengthens the shepherd's record, and
// the truncate drops anything a longer record before it left.
func (w *Worker) recordPids(k jobKey, f *os.File, shepherd, pgid int) {
	b := fmt.Appendf(nil, "%d %d\n", shepherd, pgid)
	_, err := f.WriteAt(b, 0)
	if err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if err != nil {
		slog.Warn("record the job's pids", "job", k.id, "index", k.idx, "err", err)
	}
}
