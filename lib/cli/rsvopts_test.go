package cli

import (
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"xce/lib/api"
)

// TestBrsvaddOptions: brsvadd's options become the request, and the
// combinations LSF refuses are refused.
func TestBrsvaddOptions(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.Local)
	parse := func(args ...string) (*api.ReservationRequest, error) {
		fs := pflag.NewFlagSet("brsvadd", pflag.ContinueOnError)
		var o brsvaddOpts
		brsvaddFlags(fs, &o)
		words, err := lsfArgs(fs, args, false)
		if err != nil {
			return nil, err
		}
		if err := fs.Parse(words); err != nil {
			return nil, err
		}
		return o.request(fs.Changed, now)
	}
	base := []string{"-n", "2", "-m", "hostA hostB", "-u", "alice", "-b", "10:00", "-e", "11:30"}
	for _, tc := range []struct {
		args   []string
		err    string
		nosusp bool
		queues []string
		sys    bool
	}{
		{args: base},
		{args: append([]string{"-nosusp"}, base...), nosusp: true},
		{args: append([]string{"-q", "short night"}, base...), queues: []string{"short", "night"}},
		{args: append([]string{"-nosusp", "-q", "short"}, base...), nosusp: true, queues: []string{"short"}},
		{args: []string{"-s", "-q", "short", "-m", "hostA", "-t", "1:0-2:0"}, queues: []string{"short"}, sys: true},
		{args: []string{"-s", "-nosusp", "-m", "hostA", "-t", "1:0-2:0"}, err: "-nosusp cannot be used with -s: it applies to user reservations"},
		{args: append([]string{"-q", " "}, base...), err: "-q needs a queue name"},
		{args: append([]string{"-unit", "rack"}, base...), err: "rack: -unit is slot or host"},
		{args: []string{"-n", "1", "-u", "alice", "-b", "10:00", "-e", "11:00"}, err: "A host list (-m) or a resource requirement (-R) must be specified"},
		{args: append([]string{"-t", "1:0-2:0"}, base...), err: "-t cannot be used with -b or -e"},
		{args: append([]string{"-E", "/bin/true"}, base...), err: "-E, -Et, -Ep and -Ept are not supported: XCE runs no command outside a job; submit the script as a job of the reservation (bsub -U)"},
		{args: append([]string{"-Ep", "/bin/true", "-Ept", "5"}, base...), err: "-E, -Et, -Ep and -Ept are not supported: XCE runs no command outside a job; submit the script as a job of the reservation (bsub -U)"},
		{args: append([]string{"-p"}, base...), err: "-p is not supported: XCE has no dynamically scheduled reservations (brsvsub); give the hosts (-m, -R) and the window"},
		{args: append([]string{"-f"}, base...), err: "-f is not supported: give the hosts (-m, -R); brsvmod addhost and rmhost change them later"},
	} {
		req, err := parse(tc.args...)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		r := req.Rsv
		if r.NoSusp != tc.nosusp || !slices.Equal(r.Queues, tc.queues) || (r.Type == "sys") != tc.sys {
			t.Errorf("%q: nosusp %v queues %q type %q", tc.args, r.NoSusp, r.Queues, r.Type)
		}
		if !tc.sys && (req.Slots != 2 || len(r.Hosts) != 2 || r.Begin != now.Add(time.Hour).Unix() || r.End != now.Add(150*time.Minute).Unix()) {
			t.Errorf("%q: slots %d hosts %v window %d-%d", tc.args, req.Slots, r.Hosts, r.Begin, r.End)
		}
	}
}

// TestBrsvmodSuspOptions: brsvmod -nosusp/-nosuspn and -q/-qn.
func TestBrsvmodSuspOptions(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		err    string
		fields []string
		nosusp bool
		queues []string
	}{
		{args: []string{"-nosusp"}, fields: []string{"no_susp"}, nosusp: true},
		{args: []string{"-nosuspn"}, fields: []string{"no_susp"}},
		{args: []string{"-q", "short"}, fields: []string{"queues"}, queues: []string{"short"}},
		{args: []string{"-qn"}, fields: []string{"queues"}},
		{args: []string{"-nosusp", "-qn"}, fields: []string{"no_susp", "queues"}, nosusp: true},
		{args: []string{"-nosusp", "-nosuspn"}, err: "-nosusp and -nosuspn cannot be used together"},
		{args: []string{"-q", "short", "-qn"}, err: "-q and -qn cannot be used together"},
		{args: []string{"-q", ""}, err: "-q needs a queue name"},
		{args: nil},
	} {
		fs := pflag.NewFlagSet("brsvmod", pflag.ContinueOnError)
		var so rsvSuspMod
		fs.BoolVar(&so.nosusp, "nosusp", false, "")
		fs.BoolVar(&so.nosuspn, "nosuspn", false, "")
		fs.StringVar(&so.queues, "q", "", "")
		fs.BoolVar(&so.qn, "qn", false, "")
		words, err := lsfArgs(fs, tc.args, false)
		if err == nil {
			err = fs.Parse(words)
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		req := &api.ReservationRequest{Rsv: &api.Reservation{}}
		err = so.apply(fs.Changed, req)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(req.Fields, tc.fields) || req.Rsv.NoSusp != tc.nosusp || !slices.Equal(req.Rsv.Queues, tc.queues) {
			t.Errorf("%q: %v fields %q nosusp %v queues %q", tc.args, err, req.Fields, req.Rsv.NoSusp, req.Rsv.Queues)
		}
		if so.any(fs.Changed) != (len(tc.args) > 0) {
			t.Errorf("%q: any %v", tc.args, so.any(fs.Changed))
		}
	}
}
