package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"xce/lib/config/lsfimport"
)

// importLSFCommand is "xced config import-lsf DIR [-o FILE]": it translates
// an LSF configuration directory into xce.toml (stdout, or FILE) and
// writes the report of what it could not translate, and why, to stderr.
// Notes do not make it fail; only a directory it cannot read does.
func importLSFCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "import-lsf DIR",
		Short: "Translate an LSF configuration directory into xce.toml",
		Long: `Read an LSF configuration directory (lsf.conf, lsf.shared, lsf.cluster.NAME,
lsb.params, lsb.hosts, lsb.users, lsb.queues, lsb.applications, lsb.resources;
the lsb.* files may also be under lsbatch/NAME/configdir) and write the
equivalent xce.toml to stdout, or to FILE with -o. Every key that could not be
translated, and why, is reported on stderr, one "FILE:LINE: KEY: why" per line;
queue-level RES_REQ, PRE_EXEC and POST_EXEC are translated and reported as
deprecated. The exit status is 0 whenever the directory could be read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, report, err := lsfimport.Import(args[0])
			if err != nil {
				return err
			}
			if output == "" {
				if _, err := io.WriteString(cmd.OutOrStdout(), text); err != nil {
					return err
				}
			} else if err := os.WriteFile(output, []byte(text), 0o644); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			for _, n := range report {
				fmt.Fprintln(stderr, n)
			}
			fmt.Fprintf(stderr, "import-lsf: %d notes; check the result with \"xced config check\"\n", len(report))
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the xce.toml to `FILE` instead of stdout")
	return cmd
}
