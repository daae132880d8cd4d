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

// TaskArgs is the command line that runs a blaunch task's argv inside
// the job's running container: as ExecArgs, with the task's id
// (LSF_PM_TASKID, by name: its value comes from the CLI's environment)
// and in cwd; nil for runtimes ExecArgs has none for.
func TaskArgs(rt Runtime, cluster string, id int64, idx int32, uid, gid int, cwd string, argv []string) []string {
	a := ExecArgs(rt, cluster, id, idx, uid, gid, nil)
	if a == nil {
		return nil
	}
	name := a[len(a)-1]
	a = append(a[:len(a)-1], "--env", "LSF_PM_TASKID")
	if cwd != "" {
		a = append(a, "-w", cwd)
	}
	a = append(a, name)
	return append(a, argv...)
}

// ExecTTYArgs is ExecArgs for a command under a terminal: the runtime's
// exec gives it one of the container's (-t), relayed through the
// terminal the CLI itself runs under.
func ExecTTYArgs(rt Runtime, cluster string, id int64, idx int32, uid, gid int, argv []string) []string {
	a := ExecArgs(rt, cluster, id, idx, uid, gid, argv)
	if a == nil {
		return nil
	}
	return append(a[:3:3], append([]string{"-t"}, a[3:]...)...)
}
