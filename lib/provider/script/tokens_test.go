package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requestTokens.sh and returnTokens.sh: the loan's resource, count and
// id go in; the units granted come out (at most those asked for).
func TestScriptTokens(t *testing.T) {
	dir := writeScripts(t, map[string]string{
		"requestTokens.sh": `cp "$2" "$(dirname "$0")/borrow.json"; echo '{"granted":5}'`,
		"returnTokens.sh":  `cp "$2" "$(dirname "$0")/giveback.json"; echo '{}'`,
	})
	s := &Script{Dir: dir}
	ctx := context.Background()
	n, err := s.Borrow(ctx, "lic_x", "loan-3", 2)
	if err != nil || n != 2 {
		t.Fatalf("borrow: %d %v", n, err)
	}
	in, _ := os.ReadFile(filepath.Join(dir, "borrow.json"))
	if !strings.Contains(string(in), `{"resource":"lic_x","count":2,"loanId":"loan-3"}`) {
		t.Errorf("requestTokens input: %s", in)
	}
	if err := s.Giveback(ctx, "lic_x", "loan-3", 2); err != nil {
		t.Fatal(err)
	}
	if in, _ := os.ReadFile(filepath.Join(dir, "giveback.json")); !strings.Contains(string(in), `"loanId":"loan-3"`) {
		t.Errorf("returnTokens input: %s", in)
	}
	bad := writeScripts(t, map[string]string{"requestTokens.sh": `echo '{"message":"no licence server"}'`})
	if _, err := (&Script{Dir: bad}).Borrow(ctx, "lic_x", "loan-4", 1); err == nil || !strings.Contains(err.Error(), "no licence server") {
		t.Errorf("an answer without granted: %v", err)
	}
}
