package logging

import (
	"bufio"
	"context"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// HCLog returns an hclog.Logger named name that writes through l's
// handler. Its level is floor, or debug where l is enabled for debug:
// raft is chatty at info (every missed heartbeat), and an administrator
// who asked for debug wants it all.
func HCLog(l *slog.Logger, name string, floor hclog.Level) hclog.Logger {
	lv := floor
	if l.Enabled(context.Background(), slog.LevelDebug) && lv > hclog.Debug {
		lv = hclog.Debug
	}
	h := &hcAdapter{base: l}
	h.level.Store(int32(lv))
	return h.derive(name, nil)
}

// hcAdapter is hclog's Logger over a slog.Logger.
type hcAdapter struct {
	base    *slog.Logger // without the component and implied arguments
	l       *slog.Logger
	name    string
	implied []any
	level   atomic.Int32
}

func slogLevel(lv hclog.Level) slog.Level {
	switch {
	case lv <= hclog.Debug:
		return slog.LevelDebug
	case lv == hclog.Info:
		return slog.LevelInfo
	case lv == hclog.Warn:
		return slog.LevelWarn
	}
	return slog.LevelError
}

func (h *hcAdapter) Log(lv hclog.Level, msg string, args ...any) {
	if lv == hclog.Off || lv < hclog.Level(h.level.Load()) {
		return
	}
	h.l.Log(context.Background(), slogLevel(lv), msg, args...)
}

func (h *hcAdapter) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hcAdapter) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hcAdapter) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hcAdapter) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hcAdapter) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hcAdapter) is(lv hclog.Level) bool { return hclog.Level(h.level.Load()) <= lv }
func (h *hcAdapter) IsTrace() bool          { return h.is(hclog.Trace) }
func (h *hcAdapter) IsDebug() bool          { return h.is(hclog.Debug) }
func (h *hcAdapter) IsInfo() bool           { return h.is(hclog.Info) }
func (h *hcAdapter) IsWarn() bool           { return h.is(hclog.Warn) }
func (h *hcAdapter) IsError() bool          { return h.is(hclog.Error) }

func (h *hcAdapter) ImpliedArgs() []any { return h.implied }

// derive is a logger named name with the implied arguments, at h's level.
func (h *hcAdapter) derive(name string, implied []any) *hcAdapter {
	l := h.base
	if name != "" {
		l = l.With("component", name)
	}
	n := &hcAdapter{base: h.base, l: l.With(implied...), name: name, implied: implied}
	n.level.Store(h.level.Load())
	return n
}

func (h *hcAdapter) With(args ...any) hclog.Logger {
	return h.derive(h.name, append(append([]any(nil), h.implied...), args...))
}

func (h *hcAdapter) Name() string { return h.name }

func (h *hcAdapter) Named(name string) hclog.Logger {
	if h.name != "" {
		name = h.name + "." + name
	}
	return h.ResetNamed(name)
}

func (h *hcAdapter) ResetNamed(name string) hclog.Logger { return h.derive(name, h.implied) }

func (h *hcAdapter) SetLevel(lv hclog.Level) { h.level.Store(int32(lv)) }
func (h *hcAdapter) GetLevel() hclog.Level   { return hclog.Level(h.level.Load()) }

func (h *hcAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

// StandardWriter logs each line written to it, at info, or at the level
// its "[LEVEL]" prefix names when opts asks for that.
func (h *hcAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	infer := opts != nil && opts.InferLevels
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			lv := hclog.Info
			if infer {
				for _, p := range []struct {
					tag string
					lv  hclog.Level
				}{{"[TRACE]", hclog.Trace}, {"[DEBUG]", hclog.Debug}, {"[INFO]", hclog.Info}, {"[WARN]", hclog.Warn}, {"[ERR]", hclog.Error}, {"[ERROR]", hclog.Error}} {
					if strings.HasPrefix(line, p.tag) {
						lv, line = p.lv, strings.TrimSpace(strings.TrimPrefix(line, p.tag))
						break
					}
				}
			}
			h.Log(lv, line)
		}
	}()
	return pw
}

var _ hclog.Logger = (*hcAdapter)(nil)
