// Package script is the "script" provider: LSF resource connector's
// provider plugin interface (the host factory contract), so that a site
// keeps the provider scripts it has. Each operation is a program in the
// provider's script_dir, called as `NAME.sh -f INPUT.json`, answering JSON
// on its standard output:
//
//	requestMachines.sh       {"template":{"templateId":T,"machineCount":N},"xce":{"hosts":[...]}}
//	                         -> {"requestId":R,"message":...}
//	getRequestStatus.sh      {"requests":[{"requestId":R}]}
//	                         -> {"requests":[{"requestId":R,"status":"running|complete|complete_with_error",
//	                             "machines":[{"machineId":M,"name":HOST,"status":...,"result":"executing|succeed|fail"}]}]}
//	requestReturnMachines.sh {"machines":[{"name":HOST,"machineId":M}]} -> {"requestId":R,"message":...}
//	getReturnRequests.sh     {"machines":[{"name":HOST,"machineId":M}]}
//	                         -> {"requests":[{"machine":HOST,"gracePeriod":S}]} (the machines the provider wants back)
//	getAvailableTemplates.sh {} -> {"templates":[{"templateId":T,"maxNumber":N,"attributes":{...}}]}
//
// and, XCE's own, for a shared resource the provider lends units of
// ([resources.NAME] provider; both called again with the same loanId
// after a restart, so they must be safe to repeat):
//
//	requestTokens.sh         {"resource":R,"count":N,"loanId":ID} -> {"granted":G,"message":...} (G of N lent)
//	returnTokens.sh          {"resource":R,"count":N,"loanId":ID} -> {} (the loan's units back)
//
// XCE names the hosts it wants (the "xce" member of requestMachines'
// input, which LSF's scripts ignore); a machine whose name differs is
// matched to the request's instances in the order the script lists them.
// A script that exits non-zero, prints no JSON or runs past the call's
// deadline is an error whose text says which and shows its stderr.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"xce/lib/config"
	"xce/lib/provider"
)

// Script calls the provider scripts of Dir.
type Script struct {
	Dir string
	// Timeout bounds one script (default 60 s); a deadline of the
	// context that comes earlier wins.
	Timeout time.Duration
}

var _ provider.Provider = (*Script)(nil)

// call runs NAME.sh -f input.json and decodes its standard output into out.
func (s *Script) call(ctx context.Context, name string, in, out any) error {
	d := s.Timeout
	if d <= 0 {
		d = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	f, err := os.CreateTemp("", "xce-rc-*.json")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer os.Remove(f.Name())
	if err := json.NewEncoder(f).Encode(in); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	f.Close()
	prog := filepath.Join(s.Dir, name)
	cmd := exec.Command(prog, "-f", f.Name())
	cmd.Dir = s.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group, so that a script that hangs is ended with
	// everything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", prog, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("%s did not answer in time (killed)%s", prog, tail(stderr.String()))
	}
	if err != nil {
		return fmt.Errorf("%s failed: %v%s", prog, err, tail(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("%s printed no JSON answer (%v)%s", prog, err, tail(stderr.String()))
	}
	return nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = "..." + s[len(s)-300:]
	}
	return ": " + s
}

type machineRef struct {
	Name      string `json:"name"`
	MachineID string `json:"machineId,omitempty"`
}

// Request calls requestMachines.sh.
func (s *Script) Request(ctx context.Context, t *config.Template, insts []provider.Instance) (string, error) {
	var hosts []string
	for _, in := range insts {
		hosts = append(hosts, in.Host)
	}
	in := map[string]any{
		"template": map[string]any{"templateId": t.Name, "machineCount": len(insts)},
		"xce":      map[string]any{"hosts": hosts},
	}
	var out struct {
		RequestID string `json:"requestId"`
		Message   string `json:"message"`
	}
	if err := s.call(ctx, "requestMachines.sh", in, &out); err != nil {
		return "", err
	}
	if out.RequestID == "" {
		return "", fmt.Errorf("requestMachines.sh gave no requestId: %s", out.Message)
	}
	return out.RequestID, nil
}

// Status calls getRequestStatus.sh for the request.
func (s *Script) Status(ctx context.Context, req string, insts []provider.Instance) ([]provider.Machine, error) {
	if req == "" {
		out := make([]provider.Machine, 0, len(insts))
		for _, in := range insts {
			out = append(out, provider.Machine{Instance: in, Status: provider.Running}) // unknown to ask; assume it runs
		}
		return out, nil
	}
	var out struct {
		Requests []struct {
			RequestID string `json:"requestId"`
			Status    string `json:"status"`
			Message   string `json:"message"`
			Machines  []struct {
				MachineID string `json:"machineId"`
				Name      string `json:"name"`
				Status    string `json:"status"`
				Result    string `json:"result"`
				Message   string `json:"message"`
			} `json:"machines"`
		} `json:"requests"`
	}
	if err := s.call(ctx, "getRequestStatus.sh", map[string]any{"requests": []map[string]string{{"requestId": req}}}, &out); err != nil {
		return nil, err
	}
	byName := map[string]provider.Instance{}
	for _, in := range insts {
		byName[in.Host] = in
	}
	// A machine under another name takes the first instance that no
	// machine of the answer names (each instance once).
	named := map[string]bool{}
	for _, r := range out.Requests {
		for _, m := range r.Machines {
			if _, ok := byName[m.Name]; ok && r.RequestID == req {
				named[m.Name] = true
			}
		}
	}
	var spare []provider.Instance
	for _, in := range insts {
		if !named[in.Host] {
			spare = append(spare, in)
		}
	}
	var ms []provider.Machine
	for _, r := range out.Requests {
		if r.RequestID != req {
			continue
		}
		for _, m := range r.Machines {
			in, ok := byName[m.Name]
			if !ok {
				if len(spare) == 0 {
					continue
				}
				in, spare = spare[0], spare[1:]
			}
			st := provider.Booting
			switch {
			case m.Result == "fail":
				st = provider.Failed
			case m.Status == "terminated" || m.Status == "shutting-down" || m.Status == "stopped":
				st = provider.Terminated
			case m.Result == "succeed" || m.Status == "running":
				st = provider.Running
			}
			ms = append(ms, provider.Machine{Instance: in, Status: st, Message: m.Message})
		}
		if r.Status == "complete_with_error" && len(r.Machines) == 0 {
			for _, in := range insts {
				ms = append(ms, provider.Machine{Instance: in, Status: provider.Failed, Message: r.Message})
			}
		}
	}
	return ms, nil
}

// Return calls requestReturnMachines.sh.
func (s *Script) Return(ctx context.Context, insts []provider.Instance) error {
	var refs []machineRef
	for _, in := range insts {
		refs = append(refs, machineRef{Name: in.Host, MachineID: in.ID})
	}
	var out struct {
		RequestID string `json:"requestId"`
		Message   string `json:"message"`
	}
	if err := s.call(ctx, "requestReturnMachines.sh", map[string]any{"machines": refs}, &out); err != nil {
		return err
	}
	return nil
}

// Reclaimed calls getReturnRequests.sh: the hosts among insts the
// provider wants back (a spot instance reclaimed).
func (s *Script) Reclaimed(ctx context.Context, insts []provider.Instance) ([]string, error) {
	var refs []machineRef
	for _, in := range insts {
		refs = append(refs, machineRef{Name: in.Host, MachineID: in.ID})
	}
	var out struct {
		Requests []struct {
			Machine string `json:"machine"`
		} `json:"requests"`
	}
	if err := s.call(ctx, "getReturnRequests.sh", map[string]any{"machines": refs}, &out); err != nil {
		return nil, err
	}
	var hosts []string
	for _, r := range out.Requests {
		hosts = append(hosts, r.Machine)
	}
	return hosts, nil
}

// Templates calls getAvailableTemplates.sh: the template ids the
// provider offers, with their maxNumber.
func (s *Script) Templates(ctx context.Context) (map[string]int, error) {
	var out struct {
		Templates []struct {
			TemplateID string `json:"templateId"`
			MaxNumber  int    `json:"maxNumber"`
		} `json:"templates"`
	}
	if err := s.call(ctx, "getAvailableTemplates.sh", map[string]any{}, &out); err != nil {
		return nil, err
	}
	if out.Templates == nil {
		return nil, errors.New("getAvailableTemplates.sh listed no templates")
	}
	m := map[string]int{}
	for _, t := range out.Templates {
		m[t.TemplateID] = t.MaxNumber
	}
	return m, nil
}

var _ provider.Lender = (*Script)(nil)

// loanInput is requestTokens.sh's and returnTokens.sh's input.
type loanInput struct {
	Resource string `json:"resource"`
	Count    int    `json:"count"`
	LoanID   string `json:"loanId"`
}

// Borrow calls requestTokens.sh: {"resource":R,"count":N,"loanId":ID}
// -> {"granted":G,"message":...}.
func (s *Script) Borrow(ctx context.Context, resource, id string, n int) (int, error) {
	var out struct {
		Granted *int   `json:"granted"`
		Message string `json:"message"`
	}
	if err := s.call(ctx, "requestTokens.sh", loanInput{Resource: resource, Count: n, LoanID: id}, &out); err != nil {
		return 0, err
	}
	if out.Granted == nil {
		return 0, fmt.Errorf("requestTokens.sh gave no granted count: %s", out.Message)
	}
	return min(max(0, *out.Granted), n), nil
}

// Giveback calls returnTokens.sh: {"resource":R,"count":N,"loanId":ID} ->
// any JSON object.
func (s *Script) Giveback(ctx context.Context, resource, id string, n int) error {
	var out map[string]any
	return s.call(ctx, "returnTokens.sh", loanInput{Resource: resource, Count: n, LoanID: id}, &out)
}
