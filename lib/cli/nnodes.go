package cli

import (
	"errors"
	"fmt"

	"xce/lib/api"
)

// wholeHosts applies bsub -nnodes N (LSF 10.1, the CSM integration that
// workflow tools such as Parsl use): N whole hosts for the job. XCE has
// no separate node allocation; it becomes what the scheduler already
// knows, N tasks one per host (-n N -R "span[ptile=1]") on hosts no other
// job may use (-x), so the job holds N hosts entirely.
func wholeHosts(s *api.JobSpec, o *bsubOpts) error {
	if o.nodes == 0 {
		return nil
	}
	if o.nodes < 0 {
		return fmt.Errorf("%d: Bad argument for option -nnodes", o.nodes)
	}
	if o.tasks != "" {
		return errors.New("The -n and -nnodes options are mutually exclusive")
	}
	s.MinTasks, s.MaxTasks = int32(o.nodes), int32(o.nodes)
	o.exclusive = true
	s.ResReq = append(s.ResReq, "span[ptile=1]")
	return nil
}
