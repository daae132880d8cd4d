package top

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"xce/lib/api"
)

var update = flag.Bool("update", false, "rewrite the golden frames")

func TestMain(m *testing.M) {
	// Golden frames are plain text: the glyphs carry the state.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// load returns a model that has seen the simulated cluster.
func load(s *sim, opt Options) *Model {
	opt.Now = func() time.Time { return t0 }
	opt.Ctl = s
	if opt.Me == "" {
		opt.Me = "u0"
	}
	if opt.ReadFile == nil {
		opt.ReadFile = func(string, int64) ([]byte, error) { return nil, errors.New("no such file") }
	}
	m := New(opt)
	for _, msg := range []tea.Msg{InfoMsg{Info: s.info}, ConnMsg{Up: true}, SnapshotMsg{Jobs: s.jobs}, HostsMsg{Hosts: s.hosts}, QueuesMsg{Queues: s.queues}} {
		m.Update(msg)
	}
	return m
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// press sends keys (a multi-letter word that is not a key name is typed
// letter by letter) and returns the last command.
func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		if len([]rune(k)) > 1 && keyMsg(k).Type == tea.KeyRunes {
			for _, r := range k {
				_, cmd = m.Update(keyMsg(string(r)))
			}
			continue
		}
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

// do runs a command that performs an action and applies its answer.
func do(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to run")
	}
	m.Update(cmd())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./lib/top -run Golden -update)", err)
	}
	if string(want) != got {
		t.Errorf("frame %s differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// checkSize checks a frame is exactly w columns by h lines.
func checkSize(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Errorf("line %d is %d columns wide, over %d: %q", i+1, lw, w, l)
		}
	}
}

func TestGoldenFrames(t *testing.T) {
	out := []byte("starting step 1\nstep 1 done\n" + reportMarker + "\nnot output\n")
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		w, h := size[0], size[1]
		frames := map[string]func(m *Model){
			"hosts":  func(m *Model) { press(m, "1") },
			"queues": func(m *Model) { press(m, "2") },
			"jobs":   func(m *Model) { press(m, "3", "down") },
			"users":  func(m *Model) { press(m, "4") },
			"help":   func(m *Model) { press(m, "?") },
			"job":    func(m *Model) { press(m, "3", "enter") },
			"tail":   func(m *Model) { press(m, "3", "enter", "f") },
			"pend":   func(m *Model) { press(m, "3", "down", "enter") },
			"host":   func(m *Model) { press(m, "1", "enter") },
			"filter": func(m *Model) { press(m, "3", "/", "user:u1 s:RUN", "enter") },
			"kill":   func(m *Model) { press(m, "3", "K") },
			"lost": func(m *Model) {
				m.Update(ConnMsg{Up: false, Err: errors.New("rpc error: code = Unavailable desc = connection refused")})
			},
		}
		for name, setup := range frames {
			t.Run(name+"-"+strconv.Itoa(w)+"x"+strconv.Itoa(h), func(t *testing.T) {
				s := newSim(40, 300)
				m := load(s, Options{Pane: PaneJobs, ReadFile: func(string, int64) ([]byte, error) { return out, nil }})
				m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				setup(m)
				f := m.Frame(w, h)
				checkSize(t, f, w, h)
				golden(t, name+"-"+strconv.Itoa(w)+"x"+strconv.Itoa(h), f)
			})
		}
	}
}

func TestPanesAndMoving(t *testing.T) {
	m := load(newSim(40, 300), Options{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if m.pane != PaneHosts {
		t.Fatalf("starts on pane %d", m.pane)
	}
	for _, c := range []struct {
		key  string
		want Pane
	}{{"tab", PaneQueues}, {"tab", PaneJobs}, {"tab", PaneUsers}, {"tab", PaneHosts}, {"shift+tab", PaneUsers}, {"3", PaneJobs}, {"1", PaneHosts}} {
		press(m, c.key)
		if m.pane != c.want {
			t.Fatalf("after %s: pane %d, want %d", c.key, m.pane, c.want)
		}
	}
	press(m, "3", "down", "down")
	if got := m.selectedJob().id; got != "3" {
		t.Fatalf("two down from the top selects %s", got)
	}
	press(m, "G")
	if got := m.selectedJob().id; got != "300" {
		t.Fatalf("G selects %s", got)
	}
	f := m.Frame(80, 24)
	if !strings.Contains(f, ">") || !strings.Contains(f, " 300 ") {
		t.Fatalf("the last job is not shown selected:\n%s", f)
	}
	// A change keeps the same job selected even when rows move.
	m.Update(JobsMsg{Jobs: []*api.Job{simJob(1000, 40, "normal")}})
	if got := m.selectedJob().id; got != "300" {
		t.Fatalf("after a new job the selection moved to %s", got)
	}
	// Sorting by user, then reversed.
	press(m, "o")
	if m.sortCol != colUser || m.view[0].user != "u0" {
		t.Fatalf("o sorts by %s, first user %s", colNames[m.sortCol], m.view[0].user)
	}
	press(m, "O")
	if m.view[0].user != "u9" {
		t.Fatalf("O reverses: first user %s", m.view[0].user)
	}
	if cmd := press(m, "q"); cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit")
	}
}

func TestFilter(t *testing.T) {
	m := load(newSim(40, 300), Options{Pane: PaneJobs, Filter: "user:u1"})
	for _, r := range m.view {
		if r.user != "u1" {
			t.Fatalf("-u u1 shows a job of %s", r.user)
		}
	}
	n := len(m.view)
	press(m, "/")
	if m.mode != modeFilter || m.input.Value() != "user:u1" {
		t.Fatalf("/ edits the filter %q", m.input.Value())
	}
	press(m, " state:PEND q:normal", "enter")
	if len(m.view) == 0 || len(m.view) >= n {
		t.Fatalf("%d jobs with state and queue, %d without", len(m.view), n)
	}
	for _, r := range m.view {
		if r.user != "u1" || r.job.State != api.JobState_PEND || r.queue != "normal" {
			t.Fatalf("filter shows %s %s %s", r.user, r.job.State, r.queue)
		}
	}
	f := m.Frame(80, 24)
	if !strings.Contains(f, "filter: user:u1 queue:normal state:PEND") {
		t.Fatalf("the filter is not shown:\n%s", f)
	}
	press(m, "esc")
	if len(m.view) != 300 {
		t.Fatalf("esc leaves %d jobs", len(m.view))
	}
	press(m, "/", "sim-299", "enter")
	if len(m.view) != 1 || m.view[0].id != "299" {
		t.Fatalf("free text sim-299 shows %d jobs", len(m.view))
	}
	press(m, "/", "h:node00003", "enter")
	for _, r := range m.view {
		if r.host != "node00003" {
			t.Fatalf("host filter shows a job on %q", r.host)
		}
	}
	// Enter on a queue shows its jobs; on a user, theirs.
	press(m, "esc", "2", "down", "enter")
	if m.pane != PaneJobs || m.filter.Queue != "short" {
		t.Fatalf("enter on queue short: pane %d filter %v", m.pane, m.filter)
	}
}

func TestKillAsksFirst(t *testing.T) {
	s := newSim(40, 300)
	m := load(s, Options{Pane: PaneJobs})
	press(m, "K")
	if f := m.Frame(80, 24); !strings.Contains(f, "Kill job 1 (sim-1 --step 0) of u0? [y/N]") {
		t.Fatalf("no confirmation line:\n%s", f)
	}
	press(m, "n")
	if len(s.signals) != 0 || !strings.Contains(m.Frame(80, 24), "cancelled") {
		t.Fatal("n did not cancel")
	}
	cmd := press(m, "K", "y")
	do(t, m, cmd)
	if len(s.signals) != 1 || s.signals[0].Action != api.SignalRequest_KILL || s.signals[0].Refs[0].JobId != 1 {
		t.Fatalf("signals sent: %v", s.signals)
	}
	if f := m.Frame(80, 24); !strings.Contains(f, "Kill job 1 (sim-1 --step 0) of u0: done") {
		t.Fatalf("no outcome shown:\n%s", f)
	}
	for _, c := range []struct {
		key  string
		want api.SignalRequest_Action
	}{{"S", api.SignalRequest_STOP}, {"R", api.SignalRequest_RESUME}} {
		do(t, m, press(m, c.key, "y"))
		if got := s.signals[len(s.signals)-1].Action; got != c.want {
			t.Fatalf("%s sent %v", c.key, got)
		}
	}
	for _, c := range []struct {
		key  string
		want api.ControlRequest_Action
	}{{"E", api.ControlRequest_REQUEUE}, {"T", api.ControlRequest_TOP}, {"B", api.ControlRequest_BOTTOM}} {
		do(t, m, press(m, c.key, "y"))
		got := s.control[len(s.control)-1]
		if got.Action != c.want || got.Refs[0].JobId != 1 {
			t.Fatalf("%s sent %v", c.key, got)
		}
	}
}

func TestSwitchAsksQueue(t *testing.T) {
	s := newSim(40, 300)
	m := load(s, Options{Pane: PaneJobs})
	press(m, "W")
	if f := m.Frame(80, 24); !strings.Contains(f, "Switch job 1 to queue:") {
		t.Fatalf("no prompt:\n%s", f)
	}
	press(m, "short", "enter")
	if f := m.Frame(120, 24); !strings.Contains(f, "Switch job 1 (sim-1 --step 0) of u0 to queue short? [y/N]") {
		t.Fatalf("no confirmation:\n%s", f)
	}
	do(t, m, press(m, "y"))
	if len(s.control) != 1 || s.control[0].Action != api.ControlRequest_SWITCH || s.control[0].Queue != "short" {
		t.Fatalf("controls sent: %v", s.control)
	}
}

func TestHostAndQueueControls(t *testing.T) {
	s := newSim(40, 300)
	m := load(s, Options{Pane: PaneQueues})
	for _, c := range []struct {
		key  string
		want api.ControlRequest_Action
	}{{"C", api.ControlRequest_QUEUE_CLOSE}, {"O", api.ControlRequest_QUEUE_OPEN}, {"I", api.ControlRequest_QUEUE_INACTIVATE}, {"A", api.ControlRequest_QUEUE_ACTIVATE}} {
		do(t, m, press(m, c.key, "y"))
		got := s.control[len(s.control)-1]
		if got.Action != c.want || got.Names[0] != "normal" {
			t.Fatalf("%s sent %v", c.key, got)
		}
	}
	press(m, "1", "down")
	press(m, "C")
	if f := m.Frame(80, 24); !strings.Contains(f, "Close host node00001? [y/N]") {
		t.Fatalf("no confirmation:\n%s", f)
	}
	do(t, m, press(m, "y"))
	if got := s.control[len(s.control)-1]; got.Action != api.ControlRequest_HOST_CLOSE || got.Names[0] != "node00001" {
		t.Fatalf("sent %v", got)
	}
}

func TestOrdinaryUserActsOnOwnJobsOnly(t *testing.T) {
	s := newSim(40, 300)
	s.info = &api.ClusterInfo{ClusterName: "simc", CallerIsAdmin: false}
	m := load(s, Options{Pane: PaneJobs, Me: "u1"})
	press(m, "K") // job 1 belongs to u0
	if m.mode != modeNormal || !strings.Contains(m.Frame(120, 24), "not allowed: job 1 belongs to u0") {
		t.Fatalf("another user's job can be killed:\n%s", m.Frame(120, 24))
	}
	press(m, "down", "K") // job 2 is u1's
	if m.mode != modeConfirm {
		t.Fatal("own job cannot be killed")
	}
	press(m, "n", "2", "C")
	if m.mode != modeNormal || !strings.Contains(m.Frame(80, 24), "not allowed: only administrators") {
		t.Fatal("an ordinary user may close a queue")
	}
	press(m, "1", "O")
	if m.mode != modeNormal || len(s.control) != 0 {
		t.Fatal("an ordinary user may open a host")
	}
}

func TestJobDetail(t *testing.T) {
	s := newSim(40, 300)
	reads := 0
	m := load(s, Options{Pane: PaneJobs, ReadFile: func(path string, off int64) ([]byte, error) {
		reads++
		if off == 0 {
			return []byte("first line\n"), nil
		}
		return []byte("second line\n" + reportMarker + "\nthe report\n"), nil
	}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	cmd := press(m, "enter")
	do(t, m, cmd) // the full record
	if f := m.Frame(100, 40); !strings.Contains(f, "Job <1>, User <u0>") {
		t.Fatalf("the detail does not start at the top:\n%s", f)
	}
	press(m, "f") // follow the output
	f := m.Frame(100, 40)
	for _, want := range []string{"OUTPUT (following", "first line", "[job 1]"} {
		if !strings.Contains(f, want) {
			t.Fatalf("detail lacks %q:\n%s", want, f)
		}
	}
	m.Update(tickMsg(t0)) // the next second: more output
	f = m.Frame(100, 40)
	if !strings.Contains(f, "second line") || strings.Contains(f, "the report") {
		t.Fatalf("the tail did not follow, or showed the job report:\n%s", f)
	}
	press(m, "esc", "down", "enter")
	f = m.Frame(100, 40)
	for _, want := range []string{"PENDING REASONS:", "Not enough job slot(s): 3 hosts", "FAILING REQUIREMENT TERMS:", " rusage[mem=1024]: 2 hosts have less than 1024 MB unreserved", "of: rusage[mem=1024]", "(the job has not started)"} {
		if !strings.Contains(f, want) {
			t.Fatalf("pending detail lacks %q:\n%s", want, f)
		}
	}
	// Actions work from the detail too.
	do(t, m, press(m, "K", "y"))
	if len(s.signals) != 1 || s.signals[0].Refs[0].JobId != 2 {
		t.Fatalf("kill from the detail sent %v", s.signals)
	}
	press(m, "esc", "1", "enter")
	f = m.Frame(100, 40)
	for _, want := range []string{"node00000", "load r1m", "JOBS ON THIS HOST"} {
		if !strings.Contains(f, want) {
			t.Fatalf("host detail lacks %q:\n%s", want, f)
		}
	}
}

func TestLostConnectionShows(t *testing.T) {
	m := load(newSim(4, 10), Options{})
	m.Update(ConnMsg{Up: false, Err: errors.New("connection refused")})
	if f := m.Frame(80, 24); !strings.Contains(f, "controller lost") || !strings.Contains(f, "reconnecting") {
		t.Fatalf("a lost connection is not shown:\n%s", f)
	}
	m.Update(ConnMsg{Up: true})
	if f := m.Frame(80, 24); !strings.Contains(f, "connected") {
		t.Fatalf("reconnection not shown:\n%s", f)
	}
}

func TestOverviewCounts(t *testing.T) {
	m := load(newSim(400, 800), Options{})
	ov := m.ov
	if ov.hosts[api.HostState_HOST_OK]+ov.hosts[api.HostState_HOST_CLOSED]+ov.hosts[api.HostState_HOST_UNAVAIL]+ov.hosts[api.HostState_HOST_UNREACH] != 400 {
		t.Fatalf("hosts by state %v", ov.hosts)
	}
	if ov.jobs[clsRun] != 300 || ov.jobs[clsPend] != 200 || ov.jobs[clsSusp] != 100 || ov.jobs[clsDone] != 100 || ov.jobs[clsExit] != 100 {
		t.Fatalf("jobs by state %v", ov.jobs)
	}
	if ov.memResvKB != 400*1024*1024 {
		t.Fatalf("reserved memory %d KB", ov.memResvKB)
	}
	total := 0
	for _, n := range m.subs.buckets {
		total += n
	}
	if total != 800 {
		t.Fatalf("%d submissions in the sparkline, want 800", total)
	}
}

// TestFeed drives the feed with the simulated controller: snapshot, a
// change, a new job fetched whole, a broken stream and the reconnection.
func TestFeed(t *testing.T) {
	s := newSim(4, 10)
	msgs := make(chan tea.Msg, 100)
	f := &Feed{Ctl: s, Send: func(m tea.Msg) { msgs <- m }, PollEvery: time.Hour, BatchEvery: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	m := load(s, Options{})
	wait := func(match func(tea.Msg) bool) {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			select {
			case msg := <-msgs:
				m.Update(msg)
				if match(msg) {
					return
				}
			case <-timeout:
				t.Fatal("timed out waiting for a message")
			}
		}
	}
	isUp := func(up bool) func(tea.Msg) bool {
		return func(msg tea.Msg) bool { c, ok := msg.(ConnMsg); return ok && c.Up == up }
	}
	wait(isUp(true))
	// A change of a known job comes without its spec; the model keeps it.
	s.watch <- &api.Job{JobId: 2, State: api.JobState_RUN, Seq: 5, StartTime: t0.UnixNano(), ExecHosts: []*api.HostSlots{{Host: "node00001", Slots: 1}}}
	// A job never seen is fetched whole.
	nj := simJob(99, 4, "short")
	s.mu.Lock()
	s.jobs = append(s.jobs, nj)
	s.mu.Unlock()
	s.watch <- &api.Job{JobId: 100, State: nj.State, Seq: 2}
	got := map[int64]bool{}
	wait(func(msg tea.Msg) bool {
		if j, ok := msg.(JobsMsg); ok {
			for _, x := range j.Jobs {
				got[x.JobId] = true
			}
		}
		return got[2] && got[100]
	})
	if r := m.jobs[jobKey{2, 0}]; r.job.State != api.JobState_RUN || r.user != "u1" || r.host != "node00001" {
		t.Fatalf("job 2 after the change: %s %s %s", r.job.State, r.user, r.host)
	}
	if r := m.jobs[jobKey{100, 0}]; r == nil || r.queue != "short" || r.user != "u9" {
		t.Fatalf("the new job was not fetched whole: %+v", r)
	}
	// The stream breaks: shown, then reconnected with a fresh snapshot.
	s.mu.Lock()
	close(s.watch)
	s.watch = make(chan *api.Job, 16)
	s.mu.Unlock()
	wait(isUp(false))
	if f := m.Frame(80, 24); !strings.Contains(f, "lost") {
		t.Fatalf("not shown as lost:\n%s", f)
	}
	wait(func(msg tea.Msg) bool { _, ok := msg.(SnapshotMsg); return ok })
	wait(isUp(true))
	if len(m.jobs) != 11 {
		t.Fatalf("%d jobs after reconnecting", len(m.jobs))
	}
}

// sortRows (packed keys) orders as lessRow (the merge's comparison) does,
// or a batch would be merged out of place.
func TestSortMatchesMerge(t *testing.T) {
	m := load(newSim(40, 3000), Options{})
	for col := range colNum {
		for _, desc := range []bool{false, true} {
			rows := append([]*jobRow(nil), m.all...)
			sortRows(rows, col, desc)
			for i := 1; i < len(rows); i++ {
				c := lessRow(col, rows[i-1], rows[i])
				if desc {
					c = -c
				}
				if c >= 0 {
					t.Fatalf("%s desc=%v: %s before %s", colNames[col], desc, rows[i-1].id, rows[i].id)
				}
			}
		}
	}
}

// A spooled job's -o file starts with its report: the tail shows only the
// output after it.
func TestJobDetailSpooled(t *testing.T) {
	s := newSim(40, 300)
	m := load(s, Options{Pane: PaneJobs, ReadFile: func(path string, off int64) ([]byte, error) {
		if off == 0 {
			return []byte("Sender: LSF System <lsfadmin@h>\nSubject: Job 1\n\nResource usage summary:\n\nThe output (if any) follows:\n\nspooled line\n"), nil
		}
		return nil, nil
	}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	do(t, m, press(m, "enter"))
	press(m, "f")
	f := m.Frame(100, 40)
	if !strings.Contains(f, "spooled line") || strings.Contains(f, "Sender: LSF System") {
		t.Fatalf("the tail of a spooled -o file:\n%s", f)
	}
}
