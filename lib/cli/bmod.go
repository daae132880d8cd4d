package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/reflect/protoreflect"

	"xce/lib/api"
)

// bmodFields maps each bsub option bmod accepts to the JobSpec fields it
// sets; "-Xn" resets the same fields (to the default the configuration
// then gives).
var bmodFields = map[string][]string{
	"q": {"queue"}, "J": {"job_name", "array_limit"}, "Jd": {"description"}, "n": {"min_tasks", "max_tasks"},
	"R": {"res_req"}, "c": {"cpu_limit_sec"}, "o": {"output_file", "output_overwrite"}, "oo": {"output_file", "output_overwrite"},
	"e": {"error_file", "error_overwrite"}, "eo": {"error_file", "error_overwrite"}, "i": {"input_file"},
	"cwd": {"cwd"}, "W": {"run_limit_sec"}, "M": {"mem_limit_kb", "mem_limit_hard"}, "P": {"project"},
	"app": {"app"}, "E": {"pre_exec"}, "Ep": {"post_exec"}, "x": {"exclusive"}, "m": {"hosts"},
	"w": {"dependency"}, "sp": {"user_priority"}, "u": {"mail_user"}, "B": {"notify_begin"},
	"N": {"notify_end", "notify_exit_only"}, "Ne": {"notify_end", "notify_exit_only"}, "r": {"rerunnable"}, "rn": {"rerunnable"}, "b": {"begin_time"}, "t": {"term_time"},
	"We": {"estimated_run_sec"}, "outdir": {"outdir"}, "gpu": {"gpu"}, "G": {"user_group"}, "g": {"job_group"},
	"L": {"login_shell"}, "F": {"file_limit_kb"}, "D": {"data_limit_kb"}, "S": {"stack_limit_kb"},
	"C": {"core_limit_kb"}, "v": {"swap_limit_kb"}, "p": {"process_limit"}, "T": {"thread_limit"},
	"Q": {"requeue_exit_values"}, "ti": {"terminate_orphan"}, "wa": {"warning_action"}, "wt": {"warning_time_sec"},
	"U": {"reservation"},
}

// notModifiable are the bsub options bmod refuses.
var notModifiable = []string{"H", "K", "env", "I", "Ip", "Is", "nnodes", "claim"}

// bmod changes a pending job's options: the bsub options given take new
// values, each -Xn option (-Wn, -Rn, -qn, ...) resets one.
func bmod(args []string) int {
	var o bsubOpts
	var ids []string
	cmd, code := newCommand(`bmod [bsub options] [-Xn ...] job_ID | "job_ID[index]"`, "Modify a pending job", func(a []string) int {
		ids = a
		return 0
	})
	fs := cmd.Flags()
	bsubFlags(fs, &o)
	for _, name := range notModifiable {
		fs.Lookup(name).Hidden = true
	}
	resets := map[string]*bool{}
	for _, name := range slices.Sorted(maps.Keys(bmodFields)) { // a stable order for help and man pages
		// -rn is bsub's own (not rerunnable); -oon/-eon would be -on/-en.
		if name == "oo" || name == "eo" || name == "rn" || fs.Lookup(name+"n") != nil {
			continue
		}
		resets[name] = fs.Bool(name+"n", false, "reset -"+name)
	}
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(ids) != 1 {
		fmt.Fprintln(sys.stderr, "A job ID must be specified. Job not modified.")
		return 255
	}
	refs, err := parseJobIDs(ids)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	for _, name := range notModifiable {
		if fs.Changed(name) {
			fmt.Fprintf(sys.stderr, "-%s cannot be modified. Job not modified.\n", name)
			return 255
		}
	}
	spec := &api.JobSpec{}
	if err := fillSpec(spec, &o); err != nil {
		fmt.Fprintf(sys.stderr, "%v. Job not modified.\n", err)
		return 255
	}
	var fields []string
	seen := map[string]bool{}
	add := func(fs ...string) {
		for _, f := range fs {
			if !seen[f] {
				seen[f] = true
				fields = append(fields, f)
			}
		}
	}
	fs.Visit(func(f *pflag.Flag) {
		mapped, ok := bmodFields[f.Name]
		if f.Name == "J" && !strings.Contains(o.name, "%") {
			mapped = mapped[:1] // a new name keeps the array's running limit
		}
		if f.Name == "J" && strings.Contains(o.name, "[") {
			// The indices go to the controller, which refuses to change
			// them, rather than being dropped with the array.
			mapped = append(slices.Clone(mapped), "array_spec")
		}
		if ok {
			add(mapped...)
		}
	})
	for name, on := range resets {
		if *on {
			add(bmodFields[name]...)
			clearFields(spec, bmodFields[name])
		}
	}
	if len(fields) == 0 {
		fmt.Fprintln(sys.stderr, "No option to modify was given. Job not modified.")
		return 255
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := c.Modify(cx, &api.ModifyRequest{Ref: refs[0], Spec: spec, Fields: fields})
	if err != nil {
		fmt.Fprintf(sys.stderr, "%s. Job not modified.\n", rpcError(c, err))
		return 255
	}
	for _, r := range reply.Results {
		if r.Error != "" {
			fmt.Fprintf(sys.stderr, "%s. Job not modified.\n", r.Error)
			return 255
		}
	}
	fmt.Fprintf(sys.stdout, "Parameters of job <%s> are being changed\n", ids[0])
	return 0
}

// clearFields unsets fields of spec so that the controller resets them.
func clearFields(spec *api.JobSpec, fields []string) {
	m := spec.ProtoReflect()
	for _, f := range fields {
		if fd := m.Descriptor().Fields().ByName(protoreflect.Name(f)); fd != nil {
			m.Clear(fd)
		}
	}
}
