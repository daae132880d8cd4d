package controller

import (
	"errors"
	"fmt"
	"path/filepath"

	"xce/lib/store"
)

// checkDiskSpace refuses a submission when the disk holding the store is
// below the store's free-space floor: what is left is kept for the
// records of the jobs already accepted (their starts and ends), and
// queries need none. The store's error names the space; bsub adds
// ". Job not submitted.".
func (c *Controller) checkDiskSpace() error {
	err := c.store.CheckSpace()
	var full *store.SpaceError
	if errors.As(err, &full) {
		return userErr("The controller's disk is full (%d MB free in %s)", full.Free>>20, filepath.Dir(full.Dir))
	}
	if err != nil {
		return fmt.Errorf("check free disk space: %w", err)
	}
	return nil
}
