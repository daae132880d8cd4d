package cli

import "testing"

// Every entry of the commands map reaches execute, so Commands sees all of
// them, named as they are called, each with -h and -V.
func TestCommandsBuildsEveryCommand(t *testing.T) {
	cmds := Commands()
	if len(cmds) != len(commands) {
		t.Fatalf("Commands() built %d commands, the map has %d", len(cmds), len(commands))
	}
	for _, c := range cmds {
		if _, ok := commands[c.Name()]; !ok {
			t.Errorf("command %q is not in the commands map", c.Name())
		}
		for _, f := range []string{"h", "V"} {
			if c.Flags().Lookup(f) == nil && c.Flags().ShorthandLookup(f) == nil {
				t.Errorf("%s has no -%s", c.Name(), f)
			}
		}
	}
}
