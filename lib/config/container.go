package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"xce/lib/container"
)

// checkContainers parses every profile's container and exec_driver
// values. A malformed one does not stop the configuration: the profile
// stays, and a job submitted to it is refused with the value's error
// (containerReject), as LSF refuses bsub -app for a profile it could not
// use; the rest of the cluster runs on.
func (c *Config) checkContainers() {
	for _, name := range slices.Sorted(maps.Keys(c.Apps)) {
		a := c.Apps[name]
		a.containerErr = nil
		if a.Container != "" {
			if _, err := container.Parse(a.Container); err != nil {
				a.containerErr = err
				continue
			}
		}
		if a.ExecDriver != "" {
			if _, err := container.ParseExecDriver(a.ExecDriver); err != nil {
				a.containerErr = err
			}
		}
	}
}

// ContainerError is why the profile's jobs cannot run in its container
// (a malformed container or exec_driver value), nil when they can.
func (a *App) ContainerError() error { return a.containerErr }

// containerReject is the submission's error for a profile with a
// malformed container value.
func containerReject(a *App) error {
	key := "container"
	var de *container.ExecDriverError
	if errors.As(a.containerErr, &de) {
		key = "exec_driver"
	}
	return reject("%s", fmt.Sprintf("%v: Application profile %s cannot run jobs (apps.%s.%s)", a.containerErr, a.Name, a.Name, key))
}

// jobContainer is the profile's container value as the job carries it,
// in canonical form, with the image the job chose through
// $LSB_CONTAINER_IMAGE in its environment (env, then the profile's
// env): chosen at submission, so that a job that chose none is refused
// there and bjobs -l shows the image it runs.
func jobContainer(a *App, env []string) (string, error) {
	if a.Container == "" {
		return "", nil
	}
	sp, err := container.Parse(a.Container)
	if err != nil {
		return "", err
	}
	img, err := sp.ResolveImage(func(name string) (string, bool) {
		for _, kv := range slices.Backward(env) {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v, true
			}
		}
		v, ok := a.Env[name]
		return v, ok
	})
	if err != nil {
		return "", fmt.Errorf("application profile %s: %w", a.Name, err)
	}
	sp.Image = img
	return sp.String(), nil
}

// ContainerWarnings says, one line a profile, which profiles refuse
// their jobs for a malformed container or exec_driver value: for xced's
// log and `xced config check`, since the configuration itself loads.
func (c *Config) ContainerWarnings() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Apps)) {
		if err := c.Apps[name].containerErr; err != nil {
			out = append(out, fmt.Sprintf("apps.%s: %v: the profile's jobs are refused until it is fixed", name, err))
		}
	}
	return out
}
