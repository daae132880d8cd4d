package container

import "strconv"

// ExecArgs is the command line that runs argv inside a job's running
// container (battach), as uid:gid, with its standard input open; nil
// for runtimes whose containers cannot be entered by name (apptainer,
// enroot: the container is the job's processes and nothing more).
func ExecArgs(rt Runtime, cluster string, id int64, idx int32, uid, gid int, argv []string) []string {
	if !rt.OCI() {
		return nil
	}
	a := []string{string(rt), "exec", "-i", "--user", strconv.Itoa(uid) + ":" + strconv.Itoa(gid), Name(cluster, id, idx)}
	return append(a, argv...)
}
