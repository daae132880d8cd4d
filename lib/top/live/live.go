// Package live connects xcetop to the real controller over gRPC and runs
// it: Main is the whole xcetop command.
package live

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/client"
	"xce/lib/top"
	"xce/lib/version"
)

// Ctl is top.Controller over a client connection.
type Ctl struct {
	mu sync.Mutex
	c  *client.Client
}

func (g *Ctl) cl() *client.Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.c
}

// Redial replaces the connection: after the controller restarts, a new
// one answers at once where the old one would wait out gRPC's backoff.
func (g *Ctl) Redial() error {
	c, err := client.Dial()
	if err != nil {
		return err
	}
	g.mu.Lock()
	old := g.c
	g.c = c
	g.mu.Unlock()
	return old.Close()
}

// Info asks who the caller is and what the cluster is called.
func (g *Ctl) Info(ctx context.Context) (*api.ClusterInfo, error) {
	return g.cl().Info(ctx, &api.ClusterInfoRequest{})
}

// Jobs queries everyone's jobs, finished ones too, or the named ones.
func (g *Ctl) Jobs(ctx context.Context, refs []*api.JobRef, submitted bool) ([]*api.Job, error) {
	res, err := g.cl().Query(ctx, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all", Refs: refs, Submitted: submitted})
	if err != nil {
		return nil, err
	}
	return res.Jobs, nil
}

// Watch streams every job change.
func (g *Ctl) Watch(ctx context.Context, fn func(*api.Job)) error {
	st, err := g.cl().Watch(ctx, &api.WatchRequest{})
	if err != nil {
		return err
	}
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return errors.New("the controller ended the watch stream")
		}
		if err != nil {
			return err
		}
		if ev.GetJob() != nil {
			fn(ev.GetJob())
		}
	}
}

// Hosts lists the hosts.
func (g *Ctl) Hosts(ctx context.Context) ([]*api.Host, error) {
	r, err := g.cl().ListHosts(ctx, &api.ListHostsRequest{})
	return r.GetHosts(), err
}

// Queues lists the queues.
func (g *Ctl) Queues(ctx context.Context) ([]*api.Queue, error) {
	r, err := g.cl().ListQueues(ctx, &api.ListQueuesRequest{})
	return r.GetQueues(), err
}

// Signal kills, stops or resumes jobs.
func (g *Ctl) Signal(ctx context.Context, req *api.SignalRequest) (*api.SignalReply, error) {
	return g.cl().Signal(ctx, req)
}

// Control requeues, switches and reorders jobs, closes and opens hosts and
// queues.
func (g *Ctl) Control(ctx context.Context, req *api.ControlRequest) (*api.ControlReply, error) {
	return g.cl().Control(ctx, req)
}

// Main runs xcetop with args (without the program name) and returns its
// exit status.
func Main(args []string) int {
	fs := flag.NewFlagSet("xcetop", flag.ContinueOnError)
	once := fs.Bool("once", false, "print one frame as plain text and exit")
	userF := fs.String("u", "", "start with the jobs of `USER` (all: everyone's)")
	queueF := fs.String("q", "", "start with the jobs of `QUEUE`")
	width := fs.Int("width", 0, "--once: the frame's width (the terminal's, else 120)")
	height := fs.Int("height", 0, "--once: the frame's height (the terminal's, else 40)")
	paneF := fs.String("pane", "jobs", "the pane to start on: hosts, queues, jobs or users")
	showVersion := fs.Bool("V", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: xcetop [--once] [-u USER] [-q QUEUE] [--pane PANE]\n\nThe live cluster dashboard; ? shows its keys, q quits.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprint(os.Stderr, version.Banner())
		return 0
	}
	pane := map[string]top.Pane{"hosts": top.PaneHosts, "queues": top.PaneQueues, "jobs": top.PaneJobs, "users": top.PaneUsers}
	p, ok := pane[*paneF]
	if !ok {
		fmt.Fprintf(os.Stderr, "xcetop: --pane %q: use hosts, queues, jobs or users\n", *paneF)
		return 2
	}
	c, err := client.Dial()
	if err != nil {
		fmt.Fprintf(os.Stderr, "xcetop: %v\n", err)
		return 1
	}
	ctl := &Ctl{c: c}
	defer func() { ctl.cl().Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	info, err := ctl.Info(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "xcetop: %v\n", c.NotRunningError())
		return 1
	}
	me := strconv.Itoa(int(info.GetUid()))
	if u, err := user.LookupId(me); err == nil {
		me = u.Username
	}
	filter := ""
	switch {
	case *userF == "all":
	case *userF != "":
		filter = "user:" + *userF
	case !info.GetCallerIsAdmin():
		filter = "user:" + me
	}
	if *queueF != "" {
		filter += " queue:" + *queueF
	}
	if *once || os.Getenv("NO_COLOR") != "" {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
	m := top.New(top.Options{Ctl: ctl, Pane: p, Filter: filter, Me: me, Once: *once, Peek: ctl.peek})
	if *once {
		return printOnce(ctl, m, info, *width, *height)
	}

	prog := tea.NewProgram(m, tea.WithAltScreen())
	fctx, stop := context.WithCancel(context.Background())
	defer stop()
	feed := &top.Feed{Ctl: ctl, Send: prog.Send}
	go feed.Run(fctx)
	if _, err := prog.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "xcetop: %v\n", err)
		return 1
	}
	return 0
}

func printOnce(ctl *Ctl, m *top.Model, info *api.ClusterInfo, w, h int) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	jobs, err := ctl.Jobs(ctx, nil, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "xcetop: %v\n", err)
		return 1
	}
	hosts, err := ctl.Hosts(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "xcetop: %v\n", err)
		return 1
	}
	queues, err := ctl.Queues(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "xcetop: %v\n", err)
		return 1
	}
	for _, msg := range []tea.Msg{top.InfoMsg{Info: info}, top.ConnMsg{Up: true}, top.SnapshotMsg{Jobs: jobs}, top.HostsMsg{Hosts: hosts}, top.QueuesMsg{Queues: queues}} {
		m.Update(msg)
	}
	if w == 0 || h == 0 {
		tw, th, err := term.GetSize(os.Stdout.Fd())
		if err != nil || tw == 0 {
			tw, th = 120, 40
		}
		if w == 0 {
			w = tw
		}
		if h == 0 {
			h = th
		}
	}
	fmt.Println(m.Frame(w, h))
	return 0
}

// peek reads a running job's output through the worker of its host.
func (g *Ctl) peek(j *api.Job, off int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := g.cl().Peek(ctx, &rpc.PeekRequest{JobId: j.JobId, Index: j.ArrayIndex, Offset: off, MaxBytes: 64 << 10})
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}
