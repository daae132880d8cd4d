// Package logging owns how XCE's daemons log: one log/slog handler, text
// or JSON, at the level --log-level names, set as slog's default; and an
// hclog.Logger over that handler for the libraries that take one
// (hashicorp/raft), so that their lines come out in the same format and
// place as the daemon's own instead of beside them.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Formats are the values --log-format takes.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Options are a daemon's logging flags.
type Options struct {
	Format string // text (the default) or json
	Level  string // debug, info (the default), warn or error
}

// New returns a logger writing to w as o says.
func New(w io.Writer, o Options) (*slog.Logger, error) {
	var level slog.Level
	if o.Level != "" {
		if err := level.UnmarshalText([]byte(o.Level)); err != nil {
			return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", o.Level)
		}
	}
	ho := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(o.Format) {
	case "", FormatText:
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case FormatJSON:
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", o.Format)
}

// Setup makes New's logger slog's default (and so the standard log
// package's too).
func Setup(w io.Writer, o Options) error {
	l, err := New(w, o)
	if err != nil {
		return err
	}
	slog.SetDefault(l)
	return nil
}
