package lsfimport

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// show renders a parsed file compactly for comparison.
func show(f *File, notes []Note) string {
	var b strings.Builder
	for _, p := range f.Params {
		b.WriteString(p.Key + "=" + p.Value + "@" + strconv.Itoa(p.Line) + "\n")
	}
	for _, s := range f.Sections {
		b.WriteString("[" + s.Name + "@" + strconv.Itoa(s.Line) + "]\n")
		for _, p := range s.Params {
			b.WriteString(p.Key + "=" + p.Value + "@" + strconv.Itoa(p.Line) + "\n")
		}
		if s.Columns != nil {
			b.WriteString("cols " + strings.Join(s.Columns, "|") + "\n")
		}
		for _, r := range s.Rows {
			b.WriteString("row " + strings.Join(r.Fields, "|") + "@" + strconv.Itoa(r.Line) + "\n")
		}
	}
	for _, n := range notes {
		b.WriteString("note " + n.String() + "\n")
	}
	return b.String()
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"keyword section", `
Begin Queue
QUEUE_NAME   = normal   # trailing comment
PRIORITY=30
# a whole-line comment
DESCRIPTION = "For normal jobs"
End Queue
`, "[Queue@2]\nQUEUE_NAME=normal@3\nPRIORITY=30@4\nDESCRIPTION=For normal jobs@6\n"},
		{"continuation", "Begin Queue\nDESCRIPTION = two \\\n   lines \\\n   joined\nNICE = 5\nEnd Queue\n",
			"[Queue@1]\nDESCRIPTION=two     lines     joined@2\nNICE=5@5\n"},
		{"quotes keep # and inner quotes", "Begin Application\nJOB_STARTER = wrap \"%USRCMD # not a comment\"\nEnv_VARS = \"A='x'\"\nEnd Application\n",
			"[Application@1]\nJOB_STARTER=wrap \"%USRCMD # not a comment\"@2\nEnv_VARS=A='x'@3\n"},
		{"table section", `
Begin HostGroup
GROUP_NAME   GROUP_MEMBER      # Key words
bigmem       (hostA hostB)
empty        ()
linux        (all ~hostC)
End HostGroup
`, "[HostGroup@2]\ncols GROUP_NAME|GROUP_MEMBER\nrow bigmem|(hostA hostB)@4\nrow empty|()@5\nrow linux|(all ~hostC)@6\n"},
		{"short rows, brackets, quoted fields", `
Begin UserGroup
GROUP_NAME  GROUP_MEMBER   USER_SHARES
groupA      (u1 u2)        ([u1, 5] [default,1])
groupB      (groupA)
groupC      "a b"          -
End UserGroup
`, "[UserGroup@2]\ncols GROUP_NAME|GROUP_MEMBER|USER_SHARES\nrow groupA|(u1 u2)|([u1, 5] [default,1])@4\nrow groupB|(groupA)|@5\nrow groupC|\"a b\"|-@6\n"},
		{"too many fields", "Begin Host\nA B\nx y z\nEnd Host\n",
			"[Host@1]\ncols A|B\nrow x|y@3\nnote f:3: Host: row has 3 fields for 2 columns; the extra ones are ignored\n"},
		{"case of Begin and End", "BEGIN Parameters\nX = 1\nend parameters\n", "[Parameters@1]\nX=1@2\n"},
		{"keywords outside sections (lsf.conf)", "LSF_UNIT_FOR_LIMITS=MB\nLSF_ENVDIR = \"/etc/lsf\"\n",
			"LSF_UNIT_FOR_LIMITS=MB@1\nLSF_ENVDIR=/etc/lsf@2\n"},
		{"missing End", "Begin Queue\nQUEUE_NAME = a\nBegin Queue\nQUEUE_NAME = b\n",
			"[Queue@1]\nQUEUE_NAME=a@2\n[Queue@3]\nQUEUE_NAME=b@4\nnote f:1: Queue: section has no End line before line 3; ended there\nnote f:3: Queue: section has no End line; ended at the end of the file\n"},
		{"End without Begin, mismatched End", "End Queue\nBegin Limit\nSLOTS = 1\nEnd Queue\n",
			"[Limit@2]\nSLOTS=1@3\nnote f:1: Queue: End without Begin; ignored\nnote f:4: Limit: section ended by End Queue; taken as its end\n"},
		{"junk", "what is this\nBegin Parameters\nA = 1\nnot a key\nEnd Parameters\n",
			"[Parameters@2]\nA=1@3\nnote f:1: line outside any section ignored: \"what is this\"\nnote f:4: Parameters: not a KEY = VALUE line in a keyword section; ignored: \"not a key\"\n"},
		{"include not followed by Parse", "#INCLUDE \"other\"\n", "note f:1: #INCLUDE: policy lost: not followed: other\n"},
		{"CRLF", "Begin Parameters\r\nA = 1\r\nEnd Parameters\r\n", "[Parameters@1]\nA=1@2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, notes := Parse("f", []byte(tt.in))
			if got := show(f, notes); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestReadFileInclude(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "queues.inc"), []byte("Begin Queue\nQUEUE_NAME = inc\nEnd Queue\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "lsb.queues"), []byte("Begin Queue\nQUEUE_NAME = a\nEnd Queue\n#INCLUDE \"queues.inc\"\n#INCLUDE \"missing.inc\"\n"), 0o644)
	f, notes, err := ReadFile(filepath.Join(dir, "lsb.queues"), "lsb.queues")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sections) != 2 || f.Sections[1].Params[0].Value != "inc" || f.Sections[1].File != "queues.inc" || f.Sections[1].Line != 1 {
		t.Errorf("sections: %s", show(f, nil))
	}
	if len(notes) != 1 || notes[0].Line != 5 || !strings.Contains(notes[0].Msg, "cannot read the included file") {
		t.Errorf("notes: %v", notes)
	}
	if _, _, err := ReadFile(filepath.Join(dir, "nothing"), "nothing"); err == nil {
		t.Error("a missing file is not an error")
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"(hostA hostB)", []string{"hostA", "hostB"}},
		{"hostA  hostB", []string{"hostA", "hostB"}},
		{"()", nil},
		{"( )", nil},
		{"-", nil},
		{"", nil},
		{"([user1, 5] [default,1])", []string{"[user1, 5]", "[default,1]"}},
		{"(os_version=rhel8 bigmem)", []string{"os_version=rhel8", "bigmem"}},
		{`("a b" c)`, []string{`"a b"`, "c"}},
		{"(gpu[01-16])", []string{"gpu[01-16]"}},
	}
	for _, tt := range tests {
		if got := List(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("List(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for in, want := range map[string]bool{"": true, "-": true, "()": true, "( )": true, "!": false, "0": false, "(a)": false} {
		if Empty(in) != want {
			t.Errorf("Empty(%q) = %v", in, !want)
		}
	}
}

func TestExpandRange(t *testing.T) {
	if got := expandRange("gpu[08-11]"); !reflect.DeepEqual(got, []string{"gpu08", "gpu09", "gpu10", "gpu11"}) {
		t.Errorf("got %q", got)
	}
	if got := expandRange("node1"); !reflect.DeepEqual(got, []string{"node1"}) {
		t.Errorf("got %q", got)
	}
}
