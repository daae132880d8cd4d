package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// printHelp is every command's -h: what it does, its usage line and its
// options as LSF spells them (-l, -noheader, -q queue_name), in the order
// the command defines them, -h and -V last.
func printHelp(c *cobra.Command, _ []string) {
	var b strings.Builder
	if c.Short != "" {
		b.WriteString(c.Short + "\n\n")
	}
	b.WriteString("Usage:\n  " + c.UseLine() + "\n")
	type line struct{ tag, usage string }
	var own, common []line
	width := 0
	fs := c.Flags()
	fs.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		_, usage := pflag.UnquoteUsage(f)
		l := line{tag: "-" + OptionName(f), usage: usage}
		if takesValue(f) {
			l.tag += " " + ArgName(f)
		}
		width = max(width, len(l.tag))
		if l.tag == "-h" || l.tag == "-V" {
			common = append(common, l)
		} else {
			own = append(own, l)
		}
	})
	if lines := append(own, common...); len(lines) > 0 {
		b.WriteString("\nOptions:\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, l.tag, l.usage)
		}
	}
	fmt.Fprint(c.OutOrStderr(), b.String())
}

// OptionName is the word, without its dash, by which LSF names an
// option: the flag's name, "h" for help.
func OptionName(f *pflag.Flag) string {
	if f.Name == "help" && f.Shorthand != "" {
		return f.Shorthand
	}
	return f.Name
}

// argNames name the values of the options most commands share, as LSF's
// pages do.
var argNames = map[string]string{
	"q": "queue_name", "J": "job_name", "u": "user_name", "m": "host_name",
	"P": "project_name", "app": "application_profile", "C": "reason",
}

// argNameKey is the flag annotation that names an option's value where
// the name in argNames, shared by the commands, is not this command's.
const argNameKey = "xce-arg-name"

// setArgName names the value of one command's option for help, man pages
// and completions.
func setArgName(fs *pflag.FlagSet, flag, name string) {
	if err := fs.SetAnnotation(flag, argNameKey, []string{name}); err != nil {
		panic(err) // a flag defined just before
	}
}

// ArgName names an option's value in help and man pages: the name set for
// this command's option, the usage text's `name`, a name LSF's pages
// use, else "number" or "value".
func ArgName(f *pflag.Flag) string {
	if n := f.Annotations[argNameKey]; len(n) == 1 {
		return n[0]
	}
	if n, _ := pflag.UnquoteUsage(f); n != "" && n != "string" && n != "stringArray" && n != "int" {
		return n
	}
	if n := argNames[f.Name]; n != "" {
		return n
	}
	if f.Value.Type() == "int" {
		return "number"
	}
	return "value"
}
