package main

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notifier speaks systemd's service protocol (sd_notify, through
// go-systemd) for the units of packaging/: READY=1 once xced serves,
// STOPPING=1 when it begins to stop, and WATCHDOG=1 from the loop that
// proves xced alive (the controller's scheduling loop, a standby's event
// loop, a worker's load sampling), at most every half WatchdogSec. Outside
// systemd (no NOTIFY_SOCKET) every call does nothing.
type notifier struct {
	every time.Duration // between WATCHDOG=1s; 0: no watchdog
	last  atomic.Int64  // when the last one went, in UnixNano
	ready atomic.Bool
}

func newNotifier() *notifier {
	n := &notifier{}
	d, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		slog.Warn("systemd watchdog setting not understood; no watchdog pings", "err", err)
	} else if d > 0 {
		n.every = d / 2
	}
	return n
}

func (n *notifier) send(state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		slog.Warn("systemd notification not sent", "state", state, "err", err)
	}
}

// Ready says READY=1, once.
func (n *notifier) Ready() {
	if n.ready.CompareAndSwap(false, true) {
		n.send(daemon.SdNotifyReady)
	}
}

// Stopping says STOPPING=1.
func (n *notifier) Stopping() { n.send(daemon.SdNotifyStopping) }

// Alive pings the watchdog if half its period has passed since the last
// ping; the loops call it on every turn.
func (n *notifier) Alive() {
	if n.every == 0 {
		return
	}
	now := time.Now().UnixNano()
	last := n.last.Load()
	if now-last < int64(n.every) || !n.last.CompareAndSwap(last, now) {
		return
	}
	n.send(daemon.SdNotifyWatchdog)
}
