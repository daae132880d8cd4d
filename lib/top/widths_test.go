package top

import (
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"xce/lib/api"
)

// A host that is merely full is closed_Full, counted apart from the hosts
// an administrator closed, with its own glyph.
func TestFullHostIsNotAdminClosed(t *testing.T) {
	s := newSim(2, 0)
	s.hosts[0].State, s.hosts[0].StatusDetail, s.hosts[0].Njobs = api.HostState_HOST_CLOSED, "closed_Full", 32
	s.hosts[1].State, s.hosts[1].StatusDetail = api.HostState_HOST_OK, "ok"
	m := load(s, Options{Pane: PaneHosts})
	f := m.Frame(120, 20)
	if !strings.Contains(f, "● 1 ok ◑ 1 full ◐ 0 closed") {
		t.Errorf("the overview counts a full host as closed:\n%s", f)
	}
	if !strings.Contains(f, "◑ node00000 closed_Full") {
		t.Errorf("a full host is not shown as closed_Full:\n%s", f)
	}
	s.hosts[0].StatusDetail = "closed_Adm"
	m = load(s, Options{Pane: PaneHosts})
	if f := m.Frame(120, 20); !strings.Contains(f, "● 1 ok ◑ 0 full ◐ 1 closed") || !strings.Contains(f, "◐ node00000 closed_Adm") {
		t.Errorf("an administrator's closed host:\n%s", f)
	}
}

// Every pane fits every width from 80 to 250 columns, and no value is cut
// in the middle: long array ids, large slot and memory figures, long
// host names and status words all appear whole.
func TestRowsFitEveryWidth(t *testing.T) {
	s := newSim(12, 60)
	for i, h := range s.hosts {
		h.Name = "compute-rack" + strconv.Itoa(i) + "-node" + strconv.Itoa(i*7)
		h.MaxSlots, h.Njobs = 1024, int32(1000+i)
		h.MaxmemKb, h.MemKb = 2048<<20, int64(i)<<20 // used ~2T of 2T
	}
	s.hosts[3].State, s.hosts[3].StatusDetail = api.HostState_HOST_CLOSED, "closed_Full"
	for i, j := range s.jobs {
		j.JobId, j.ArrayIndex = int64(9_000_000+i), int32(1000+i)
		if len(j.ExecHosts) > 0 {
			j.ExecHosts[0].Host = s.hosts[i%len(s.hosts)].Name
		}
	}
	for w := 80; w <= 250; w++ {
		for _, p := range []Pane{PaneHosts, PaneQueues, PaneJobs, PaneUsers} {
			m := load(s, Options{Pane: p})
			m.Update(tea.WindowSizeMsg{Width: w, Height: 30})
			lines := strings.Split(m.Frame(w, 30), "\n")
			for i, l := range lines {
				if lw := lipgloss.Width(l); lw > w {
					t.Fatalf("width %d, pane %d: line %d is %d columns: %q", w, p, i+1, lw, l)
				}
			}
			table := strings.Join(lines[6:len(lines)-1], "\n")
			var whole []string
			switch p {
			case PaneJobs:
				for _, j := range s.jobs[:20] {
					whole = append(whole, " "+strconv.Itoa(int(j.JobId))+"["+strconv.Itoa(int(j.ArrayIndex))+"] ")
				}
			case PaneHosts:
				whole = append(whole, " closed_Full ")
				for _, h := range s.hosts {
					whole = append(whole, " "+hostSlots(h)+" ", " "+hostMem(h)+" ")
				}
			}
			for _, v := range whole {
				if !strings.Contains(table, v) {
					t.Fatalf("width %d, pane %d: %q is cut:\n%s", w, p, v, table)
				}
			}
			for _, word := range strings.Fields(lines[6]) {
				if strings.HasSuffix(word, "~") {
					t.Errorf("width %d, pane %d: header word %q is cut", w, p, word)
				}
			}
		}
	}
}

// xcetop --once: one clean frame for a pipe.
func TestOnceFrameIsPlain(t *testing.T) {
	s := newSim(4, 5)
	for _, p := range []Pane{PaneHosts, PaneQueues, PaneJobs, PaneUsers} {
		m := load(s, Options{Pane: p, Once: true})
		f := m.Frame(100, 40)
		lines := strings.Split(f, "\n")
		for i, l := range lines {
			if strings.HasSuffix(l, " ") {
				t.Errorf("pane %d line %d ends in blanks: %q", p, i+1, l)
			}
			if strings.HasPrefix(l, ">") {
				t.Errorf("pane %d line %d has the cursor: %q", p, i+1, l)
			}
			if l == "" {
				t.Errorf("pane %d: blank line %d fills the height:\n%s", p, i+1, f)
			}
		}
		if strings.Contains(f, "?:keys") || strings.Contains(f, "q:quit") {
			t.Errorf("pane %d: key hints in a --once frame:\n%s", p, f)
		}
		rows := m.rows(p)
		want := 5 + 1 + 1 + rows // overview, tabs, table head, rows
		if p == PaneJobs {
			want++ // "5/5 jobs"
		}
		if len(lines) != want {
			t.Errorf("pane %d: %d lines, want %d:\n%s", p, len(lines), want, f)
		}
	}
}
