package resreq

import "testing"

func TestTry(t *testing.T) {
	for _, s := range []string{
		"select[type==X86_64 && mem>4000] order[r15s:pg] rusage[mem=4000:duration=10] span[hosts=1]",
		"select[mem>] ",
		"swp > 15 && hpux order[ut]",
		"type==any order[ut] same[model] rusage[mem=1]",
		"select[hname!='host06-x12']",
		"select[hname!=host06-x12]",
		"rusage[mem=20:swp=50:duration=1h, license=1:duration=2]",
		"rusage[app_lic_v201=1 || app_lic_v15=1]",
		"span[ptile='!',HP:8,LINUX:2] same[type]",
		"2*{select[type==X86_64] span[hosts=1]} + 8*{span[ptile=4]}",
		"{select[type==LINUX] rusage[mem=8000]} || {select[type==SOL] rusage[mem=4000]}",
		"select[((2*r15s + 3*r1m + r15m) / 6 < 1.0) && !fs && (cpuf > 4.0)]",
		"select[mem>4GB] rusage[mem=4GB]",
		"select[ncpus>4GB]",
		"rusage[mem=(500 300 200):duration=(10 20):decay=(0 1)]",
		"affinity[core(2, same=socket, exclusive=(socket, alljobs)): cpubind=socket:distribute=balance]",
		"select[mem>>100]", "select[mem=>100]", "select[mem>100", "select[mem>100] select[swp>10]",
		"rusage[mem=-5]", "rusage[mem=100:decay=2]", "span[hosts=2]", "order[]", "2*{select[mem>1]} +",
		"cu[type=enclosure:maxcus=2:balance]", "rusage[mem=100] || rusage[swap=100]",
	} {
		r, err := Parse(s)
		if err != nil {
			t.Logf("%-60q ERR %v", s, err)
			continue
		}
		t.Logf("%-60q => %s", s, r)
	}
}
