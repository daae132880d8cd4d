package hostload

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"xce/lib/api"
)

// Fill copies a sample's load indices into the host's load fields, as
// lsload, bhosts -l and the scheduler read them; an index the host does
// not give stays unset.
func Fill(h *api.Host, ix Indices) {
	h.R15S, h.R1M, h.R15M, h.Ut = ix.R15s, ix.R1m, ix.R15m, ix.Ut
	h.MemKb, h.SwpKb, h.MaxswpKb, h.TmpKb, h.MaxtmpKb = ix.MemKB, ix.SwpKB, ix.MaxSwpKB, ix.TmpKB, ix.MaxTmpKB
	h.LoadMeasured = ix.Have&(HaveMem|HaveSwp|HaveTmp) != 0
	h.Pg, h.Io, h.Ls, h.It = nil, nil, nil, nil
	if ix.Have&HavePg != 0 {
		h.Pg = &ix.Pg
	}
	if ix.Have&HaveIo != 0 {
		h.Io = &ix.Io
	}
	if ix.Have&HaveLs != 0 {
		ls := int32(ix.Ls)
		h.Ls = &ls
	}
	if ix.Have&HaveIt != 0 {
		h.It = &ix.It
	}
	t := CPUTopology()
	h.Nprocs, h.Ncores, h.Nthreads = t[0], t[1], t[2]
}

// CPUTopology is this host's sockets, cores per socket and threads per
// core, from /proc/cpuinfo (zeros when it does not say).
var CPUTopology = sync.OnceValue(func() [3]int32 {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return [3]int32{}
	}
	sockets := map[string]bool{}
	var cores, siblings int
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "physical id":
			sockets[v] = true
		case "cpu cores":
			cores, _ = strconv.Atoi(v)
		case "siblings":
			siblings, _ = strconv.Atoi(v)
		}
	}
	if len(sockets) == 0 || cores == 0 {
		return [3]int32{}
	}
	return [3]int32{int32(len(sockets)), int32(cores), int32(max(1, siblings/cores))}
})

// The host type and model lshosts shows when the configuration names
// none: LSF's names for the machine's architecture.
func DetectedType() string {
	switch runtime.GOARCH {
	case "amd64":
		return "X86_64"
	case "arm64":
		return "LINUXARM64"
	case "ppc64le":
		return "LINUXPPC64LE"
	}
	return strings.ToUpper(runtime.GOARCH)
}

// DetectedModel is the host's model when the configuration names none.
func DetectedModel() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}
