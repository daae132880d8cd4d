package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"xce/lib/atomicfile"
	"xce/lib/client"
	"xce/lib/store"
)

// The store commands: xced store check|recover|backup|restore. They work
// on DIR/db with xced stopped (they take its lock), except backup, which
// asks a running xced for the copy over its admin socket.

// adminSocketName is a socket only xced's own user (root) may use.
const adminSocketName = "xced.admin"

func storeCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{Use: "store", Short: "Check, recover, back up and restore xced's job store"}
	cmd.PersistentFlags().StringVar(&dir, "dir", "", "xced's state directory (default: "+client.DefaultDir()+")")
	stateDir := func() (string, error) {
		if dir == "" {
			dir = client.DefaultDir()
		}
		return filepath.Abs(dir)
	}
	// locked runs fn on the state directory with xced's lock held, so
	// that no xced runs on the store meanwhile.
	locked := func(fn func(d string) error) error {
		d, err := stateDir()
		if err != nil {
			return err
		}
		lock, err := lockForTool(d)
		if err != nil {
			return err
		}
		defer lock.Close()
		return fn(d)
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Check the store for damage (exit 0: whole, 1: damaged or not checked)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return locked(func(d string) error {
				problems, err := store.Check(filepath.Join(d, "db"))
				if err != nil {
					return err
				}
				if len(problems) == 0 {
					fmt.Fprintf(c.OutOrStdout(), "The job store %s is whole.\n", filepath.Join(d, "db"))
					return nil
				}
				for _, p := range problems {
					fmt.Fprintf(c.OutOrStdout(), "damaged: %s\n", p)
				}
				return fmt.Errorf("the job store %s is damaged; `xced store recover --dir %s` salvages what is intact", filepath.Join(d, "db"), d)
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "recover",
		Short: "Salvage what is intact into a fresh store, keeping the damaged one aside",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return locked(func(d string) error {
				db := filepath.Join(d, "db")
				aside := db + ".damaged-" + time.Now().Format("20060102-150405")
				if err := os.Rename(db, aside); err != nil {
					return fmt.Errorf("move the damaged store aside: %w", err)
				}
				rep, err := store.Salvage(aside, db)
				if err != nil {
					os.RemoveAll(db)
					if rerr := os.Rename(aside, db); rerr != nil {
						return fmt.Errorf("%w (and the damaged store stays at %s: %v)", err, aside, rerr)
					}
					return err
				}
				out := c.OutOrStdout()
				for _, p := range rep.Damage {
					fmt.Fprintf(out, "damaged: %s\n", p)
				}
				fmt.Fprintf(out, "Salvaged %d records: %d live jobs, %d submissions (job id ceiling %d).\n", rep.Keys, rep.Jobs, rep.Submissions, rep.Ceiling)
				if rep.StoppedWith >= 0 {
					fmt.Fprintf(out, "At its last clean stop the store held %d live jobs: %d lost.\n", rep.StoppedWith, max(0, rep.StoppedWith-int64(rep.Jobs)))
				}
				for _, l := range rep.Dropped {
					fmt.Fprintf(out, "lost: %s\n", l)
				}
				fmt.Fprintf(out, "The damaged store is kept at %s.\n", aside)
				return nil
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the store to FILE (also while xced runs)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			d, err := stateDir()
			if err != nil {
				return err
			}
			return backup(d, args[0], c.OutOrStdout())
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the store with a backup (xced stopped; the current store is kept aside)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return locked(func(d string) error {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				db := filepath.Join(d, "db")
				ceiling := store.RecordedCeiling(db)
				tmp := db + ".restoring"
				os.RemoveAll(tmp)
				jobs, err := store.Restore(bufio.NewReader(f), tmp, ceiling)
				if err != nil {
					os.RemoveAll(tmp)
					return err
				}
				aside := ""
				if _, err := os.Stat(db); err == nil {
					aside = db + ".before-restore-" + time.Now().Format("20060102-150405")
					if err := os.Rename(db, aside); err != nil {
						return fmt.Errorf("move the current store aside: %w", err)
					}
				}
				if err := os.Rename(tmp, db); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "Restored %d live jobs from %s.\n", jobs, args[0])
				if aside != "" {
					fmt.Fprintf(c.OutOrStdout(), "The previous store is kept at %s.\n", aside)
				}
				return nil
			})
		},
	})
	return cmd
}

// lockForTool takes the state directory's lock for a store command: xced
// must not be running on it.
func lockForTool(dir string) (*os.File, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	lock, err := lockStateDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: stop it first (xced store backup works while it runs)", err)
	}
	return lock, nil
}

// backup writes the store to file: through a running xced's admin socket,
// or from the store itself when xced is stopped.
func backup(dir, file string, out io.Writer) error {
	var how string
	err := atomicfile.WriteFunc(file, 0o600, true, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		var err error
		if how, err = writeBackup(dir, w); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	fi, _ := os.Stat(file)
	fmt.Fprintf(out, "Backed up the job store to %s (%d bytes, %s).\n", file, fi.Size(), how)
	return nil
}

func writeBackup(dir string, w io.Writer) (string, error) {
	conn, err := net.Dial("unix", filepath.Join(dir, adminSocketName))
	if err == nil {
		defer conn.Close()
		if _, err := io.WriteString(conn, "backup\n"); err != nil {
			return "", err
		}
		return "online, from the running xced", readChunks(bufio.NewReader(conn), w)
	}
	lock, lerr := lockStateDir(dir)
	if lerr != nil {
		return "", fmt.Errorf("xced is running but its admin socket does not answer (%v)", err)
	}
	defer lock.Close()
	st, err := store.Open(filepath.Join(dir, "db"))
	if err != nil {
		return "", err
	}
	defer st.Close()
	return "xced stopped", st.Backup(w)
}

// The admin socket's backup answer: chunks of [length:4][bytes], then a
// zero length and a status line ("ok" or the error), so that a backup cut
// short is an error, not a short file.

type chunkWriter struct{ w io.Writer }

func (c chunkWriter) Write(p []byte) (int, error) {
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], uint32(len(p)))
	if _, err := c.w.Write(h[:]); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

func readChunks(r *bufio.Reader, w io.Writer) error {
	var h [4]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return fmt.Errorf("the backup was cut short: %w", err)
		}
		n := binary.BigEndian.Uint32(h[:])
		if n == 0 {
			break
		}
		if _, err := io.CopyN(w, r, int64(n)); err != nil {
			return fmt.Errorf("the backup was cut short: %w", err)
		}
	}
	status, _ := r.ReadString('\n')
	if status = strings.TrimSpace(status); status != "ok" {
		return fmt.Errorf("xced: %s", status)
	}
	return nil
}

// serveAdmin answers backup requests from xced's own user on DIR/xced.admin.
func serveAdmin(dir string, st *store.Store) (func(), error) {
	path := filepath.Join(dir, adminSocketName)
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveAdminConn(conn.(*net.UnixConn), st)
		}
	}()
	return func() { ln.Close(); os.Remove(path) }, nil
}

func serveAdminConn(conn *net.UnixConn, st *store.Store) {
	defer conn.Close()
	raw, err := conn.SyscallConn()
	if err != nil {
		return
	}
	var cred *unix.Ucred
	raw.Control(func(fd uintptr) { cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if err != nil || cred == nil || (cred.Uid != 0 && int(cred.Uid) != os.Geteuid()) {
		return
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "backup" {
		return
	}
	w := bufio.NewWriter(conn)
	status := "ok"
	if err := st.Backup(chunkWriter{w}); err != nil {
		status = err.Error()
		slog.Error("backup failed", "err", err)
	} else {
		slog.Info("store backed up through the admin socket")
	}
	w.Write([]byte{0, 0, 0, 0})
	w.WriteString(status + "\n")
	if err := w.Flush(); err != nil && !errors.Is(err, net.ErrClosed) {
		slog.Warn("backup not delivered", "err", err)
	}
}
