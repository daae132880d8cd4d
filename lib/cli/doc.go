package cli

import (
	"io"
	"sort"
	"sync"

	"github.com/spf13/cobra"
)

// building, when set, receives each command's cobra.Command in execute,
// which then returns at once: nothing is parsed, read or dialed. Commands
// sets it; nothing else may.
var building func(*cobra.Command)

var buildingMu sync.Mutex

// Commands builds every command's cobra.Command, sorted by name, without
// running any: the man pages, the shell completions and the compatibility
// table are generated from (and tested against) these definitions. Each
// command function builds its command as usual and hands it to execute,
// which gives it to building instead of parsing its argv.
func Commands() []*cobra.Command {
	buildingMu.Lock()
	defer buildingMu.Unlock()
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*cobra.Command
	for _, n := range names {
		var got *cobra.Command
		building = func(c *cobra.Command) { got = c }
		commands[n](nil)
		building = nil
		if got == nil {
			continue // a command that never reaches execute has no options to show
		}
		got.SetOut(io.Discard)
		got.SetErr(io.Discard)
		out = append(out, got)
	}
	return out
}
