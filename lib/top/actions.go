package top

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"xce/lib/api"
)

// action is a control waiting for its confirmation.
type action struct {
	text   string // "Kill job 12 (sleep 60) of alice"
	prompt string // asks for arg first when set
	arg    string
	do     func(ctx context.Context, ctl Controller, arg string) error
}

// actionFor maps a key to an action on the selected row, nil when the key
// is not an action here.
func (m *Model) actionFor(k string) *action {
	if len(k) != 1 || k[0] < 'A' || k[0] > 'Z' {
		return nil
	}
	if m.detail != nil && m.detail.host != "" {
		return m.hostAction(k, m.detail.host)
	}
	if m.detail != nil || m.pane == PaneJobs {
		return m.jobAction(k)
	}
	switch m.pane {
	case PaneHosts:
		if len(m.hview) == 0 {
			return nil
		}
		return m.hostAction(k, m.hview[m.sel[PaneHosts]].host.GetName())
	case PaneQueues:
		if len(m.queues) == 0 {
			return nil
		}
		return m.queueAction(k, m.queues[m.sel[PaneQueues]].GetName())
	}
	return nil
}

func (m *Model) jobAction(k string) *action {
	r := m.selectedJob()
	if r == nil {
		return nil
	}
	ref := &api.JobRef{JobId: r.job.GetJobId(), ArrayIndex: r.job.GetArrayIndex()}
	what := fmt.Sprintf("job %s (%s) of %s", r.id, cut(r.name, 30), r.user)
	signal := func(a api.SignalRequest_Action) func(context.Context, Controller, string) error {
		return func(ctx context.Context, ctl Controller, _ string) error {
			rep, err := ctl.Signal(ctx, &api.SignalRequest{Action: a, Refs: []*api.JobRef{ref}})
			if err != nil {
				return err
			}
			for _, res := range rep.GetResults() {
				if res.GetError() != "" {
					return fmt.Errorf("%s", res.GetError())
				}
			}
			return nil
		}
	}
	control := func(a api.ControlRequest_Action) func(context.Context, Controller, string) error {
		return func(ctx context.Context, ctl Controller, arg string) error {
			req := &api.ControlRequest{Action: a, Refs: []*api.JobRef{ref}}
			switch a {
			case api.ControlRequest_SWITCH:
				req.Queue = arg
			case api.ControlRequest_TOP, api.ControlRequest_BOTTOM:
				req.Position = 1
			case api.ControlRequest_REQUEUE:
				// brequeue's default: done, exited and running jobs.
				req.States = []api.JobState{api.JobState_DONE, api.JobState_EXIT, api.JobState_RUN, api.JobState_USUSP, api.JobState_SSUSP}
			}
			return controlErr(ctl.Control(ctx, req))
		}
	}
	var a *action
	switch k {
	case "K":
		a = &action{text: "Kill " + what, do: signal(api.SignalRequest_KILL)}
	case "S":
		a = &action{text: "Stop " + what, do: signal(api.SignalRequest_STOP)}
	case "R":
		a = &action{text: "Resume " + what, do: signal(api.SignalRequest_RESUME)}
	case "E":
		a = &action{text: "Requeue " + what, do: control(api.ControlRequest_REQUEUE)}
	case "W":
		a = &action{text: "Switch " + what + " to queue", prompt: "Switch job " + r.id + " to queue: ", do: control(api.ControlRequest_SWITCH)}
	case "T":
		a = &action{text: "Move " + what + " to the top of its queue", do: control(api.ControlRequest_TOP)}
	case "B":
		a = &action{text: "Move " + what + " to the bottom of its queue", do: control(api.ControlRequest_BOTTOM)}
	default:
		return nil
	}
	if !m.admin && r.user != m.opt.Me {
		return &action{text: fmt.Sprintf("not allowed: job %s belongs to %s, and only administrators act on other users' jobs", r.id, r.user)}
	}
	return a
}

func (m *Model) hostAction(k, host string) *action {
	var a *action
	switch k {
	case "C":
		a = &action{text: "Close host " + host, do: controlNames(api.ControlRequest_HOST_CLOSE, host)}
	case "O":
		a = &action{text: "Open host " + host, do: controlNames(api.ControlRequest_HOST_OPEN, host)}
	default:
		return nil
	}
	if !m.admin {
		return &action{text: "not allowed: only administrators open and close hosts"}
	}
	return a
}

func (m *Model) queueAction(k, q string) *action {
	var a *action
	switch k {
	case "C":
		a = &action{text: "Close queue " + q, do: controlNames(api.ControlRequest_QUEUE_CLOSE, q)}
	case "O":
		a = &action{text: "Open queue " + q, do: controlNames(api.ControlRequest_QUEUE_OPEN, q)}
	case "I":
		a = &action{text: "Inactivate queue " + q, do: controlNames(api.ControlRequest_QUEUE_INACTIVATE, q)}
	case "A":
		a = &action{text: "Activate queue " + q, do: controlNames(api.ControlRequest_QUEUE_ACTIVATE, q)}
	default:
		return nil
	}
	if !m.admin {
		return &action{text: "not allowed: only administrators control queues"}
	}
	return a
}

func controlNames(a api.ControlRequest_Action, name string) func(context.Context, Controller, string) error {
	return func(ctx context.Context, ctl Controller, _ string) error {
		return controlErr(ctl.Control(ctx, &api.ControlRequest{Action: a, Names: []string{name}}))
	}
}

func controlErr(rep *api.ControlReply, err error) error {
	if err != nil {
		return err
	}
	for _, res := range rep.GetResults() {
		if res.GetError() != "" {
			return fmt.Errorf("%s", res.GetError())
		}
	}
	return nil
}

// begin shows an action's confirmation line (or its prompt, or why it is
// not allowed).
func (m *Model) begin(a *action) tea.Cmd {
	if a.do == nil {
		m.status, m.statusErr = a.text, true
		return nil
	}
	m.confirm = a
	if a.prompt != "" {
		m.mode = modePrompt
		m.input.SetValue("")
		return m.input.Focus()
	}
	m.mode = modeConfirm
	return nil
}

func (m *Model) cancelAction() {
	m.confirm = nil
	m.mode = modeNormal
	if m.detail != nil {
		m.mode = modeDetail
	}
	m.status = "cancelled"
}

// run performs a confirmed action.
func (m *Model) run(a *action) tea.Cmd {
	ctl := m.opt.Ctl
	text := a.text
	if a.arg != "" {
		text += " " + a.arg
	}
	if ctl == nil {
		return func() tea.Msg { return statusMsg{text: text + ": no controller", err: true} }
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := a.do(ctx, ctl, a.arg); err != nil {
			return statusMsg{text: text + ": " + strings.TrimSpace(err.Error()), err: true}
		}
		return statusMsg{text: text + ": done"}
	}
}

// confirmLine is the question the bottom line asks.
func (a *action) confirmLine() string {
	t := a.text
	if a.arg != "" {
		t += " " + a.arg
	}
	return t + "? [y/N]"
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:n])
	}
	return string(r[:n-1]) + "~"
}
