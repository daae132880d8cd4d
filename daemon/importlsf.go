package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"xce/lib/config/lsfimport"
)

// importLSFCommand is "xced config import-lsf DIR [-o FILE] [--accept-loss]":
// it translates an LSF configuration directory into xce.toml (stdout, or
// FILE) and writes the report of what it could not translate, and why,
// to stderr. Policy it cannot translate (a limit, an access list, a
// resource requirement: what changes who may run what) fails the import,
// with no xce.toml written, unless --accept-loss is given; other notes do
// not.
func importLSFCommand() *cobra.Command {
	var output string
	var acceptLoss bool
	cmd := &cobra.Command{
		Use:   "import-lsf DIR",
		Short: "Translate an LSF configuration directory into xce.toml",
		Long: `Read an LSF configuration directory (lsf.conf, lsf.shared, lsf.cluster.NAME,
lsb.params, lsb.hosts, lsb.users, lsb.queues, lsb.applications, lsb.resources;
the lsb.* files may also be under lsbatch/NAME/configdir) and write the
equivalent xce.toml to stdout, or to FILE with -o. Every key that could not be
translated, and why, is reported on stderr, one "FILE:LINE: KEY: why" per line;
queue-level RES_REQ, PRE_EXEC and POST_EXEC are translated and reported as
deprecated.

Policy that cannot be translated and changes who may run what (a Limit, a
user or host list, a resource requirement, a slot limit) is reported as
"policy lost" and fails the import: nothing is written and the exit status
is 1, so that a cluster does not start with less policy than LSF had. With
--accept-loss the xce.toml is written without it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, report, err := lsfimport.Import(args[0])
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			losses := 0
			for _, n := range report {
				fmt.Fprintln(stderr, n)
				if n.Loss {
					losses++
				}
			}
			if losses > 0 && !acceptLoss {
				cmd.SilenceUsage = true
				return fmt.Errorf("import-lsf: %d items of policy cannot be translated (\"policy lost\" above); nothing was written: change the LSF files, or pass --accept-loss to import without them", losses)
			}
			if output == "" {
				if _, err := io.WriteString(cmd.OutOrStdout(), text); err != nil {
					return err
				}
			} else if err := os.WriteFile(output, []byte(text), 0o644); err != nil {
				return err
			}
			if losses > 0 {
				fmt.Fprintf(stderr, "import-lsf: %d notes, %d items of policy lost (accepted); check the result with \"xced config check\"\n", len(report), losses)
			} else {
				fmt.Fprintf(stderr, "import-lsf: %d notes; check the result with \"xced config check\"\n", len(report))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the xce.toml to `FILE` instead of stdout")
	cmd.Flags().BoolVar(&acceptLoss, "accept-loss", false, "write the xce.toml even when policy that changes who may run what cannot be translated")
	return cmd
}
