package controller

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"xce/lib/store"
)

// checkDiskSpace refuses a submission when the disk holding the store is
// below the store's free-space floor: what is left is kept for the
// records of the jobs already accepted (their ends), and queries need
// none. The message names the space and what to do; bsub adds ". Job not
// submitted.".
func (c *Controller) checkDiskSpace() error {
	if why := c.diskFull(); why != "" {
		return userErr("%s", why)
	}
	return nil
}

// diskFull says why the controller takes no new work ("" when it does):
// the disk holding the store is below its floor, or xced was started
// below it and runs read-only until it restarts (by itself, once space is
// back: daemon/lowspace.go). Pending jobs are not
// dispatched meanwhile either (a dispatch writes records and launch
// files); running jobs' ends are recorded.
func (c *Controller) diskFull() string {
	err := c.store.CheckSpace()
	var full *store.SpaceError
	if errors.As(err, &full) {
		dir := filepath.Dir(full.Dir)
		if full.ReadOnly {
			return fmt.Sprintf("The controller's disk is full (%d MB free in %s): xced started below its free-space floor and runs read-only; free space on that disk (%d MB needed: remove files there or move them to another disk), and xced restarts by itself to take new work",
				full.Free>>20, dir, full.Need>>20)
		}
		return fmt.Sprintf("The controller's disk is full (%d MB free in %s): free space on that disk (%d MB needed: remove files there or move them to another disk); new work is taken once there is",
			full.Free>>20, dir, full.Need>>20)
	}
	if err != nil {
		slog.Warn("check free disk space", "err", err)
	}
	return ""
}
