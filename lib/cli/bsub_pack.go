package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-shellwords"
	"github.com/spf13/pflag"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfenv"
)

// defaultPackJobs is the jobs bsub -pack sends in one call when lsf.conf
// does not set LSB_MAX_PACK_JOBS: LSF's high-throughput template's value.
// (LSF leaves job packs off without the parameter; XCE needs no setup.)
const defaultPackJobs = 300

// packBytes bounds one call's encoded jobs, well under the controller's
// request limit, whatever LSB_MAX_PACK_JOBS allows.
const packBytes = 8 << 20

// bsubPack is `bsub -pack FILE`, LSF's job packs: each line of the file is
// one job's bsub options and command, without the word bsub; blank lines
// and lines starting with # are skipped. The jobs are sent
// LSB_MAX_PACK_JOBS at a time and acknowledged one by one in the file's
// order. A job refused (a bad line, or the controller's refusal) ends the
// pack unless lsf.conf has LSB_PACK_SKIP_ERROR=Y; the exit status is
// non-zero when any job was not submitted.
func bsubPack(flags *pflag.FlagSet, path string, words []string) int {
	other := len(words) > 0
	flags.Visit(func(f *pflag.Flag) { other = other || f.Name != "pack" })
	if other {
		fmt.Fprintln(sys.stderr, "-pack: no other bsub option or command may be given with it. Job not submitted.")
		return 255
	}
	size, skip := defaultPackJobs, false
	if conf, err := lsfenv.Load(sys.getenv); err == nil {
		if v := conf.Get("LSB_MAX_PACK_JOBS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				fmt.Fprintf(sys.stderr, "LSB_MAX_PACK_JOBS=%s in lsf.conf: not a number of jobs. Job not submitted.\n", v)
				return 255
			}
			if n == 0 {
				fmt.Fprintln(sys.stderr, "Job packs are disabled (LSB_MAX_PACK_JOBS=0 in lsf.conf). Job not submitted.")
				return 255
			}
			size = min(n, api.MaxPackJobs)
		}
		skip = strings.EqualFold(conf.Get("LSB_PACK_SKIP_ERROR"), "y")
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(sys.stderr, "%s: %v. Job not submitted.\n", path, unwrapPath(err))
		return 255
	}
	defer f.Close()

	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	p := &packSender{c: c, ctx: cx, size: size, skip: skip}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan() && !p.stopped; line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		spec, err := packJob(text)
		if err != nil {
			if p.flush(); p.stopped {
				break // a job before this line ended the pack
			}
			fmt.Fprintf(sys.stderr, "%s, line %d: %v. Job not submitted.\n", path, line, err)
			p.failed = true
			p.stopped = !skip
			continue
		}
		p.add(spec)
	}
	if err := sc.Err(); err != nil && !p.stopped {
		p.flush()
		fmt.Fprintf(sys.stderr, "%s: %v. Job not submitted.\n", path, err)
		p.failed = true
	}
	p.flush()
	if p.failed {
		return 255
	}
	return 0
}

// unwrapPath drops the path os.Open's error repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// packSender gathers a pack's jobs and sends them in calls of at most
// size jobs (and packBytes).
type packSender struct {
	c       *client.Client
	ctx     context.Context
	size    int
	skip    bool
	specs   []*api.JobSpec
	bytes   int
	failed  bool // a job was not submitted
	stopped bool // and the pack ends there
}

func (p *packSender) add(spec *api.JobSpec) {
	// The generated code's size: proto.Size would build protobuf-go's
	// reflection tables, which the command otherwise never needs.
	n := spec.SizeVT()
	if len(p.specs) > 0 && p.bytes+n > packBytes {
		p.flush()
	}
	p.specs = append(p.specs, spec)
	p.bytes += n
	if len(p.specs) >= p.size {
		p.flush()
	}
}

// flush sends the jobs gathered and acknowledges each.
func (p *packSender) flush() {
	if len(p.specs) == 0 || p.stopped {
		p.specs, p.bytes = p.specs[:0], 0
		return
	}
	specs := p.specs
	p.specs, p.bytes = nil, 0
	reply, err := p.c.SubmitPack(p.ctx, &api.SubmitPackRequest{Specs: specs, StopOnError: !p.skip})
	if err != nil {
		fmt.Fprintf(sys.stderr, "%s. Job not submitted.\n", rpcError(p.c, err))
		p.failed, p.stopped = true, true
		return
	}
	for i, r := range reply.Results {
		if r.Reply == nil {
			fmt.Fprintf(sys.stderr, "%s. Job not submitted.\n", r.Error)
			p.failed = true
			p.stopped = p.stopped || !p.skip
			continue
		}
		printSubmitted(r.Reply, specs[i])
	}
}

// packJob reads one line of a job pack: bsub's options, then the command.
// The options that need a terminal or wait for the job are refused, as
// LSF's job packs refuse them.
func packJob(line string) (*api.JobSpec, error) {
	words, err := shellwords.NewParser().Parse(line)
	if err != nil {
		return nil, err
	}
	var o bsubOpts
	fs := pflag.NewFlagSet("bsub", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	bsubFlags(fs, &o)
	argv, err := lsfArgs(fs, words, true)
	if err == nil {
		err = fs.Parse(argv)
	}
	if err != nil {
		return nil, fmt.Errorf("%s", lsfFlagError(err))
	}
	for _, opt := range []struct {
		name string
		set  bool
	}{{"I", o.interactive}, {"Ip", o.interPty}, {"Is", o.interShell}, {"K", o.block}} {
		if opt.set {
			return nil, fmt.Errorf("-%s: not supported in a job pack", opt.name)
		}
	}
	if fs.NArg() == 0 || strings.TrimSpace(strings.Join(fs.Args(), "")) == "" {
		return nil, fmt.Errorf("No command is specified")
	}
	spec := &api.JobSpec{Command: jobCommand(fs.Args())}
	if err := fillSpec(spec, &o); err != nil {
		return nil, err
	}
	return spec, nil
}
