package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"xce/lib/atomicfile"
)

// workerFormat is the layout of an xced worker's directory (DIR/jobs: each
// job's launch file, status and spool, as lib/worker writes them),
// recorded in DIR/worker.format. A directory without the record is format
// 1, the layout before it. A worker refuses a directory of a later
// release's format, where it could miss or misread its running jobs; a
// release that changes the layout raises the number and upgrades an
// older directory here.
const workerFormat = 1

const workerFormatFile = "worker.format"

// checkWorkerFormat refuses dir if a later release laid it out, and
// records this release's format otherwise.
func checkWorkerFormat(dir string) error {
	path := filepath.Join(dir, workerFormatFile)
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		if err := atomicfile.Write(path, []byte(strconv.Itoa(workerFormat)+"\n"), 0o644, true); err != nil {
			return fmt.Errorf("record the worker's state format: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the worker's state format: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 1 {
		return fmt.Errorf("%s holds %q, not a format number: remove it if this directory was made by this release", path, b)
	}
	if v > workerFormat {
		return fmt.Errorf("worker state format %d is newer than this xced (%d): %s was used by a later release's worker; run that release, or stop its jobs and give this worker an empty --dir", v, workerFormat, dir)
	}
	return nil
}
