package cli

import (
	"fmt"
	"time"

	"xce/lib/lsfenv"
	"xce/lib/lsfout"
)

// lsadmin is LSF's LIM administration command, for what XCE has of it:
// ckconfig (the configuration check of badmin ckconfig, lsf.conf
// included) and showconf lim (the lsf.conf parameters in force; mbd is
// accepted too, as badmin showconf mbd). XCE has no LIM or RES daemons to
// start, stop or reconfigure.
func lsadmin(args []string) int {
	var verbose bool
	var words []string
	cmd, code := newCommand("lsadmin ckconfig [-v] | showconf lim [host_name ... | all] | showconf mbd",
		"Check the configuration and show the LSF parameters in force", func(a []string) int {
			words = a
			return 0
		})
	cmd.Flags().BoolVar(&verbose, "v", false, "ckconfig: say what the check found")
	cmd.ValidArgs = []string{"ckconfig", "showconf"} // for the shell completions
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(words) == 0 {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	switch words[0] {
	case "ckconfig":
		if len(words) > 1 {
			fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
			return 255
		}
		if _, err := lsfenv.Load(sys.getenv); err != nil {
			fmt.Fprintln(sys.stdout, "\nChecking configuration files ...")
			fmt.Fprintln(sys.stdout, "There are fatal errors.")
			fmt.Fprintln(sys.stdout)
			fmt.Fprintln(sys.stdout, err)
			return 255
		}
		return reconfig(true, verbose)
	case "showconf":
		return showConf("lsadmin", words[1:], cmd.Use)
	}
	fmt.Fprintf(sys.stderr, "%s: Invalid command\nUsage: %s\n", words[0], cmd.Use)
	return 255
}

// showConf is lsadmin showconf and badmin showconf: the daemon's name,
// then for lim and sbd optionally hosts (or all): the parameters of
// lsf.conf ($LSF_ENVDIR/lsf.conf) in force, one block per host named.
// Every XCE daemon reads the same lsf.conf, so every block is the same.
func showConf(command string, words []string, usage string) int {
	daemons := map[string]map[string]string{
		"lsadmin": {"lim": "LIM", "mbd": "MBD"},
		"badmin":  {"mbd": "MBD", "sbd": "SBD"},
	}[command]
	if len(words) == 0 || daemons[words[0]] == "" {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", usage)
		return 255
	}
	daemon, hosts := daemons[words[0]], words[1:]
	if daemon == "MBD" && len(hosts) > 0 {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", usage)
		return 255
	}
	conf, err := lsfenv.Load(sys.getenv)
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	var settings []lsfout.Setting
	for _, k := range conf.Keys() {
		settings = append(settings, lsfout.Setting{Name: k, Value: conf.Get(k)})
	}
	now := time.Now()
	if len(hosts) == 1 && hosts[0] == "all" {
		hosts = nil
	}
	if len(hosts) == 0 {
		hosts = []string{""}
	}
	for _, h := range hosts {
		if err := lsfout.WriteShowConf(sys.stdout, daemon, h, settings, now); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
	}
	return 0
}
