package top

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// Colours carry state, and so does a glyph before every state, for
// colour-blind readers and for NO_COLOR.
var (
	stOK    = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	stWarn  = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	stBad   = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	stDim   = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	stInfo  = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	stBold  = lipgloss.NewStyle().Bold(true)
	stHead  = lipgloss.NewStyle().Bold(true).Underline(true)
	stSel   = lipgloss.NewStyle().Reverse(true)
	stTab   = lipgloss.NewStyle().Reverse(true).Bold(true)
	stTitle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("4"))
)

func jobGlyph(s api.JobState) (string, lipgloss.Style) {
	switch s {
	case api.JobState_PEND:
		return "○", stWarn
	case api.JobState_PSUSP:
		return "◌", stWarn
	case api.JobState_RUN:
		return "▶", stOK
	case api.JobState_USUSP, api.JobState_SSUSP:
		return "‖", stInfo
	case api.JobState_DONE:
		return "✔", stDim
	case api.JobState_EXIT:
		return "✘", stBad
	}
	return "?", stBad
}

func hostGlyph(h *api.Host) (string, lipgloss.Style) {
	switch h.GetState() {
	case api.HostState_HOST_OK:
		return "●", stOK
	case api.HostState_HOST_CLOSED:
		if busyNotClosed(h) {
			return "◑", stInfo
		}
		return "◐", stWarn
	case api.HostState_HOST_UNAVAIL:
		return "✘", stBad
	}
	return "?", stBad
}

// stateWord is the host's status as bhosts -w prints it: closed_Full for a
// host that is merely full, closed_Adm for one an administrator closed.
func stateWord(h *api.Host) string { return lsfout.HostStatus(h, true) }

// busyNotClosed reports whether a closed host is closed only because its
// slots are taken (closed_Full) or an exclusive job holds it
// (closed_Excl): it opens by itself, no administrator closed it.
func busyNotClosed(h *api.Host) bool {
	d := h.GetStatusDetail()
	return h.GetState() == api.HostState_HOST_CLOSED && (d == "closed_Full" || d == "closed_Excl")
}

// View draws the frame.
func (m *Model) View() string {
	var b strings.Builder
	b.Grow(m.w * m.h * 2)
	lines := 0
	emit := func(s string) {
		if lines >= m.h {
			return
		}
		if lines > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		lines++
	}
	for _, l := range m.header() {
		emit(l)
	}
	emit(m.tabs())
	body := m.h - lines - 1
	switch {
	case m.mode == modeHelp:
		hl := strings.Split(helpText, "\n")
		for i := 0; i < body; i++ {
			s := ""
			if i < len(hl) {
				s = hl[i]
			}
			emit(fit(s, m.w))
		}
	case m.detail != nil:
		for _, l := range strings.Split(m.vp.View(), "\n") {
			emit(l)
		}
		for lines < m.h-1 && !m.opt.Once {
			emit("")
		}
	default:
		head, rows := m.table(body - 1)
		emit(head)
		for _, r := range rows {
			emit(r)
		}
		for lines < m.h-1 && !m.opt.Once {
			emit("")
		}
	}
	if m.opt.Once {
		// A frame for a pipe: what the table holds, no key hints.
		if m.pane == PaneJobs && m.detail == nil {
			emit(fmt.Sprintf("%d/%d jobs", len(m.view), len(m.jobs)))
		}
		return b.String()
	}
	emit(m.footer())
	return b.String()
}

func (m *Model) headerLines() int { return 5 }

// tableRows is how many rows of the current table fit.
func (m *Model) tableRows() int { return max(1, m.h-m.headerLines()-3) }

func (m *Model) header() []string {
	w := m.w
	name, master := "-", ""
	if m.info != nil {
		name, master = m.info.GetClusterName(), m.info.GetMasterHost()
	}
	conn := stOK.Render("● connected")
	if !m.ever && m.err == nil {
		conn = stWarn.Render("◌ connecting")
	}
	who := m.opt.Me
	if m.admin {
		who += " (admin)"
	}
	right := who + "  " + m.now.Format("15:04:05")
	title := stTitle.Render("XCE "+name) + " " + master + "  "
	if !m.up && (m.ever || m.err != nil) {
		msg := "controller lost"
		if m.err != nil {
			msg += ": " + errText(m.err)
		}
		room := max(12, w-lipgloss.Width(title)-lipgloss.Width(right)-len(" (reconnecting)")-4)
		conn = stBad.Render("✘ " + cut(msg, room) + " (reconnecting)")
	}
	left := title + conn
	l1 := spread(left, right, w)

	ov := &m.ov
	hosts := fmt.Sprintf("Hosts %s %d ok %s %d full %s %d closed %s %d unavail %s %d unreach",
		stOK.Render("●"), ov.hosts[api.HostState_HOST_OK],
		stInfo.Render("◑"), ov.hostsFull,
		stWarn.Render("◐"), ov.hosts[api.HostState_HOST_CLOSED]-ov.hostsFull,
		stBad.Render("✘"), ov.hosts[api.HostState_HOST_UNAVAIL],
		stBad.Render("?"), ov.hosts[api.HostState_HOST_UNREACH])
	slots := fmt.Sprintf("Slots %d/%d ", ov.slotsUsed, ov.slotsTotal)
	// "  " before the slots, " 42%" after the bar.
	if w-lipgloss.Width(hosts)-2-len(slots)-4 < 7 {
		hosts = fmt.Sprintf("Hosts %s%d %s%d %s%d %s%d %s%d",
			stOK.Render("●"), ov.hosts[api.HostState_HOST_OK],
			stInfo.Render("◑"), ov.hostsFull,
			stWarn.Render("◐"), ov.hosts[api.HostState_HOST_CLOSED]-ov.hostsFull,
			stBad.Render("✘"), ov.hosts[api.HostState_HOST_UNAVAIL],
			stBad.Render("?"), ov.hosts[api.HostState_HOST_UNREACH])
	}
	barW := min(40, max(5, w-lipgloss.Width(hosts)-2-len(slots)-4))
	l2 := hosts + "  " + slots + bar(float64(ov.slotsUsed), float64(ov.slotsTotal), barW) + pct(ov.slotsUsed, ov.slotsTotal)

	mem := fmt.Sprintf("Mem resv %s used %s of %s ", kb(ov.memResvKB), kb(ov.memUsedKB), kb(ov.memTotalKB))
	gpus := fmt.Sprintf("  GPUs %d/%d", ov.gpusUsed, ov.gpusTotal)
	mbw := min(40, max(5, w-len(mem)-len(gpus)-5))
	l3 := mem + bar(float64(max(ov.memUsedKB, ov.memResvKB)), float64(ov.memTotalKB), mbw) + pct(max(ov.memUsedKB, ov.memResvKB), ov.memTotalKB) + gpus

	g := func(s api.JobState, n int, label string) string {
		gl, st := jobGlyph(s)
		return st.Render(gl) + " " + label + " " + strconv.Itoa(n)
	}
	l4 := "Jobs " + g(api.JobState_PEND, ov.jobs[clsPend], "PEND") + "  " + g(api.JobState_RUN, ov.jobs[clsRun], "RUN") + "  " +
		g(api.JobState_USUSP, ov.jobs[clsSusp], "SUSP") + "  " + g(api.JobState_DONE, ov.jobs[clsDone], "DONE") + "  " +
		g(api.JobState_EXIT, ov.jobs[clsExit], "EXIT") + stDim.Render(" (last hour)")

	sw := max(4, min(rateMinutes, (w-3*16)/3))
	sp := func(label string, r *rate) string {
		vals := make([]float64, sw)
		for i := range sw {
			vals[i] = float64(r.buckets[rateMinutes-sw+i])
		}
		return label + " " + stInfo.Render(sparkline(vals)) + fmt.Sprintf(" %-4d", r.last())
	}
	l5 := sp("Submit/min", &m.subs) + " " + sp("Start/min", &m.starts) + " " + sp("Done/min", &m.ends)
	return []string{l1, fitStyled(l2, w), fitStyled(l3, w), fitStyled(l4, w), fitStyled(l5, w)}
}

func (m *Model) tabs() string {
	var b strings.Builder
	for p := range paneCount {
		t := fmt.Sprintf(" %d %s ", p+1, paneNames[p])
		if p == m.pane && m.detail == nil {
			b.WriteString(stTab.Render("[" + t[1:len(t)-1] + "]"))
		} else {
			b.WriteString(t)
		}
	}
	right := ""
	if m.detail != nil {
		if m.detail.host != "" {
			right = "host " + m.detail.host
		} else {
			right = "job " + lsfout.JobIDString(&api.Job{JobId: m.detail.job.id, ArrayIndex: m.detail.job.idx})
		}
		b.WriteString(stTab.Render("[" + right + "]"))
		right = ""
	}
	if !m.filter.empty() {
		right = "filter: " + m.filter.String()
	}
	return spread(b.String(), stWarn.Render(right), m.w)
}

func (m *Model) footer() string {
	switch m.mode {
	case modeFilter:
		return fitStyled(stBold.Render("/ ")+m.input.View(), m.w)
	case modePrompt:
		return fitStyled(stBold.Render(m.confirm.prompt)+m.input.View(), m.w)
	case modeConfirm:
		return fitStyled(stWarn.Render(m.confirm.confirmLine()), m.w)
	}
	if m.status != "" {
		st := stOK
		if m.statusErr {
			st = stBad
		}
		return fitStyled(st.Render(cut(m.status, m.w)), m.w)
	}
	hint := "?:keys  /:filter  tab:pane  enter:details  q:quit"
	switch {
	case m.detail != nil && m.detail.host == "":
		hint = "esc:back  f:follow output  K kill S stop R resume E requeue W switch  ?:keys"
	case m.detail != nil:
		hint = "esc:back  C close O open  ?:keys"
	case m.pane == PaneJobs:
		dir := "↑"
		if m.sortDesc {
			dir = "↓"
		}
		hint = fmt.Sprintf("%d/%d jobs  o:sort %s%s  K kill S stop R resume W switch  ?:keys", len(m.view), len(m.jobs), colNames[m.sortCol], dir)
	}
	return stDim.Render(fit(hint, m.w))
}

// table returns the current pane's header and its visible rows.
func (m *Model) table(n int) (string, []string) {
	p := m.pane
	m.clampSel(p)
	top := m.top[p]
	end := min(m.rows(p), top+n)
	sel := m.sel[p]
	if m.opt.Once {
		sel = -1 // no cursor in a frame for a pipe
	}
	var rows []string
	var head string
	switch p {
	case PaneJobs:
		cols := m.jobCols(m.view[top:end])
		head = cols.head()
		for i := top; i < end; i++ {
			rows = append(rows, m.jobLine(cols, m.view[i], i == sel))
		}
	case PaneHosts:
		c := m.hostCols(m.hview[top:end])
		head = c.head
		for i := top; i < end; i++ {
			rows = append(rows, m.hostLine(c, m.hview[i], i == sel))
		}
	case PaneQueues:
		head = fit(fmt.Sprintf("   %-16s %4s %-14s %5s %5s %6s %6s %6s %6s", "QUEUE_NAME", "PRIO", "STATUS", "MAX", "JL/U", "NJOBS", "PEND", "RUN", "SUSP"), m.w)
		for i := top; i < end; i++ {
			rows = append(rows, m.queueLine(m.queues[i], i == sel))
		}
	case PaneUsers:
		head = fit(fmt.Sprintf("   %-16s %6s %6s %6s %6s %7s %9s", "USER", "NJOBS", "PEND", "RUN", "SUSP", "SHARES", "PRIORITY"), m.w)
		for i := top; i < end; i++ {
			u := m.users[i]
			pr, sh := "-", "-"
			if u.priority >= 0 {
				pr = strconv.FormatFloat(u.priority, 'f', 3, 64)
				sh = strconv.Itoa(int(u.shares))
			}
			line := fit(fmt.Sprintf("   %-16s %6d %6d %6d %6d %7s %9s", cut(u.name, 16), u.pend+u.run+u.susp, u.pend, u.run, u.susp, sh, pr), m.w)
			if i == sel {
				line = ">" + stSel.Render(line[1:])
			}
			rows = append(rows, line)
		}
	}
	if len(rows) == 0 {
		rows = append(rows, stDim.Render(fit("  (nothing to show"+m.emptyWhy()+")", m.w)))
	}
	return stHead.Render(head), rows
}

func (m *Model) emptyWhy() string {
	if !m.filter.empty() && (m.pane == PaneJobs || m.pane == PaneHosts) {
		return " with this filter; esc clears it"
	}
	return ""
}

type jobCols struct {
	w                                                int
	id, user, stat, queue, host, name, submit, slots int
	run, reason                                      int // wide terminals only
}

// jobCols fits the job table to the width: at 80 columns bjobs's own
// columns; from 120 wider ones and SLOTS; from 160 also RUN_TIME and the
// first pending reason (or why it ended). JOBID, SLOTS and RUN_TIME widen
// to their widest visible value (an array element's "1234567[1000]"),
// never cut; the job name gives up the room, then the text columns (user,
// queue, host, cut with "~").
func (m *Model) jobCols(rows []*jobRow) jobCols {
	c := jobCols{w: m.w, id: 10, user: 9, stat: 5, queue: 10, host: 12, submit: 12}
	if m.w >= 120 {
		c.user, c.queue, c.host, c.slots = 12, 14, 18, 5
	}
	for _, r := range rows {
		c.id = max(c.id, len(r.id))
		if c.slots > 0 {
			c.slots = max(c.slots, len(strconv.Itoa(r.slots)))
		}
	}
	if m.w >= 160 {
		c.run = 10
	}
	used := 3 + c.id + 1 + c.user + 1 + c.stat + 1 + c.queue + 1 + c.host + 1 + c.submit + 1
	if c.slots > 0 {
		used += c.slots + 1
	}
	if c.run > 0 {
		for _, r := range rows {
			c.run = max(c.run, len(runTime(r.job, m.now)))
		}
		used += c.run + 1
	}
	// Below 8 columns for the name, the text columns give up room.
	for _, w := range []*int{&c.host, &c.queue, &c.user} {
		if short := 8 - (m.w - used); short > 0 {
			cut := min(short, *w-6)
			*w -= cut
			used -= cut
		}
	}
	rest := m.w - used
	c.name = max(8, rest)
	if m.w >= 160 {
		c.name = min(rest/2, 40)
		c.reason = rest - c.name - 1
	}
	return c
}

func (c jobCols) head() string {
	s := "   " + pad("JOBID", c.id) + " " + pad("USER", c.user) + " " + pad("STAT", c.stat) + " " + pad("QUEUE", c.queue) + " " +
		pad("EXEC_HOST", c.host) + " " + pad("JOB_NAME", c.name) + " " + pad("SUBMIT_TIME", c.submit)
	if c.slots > 0 {
		s += " " + padL("SLOTS", c.slots)
	}
	if c.run > 0 {
		s += " " + padL("RUN_TIME", c.run)
	}
	if c.reason > 0 {
		s += " " + pad("REASON", c.reason)
	}
	return fit(s, c.w)
}

func (m *Model) jobLine(c jobCols, r *jobRow, sel bool) string {
	j := r.job
	gl, st := jobGlyph(j.GetState())
	host := r.host
	if n := len(j.GetExecHosts()); n > 1 {
		host += "+" + strconv.Itoa(n-1)
	}
	if host == "" {
		host = "-"
	}
	s := pad(r.id, c.id) + " " + pad(r.user, c.user) + " " + pad(lsfout.StateName(j.GetState()), c.stat) + " " + pad(r.queue, c.queue) + " " +
		pad(host, c.host) + " " + pad(r.name, c.name) + " " + pad(shortTime(j.GetSubmitTime(), m.now), c.submit)
	if c.slots > 0 {
		s += " " + padL(strconv.Itoa(r.slots), c.slots)
	}
	if c.run > 0 {
		s += " " + padL(runTime(j, m.now), c.run)
	}
	if c.reason > 0 {
		s += " " + pad(reason(j), c.reason)
	}
	s = fit(s, c.w-3)
	if sel {
		return ">" + st.Render(gl) + " " + stSel.Render(s)
	}
	return " " + st.Render(gl) + " " + st.Render(s)
}

// runTime is how long the job has run (or ran), as h:mm:ss.
func runTime(j *api.Job, now time.Time) string {
	if j.GetStartTime() == 0 {
		return "-"
	}
	end := now.UnixNano()
	if j.GetEndTime() != 0 {
		end = j.GetEndTime()
	}
	sec := max(0, (end-j.GetStartTime())/int64(time.Second))
	return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
}

// reason is a pending job's first pending reason, or how a job exited.
func reason(j *api.Job) string {
	switch classOf(j.GetState()) {
	case clsPend:
		r := firstLine(strings.TrimSpace(j.GetPendReason()))
		return strings.TrimSuffix(r, ";")
	case clsExit:
		if j.GetTermReasonSet() {
			return lsfout.TermReasonText(j.GetTermReason())
		}
		return "exit code " + strconv.Itoa(int(j.GetExitStatus()))
	}
	return ""
}

// hostCols are the host table's widths. Every column but the two bars is
// as wide as its widest visible value, so no value is ever cut; the bars
// take what is left (4 to 40 columns each), and the host name is cut
// (with "~") only when even 4-column bars leave it no room.
type hostCols struct {
	name, status, slots, mem, slotBar, memBar int
	wide                                      bool
	head                                      string
}

func hostSlots(h *api.Host) string { return fmt.Sprintf("%d/%d", h.GetNjobs(), h.GetMaxSlots()) }

func hostMem(h *api.Host) string {
	return kb(max(0, h.GetMaxmemKb()-h.GetMemKb())) + "/" + kb(h.GetMaxmemKb())
}

func (m *Model) hostCols(rows []*hostRow) hostCols {
	c := hostCols{name: 9, status: 7, slots: 5, mem: 11, wide: m.w >= 120}
	for _, hr := range rows {
		h := hr.host
		c.name = max(c.name, len([]rune(h.GetName())))
		c.status = max(c.status, len(stateWord(h)))
		c.slots = max(c.slots, len(hostSlots(h)))
		c.mem = max(c.mem, len(hostMem(h)))
	}
	// The glyph's 3 columns, then name status [bar] slots r1m [r15m] ut
	// [bar] mem JOBS [CPUS GPUS], one blank between columns and after
	// each bar.
	fixed := func() int {
		n := 3 + c.name + 1 + c.status + 1 + 1 + c.slots + 1 + 5 + 1 + 4 + 1 + 1 + c.mem + 1 + 5
		if c.wide {
			n += 5 + 1 + 5 + 1 + 5 + 1
		}
		return n
	}
	if over := fixed() + 2*4 - m.w; over > 0 {
		c.name = max(4, c.name-over)
	}
	bars := max(4, min(40, (m.w-fixed())/2))
	c.slotBar, c.memBar = bars, bars
	head := "   " + pad("HOST_NAME", c.name) + " " + pad("STATUS", c.status) + " " + pad("SLOTS", c.slotBar+1+c.slots) + " " + padL("r1m", 5)
	if c.wide {
		head += " " + padL("r15m", 5)
	}
	head += " " + padL("ut", 4) + " " + pad("MEM used/max", c.memBar+1+c.mem) + " " + padL("JOBS", 5)
	if c.wide {
		head += " " + padL("CPUS", 5) + " " + padL("GPUS", 5)
	}
	c.head = fit(head, m.w)
	return c
}

func (m *Model) hostLine(c hostCols, hr *hostRow, sel bool) string {
	h := hr.host
	gl, st := hostGlyph(h)
	used := max(0, h.GetMaxmemKb()-h.GetMemKb())
	s := pad(h.GetName(), c.name) + " " + pad(stateWord(h), c.status) + " " +
		bar(float64(h.GetNjobs()), float64(h.GetMaxSlots()), c.slotBar) + " " + pad(hostSlots(h), c.slots) + " " +
		padL(strconv.FormatFloat(h.GetR1M(), 'f', 1, 64), 5) + " "
	if c.wide {
		s += padL(strconv.FormatFloat(h.GetR15M(), 'f', 1, 64), 5) + " "
	}
	s += padL(strconv.Itoa(int(math.Round(h.GetUt()*100)))+"%", 4) + " " +
		bar(float64(used), float64(h.GetMaxmemKb()), c.memBar) + " " + pad(hostMem(h), c.mem) + " " + padL(strconv.Itoa(hr.jobs), 5)
	if c.wide {
		s += " " + padL(strconv.Itoa(int(h.GetNcpus())), 5) + " " + padL(gpuCell(h), 5)
	}
	s = fit(s, m.w-3)
	if sel {
		return ">" + st.Render(gl) + " " + stSel.Render(s)
	}
	return " " + st.Render(gl) + " " + s
}

func (m *Model) queueLine(q *api.Queue, sel bool) string {
	status := "Open"
	gl, st := "●", stOK
	if !q.GetOpen() {
		status, gl, st = "Closed", "◐", stWarn
	}
	if q.GetActive() {
		status += ":Active"
	} else {
		status += ":Inact"
		gl, st = "✘", stBad
	}
	lim := func(n int32) string {
		if n == 0 {
			return "-"
		}
		return strconv.Itoa(int(n))
	}
	s := fit(fmt.Sprintf("%-16s %4d %-14s %5s %5s %6d %6d %6d %6d", cut(q.GetName(), 16), q.GetPriority(), status, lim(q.GetMaxSlots()), lim(q.GetUserSlotLimit()),
		q.GetNjobs(), q.GetPend(), q.GetRun(), q.GetSsusp()+q.GetUsusp()), m.w-3)
	if sel {
		return ">" + st.Render(gl) + " " + stSel.Render(s)
	}
	return " " + st.Render(gl) + " " + s
}

// layoutDetail sizes the detail viewport and fills it.
func (m *Model) layoutDetail() {
	d := m.detail
	if d == nil {
		return
	}
	m.vp.Width = m.w
	m.vp.Height = max(1, m.h-m.headerLines()-2)
	var b strings.Builder
	if d.host != "" {
		m.hostDetail(&b, d.host)
	} else {
		if d.full != nil {
			d.long = longText(d.full, m.now, m.w >= 120)
		}
		m.jobDetail(&b, d)
	}
	m.vp.SetContent(b.String())
	if d.follow && d.host == "" {
		m.vp.GotoBottom()
	}
}

func (m *Model) jobDetail(b *strings.Builder, d *detail) {
	b.WriteString(d.long)
	if j := d.full; j != nil && classOf(j.GetState()) == clsPend {
		// The pending reasons name the terms of the requirement that no
		// host met; set them apart, next to the requirement itself.
		var terms []string
		for _, l := range strings.Split(j.GetPendReason(), "\n") {
			if l = strings.TrimSuffix(strings.TrimSpace(l), ";"); isTermReason(l) {
				terms = append(terms, l)
			}
		}
		if len(terms) > 0 {
			b.WriteString("\n" + stBold.Render("FAILING REQUIREMENT TERMS:") + "\n")
			for _, t := range terms {
				b.WriteString(" " + stWarn.Render(t) + "\n")
			}
			if rr := j.GetEffective().GetResReq(); len(rr) > 0 {
				b.WriteString(" of: " + strings.Join(rr, " ") + "\n")
			}
		}
	}
	b.WriteString("\n" + stBold.Render("OUTPUT") + stDim.Render(" ("+followWord(d.follow)+", f toggles)") + "\n")
	switch {
	case d.outErr != "":
		b.WriteString(stBad.Render(d.outErr) + "\n")
	case d.outPath == "" && (d.full == nil || d.full.GetStartTime() == 0):
		b.WriteString(stDim.Render("(the job has not started)") + "\n")
	case d.outPath == "":
		b.WriteString(stDim.Render("(the controller did not say where its output is)") + "\n")
	case len(d.out) == 0:
		b.WriteString(stDim.Render("(no output yet: "+d.outPath+")") + "\n")
	default:
		b.Write(d.out)
	}
}

// isTermReason says whether a pending reason line is about one term of
// the resource requirement ("select[mem > 64000]: no host has ...").
func isTermReason(l string) bool {
	for _, sec := range []string{"select[", "rusage[", "span[", "same[", "order[", "cu[", "affinity["} {
		if strings.HasPrefix(l, sec) {
			return true
		}
	}
	return false
}

func followWord(f bool) string {
	if f {
		return "following"
	}
	return "paused"
}

func (m *Model) hostDetail(b *strings.Builder, name string) {
	var h *api.Host
	for _, hr := range m.hosts {
		if hr.host.GetName() == name {
			h = hr.host
			break
		}
	}
	if h == nil {
		b.WriteString("host " + name + " is gone\n")
		return
	}
	gl, st := hostGlyph(h)
	fmt.Fprintf(b, "%s %s  %s  slots %d/%d  ncpus %d  mem %s free of %s  gpus %d  type %s model %s\n",
		st.Render(gl), stBold.Render(h.GetName()), lsfout.HostStatus(h, true), h.GetNjobs(), h.GetMaxSlots(), h.GetNcpus(),
		kb(h.GetMemKb()), kb(h.GetMaxmemKb()), h.GetNgpus(), h.GetType(), h.GetModel())
	for _, g := range h.GetGpus() {
		// One line per GPU: model, memory used of total, utilisation, the jobs on it.
		jobs := "-"
		if ids := g.GetJobIds(); len(ids) > 0 {
			jobs = strings.Join(ids, ",")
			if g.GetExclusive() {
				jobs += " (exclusive)"
			}
		}
		ut := "-"
		if g.GetUtilPct() >= 0 {
			ut = strconv.Itoa(int(g.GetUtilPct())) + "%"
		}
		fmt.Fprintf(b, "  gpu %d  %s  mem %s of %s  ut %s  jobs %s\n", g.GetIndex(), g.GetModel(),
			kb(max(0, g.GetMemUsedMb())<<10), kb(max(0, g.GetMemTotalMb())<<10), ut, jobs)
	}
	if hi := m.hist[name]; hi != nil || len(h.GetR1MHistory()) > 0 {
		sw := min(historyLen, max(10, m.w-30))
		var r, u []float64
		if len(h.GetR1MHistory()) > 0 {
			// The controller's history (the last hour) when it keeps one.
			for i, v := range h.GetR1MHistory() {
				r = append(r, float64(v))
				if i < len(h.GetUtHistory()) {
					u = append(u, float64(h.GetUtHistory()[i]))
				}
			}
		} else {
			r, u = hi.values(false), hi.values(true)
		}
		if len(r) > sw {
			r = r[len(r)-sw:]
		}
		if len(u) > sw {
			u = u[len(u)-sw:]
		}
		fmt.Fprintf(b, "load r1m %-6.1f %s\n", h.GetR1M(), stInfo.Render(sparkline(r)))
		fmt.Fprintf(b, "ut       %-6s %s\n", strconv.Itoa(int(math.Round(h.GetUt()*100)))+"%", stInfo.Render(sparklineMax(u, 1)))
	}
	b.WriteString("\n")
	var on []*jobRow
	for _, r := range m.jobs {
		for _, hs := range r.job.GetExecHosts() {
			if hs.GetHost() == name {
				c := classOf(r.job.GetState())
				if c == clsRun || c == clsSusp {
					on = append(on, r)
				}
				break
			}
		}
	}
	sortRows(on, colID, false)
	fmt.Fprintf(b, "%s (%d)\n", stBold.Render("JOBS ON THIS HOST"), len(on))
	cols := m.jobCols(on)
	b.WriteString(stHead.Render(cols.head()) + "\n")
	for _, r := range on {
		b.WriteString(m.jobLine(cols, r, false) + "\n")
	}
}

// longText is what bjobs -l shows (its pending reasons name the failing
// requirement terms); a wide terminal gets it unwrapped, as bjobs -UF.
func longText(j *api.Job, now time.Time, wide bool) string {
	var buf bytes.Buffer
	if j.GetEffective() == nil && j.GetSpec() == nil {
		return "Job <" + lsfout.JobIDString(j) + ">: details not yet fetched\n"
	}
	lsfout.WriteJobsLong(&buf, []*api.Job{j}, lsfout.JobsOptions{Now: now, Location: now.Location(), Unformatted: wide})
	return buf.String()
}

// Text helpers. Cells are padded and cut on runes; a styled line is cut
// by lipgloss, which knows about escape sequences.

func pad(s string, w int) string {
	r := []rune(s)
	if len(r) > w {
		return cut(s, w)
	}
	return s + strings.Repeat(" ", w-len(r))
}

func padL(s string, w int) string {
	r := []rune(s)
	if len(r) > w {
		return cut(s, w)
	}
	return strings.Repeat(" ", w-len(r)) + s
}

// fit pads or cuts a plain line to exactly w columns.
func fit(s string, w int) string { return pad(s, w) }

// fitStyled cuts a styled line to w columns.
func fitStyled(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	return lipgloss.NewStyle().MaxWidth(w).Render(s)
}

// spread puts left and right on one line of width w.
func spread(left, right string, w int) string {
	gap := w - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 {
		return fitStyled(left+" "+right, w)
	}
	return left + strings.Repeat(" ", gap) + right
}

// errText is an error's first line without gRPC's "rpc error: code = X
// desc =" prefix.
func errText(err error) string {
	s := firstLine(err.Error())
	if _, d, ok := strings.Cut(s, " desc = "); ok && strings.HasPrefix(s, "rpc error:") {
		s = d
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

var blocks = []rune("▁▂▃▄▅▆▇█")

func sparkline(v []float64) string {
	hi := 0.0
	for _, x := range v {
		hi = max(hi, x)
	}
	return sparklineMax(v, hi)
}

func sparklineMax(v []float64, hi float64) string {
	out := make([]rune, len(v))
	for i, x := range v {
		k := 0
		if hi > 0 {
			k = int(math.Round(x / hi * float64(len(blocks)-1)))
		}
		out[i] = blocks[max(0, min(len(blocks)-1, k))]
	}
	return string(out)
}

// bar draws used of total as [####....] in w columns, brackets included.
func bar(used, total float64, w int) string {
	in := w - 2
	if in < 1 {
		return ""
	}
	n := 0
	if total > 0 {
		n = int(math.Round(used / total * float64(in)))
	}
	n = max(0, min(in, n))
	st := stOK
	if total > 0 && used/total >= 0.9 {
		st = stBad
	} else if total > 0 && used/total >= 0.7 {
		st = stWarn
	}
	return "[" + st.Render(strings.Repeat("█", n)) + strings.Repeat("·", in-n) + "]"
}

func pct(a, b int64) string {
	if b == 0 {
		return "   -"
	}
	return fmt.Sprintf("%3d%%", a*100/b)
}

// kb prints kilobytes the way lsload does: 512M, 3.5G, 1.2T.
func kb(k int64) string {
	f := float64(k)
	switch {
	case k >= 1<<30:
		return strconv.FormatFloat(f/(1<<30), 'f', 1, 64) + "T"
	case k >= 1<<20:
		return strconv.FormatFloat(f/(1<<20), 'f', 1, 64) + "G"
	case k >= 1<<10:
		return strconv.FormatFloat(f/(1<<10), 'f', 0, 64) + "M"
	}
	return strconv.FormatInt(k, 10) + "K"
}

// shortTime is a submit time as bjobs shows it ("Nov 30 03:04").
func shortTime(ns int64, now time.Time) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).In(now.Location()).Format("Jan _2 15:04")
}

// gpuCell is the hosts pane's GPUS: "used/total" for a host that lists
// its devices (used: those some job holds), else the count.
func gpuCell(h *api.Host) string {
	if len(h.GetGpus()) == 0 {
		return strconv.Itoa(int(h.GetNgpus()))
	}
	used := 0
	for _, g := range h.GetGpus() {
		if len(g.GetJobIds()) > 0 {
			used++
		}
	}
	return strconv.Itoa(used) + "/" + strconv.Itoa(len(h.GetGpus()))
}
