package gpu

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Keys says which keywords a requirement string sets; merging takes each
// keyword from the highest level that sets it.
type Keys uint32

// The -gpu keywords.
const (
	KeyNum Keys = 1 << iota
	KeyMode
	KeyMPS
	KeyJExclusive
	KeyAff
	KeyBlock
	KeyGpack
	KeyVendor
	KeyModel
	KeyMem
	KeyTile
	KeyLink
	KeyMIG
)

// basicKeys are the keywords every IBM statement of the merge rule merges
// one by one (num, mode, mps, j_exclusive).
const basicKeys = KeyNum | KeyMode | KeyMPS | KeyJExclusive

// GPU compute modes (mode=).
const (
	ModeShared           = "shared"
	ModeExclusiveProcess = "exclusive_process"
)

// Req is one GPU requirement: a bsub -gpu string, a queue's or an
// application profile's GPU_REQ, or the cluster's LSB_GPU_REQ. Only the
// keywords in Set were written; the other fields hold their zero value
// until Effective fills in LSF's defaults.
type Req struct {
	Set Keys
	// Dash: the string was "-" (no job-level requirement: use the
	// effective one of the cluster, queue and profile).
	Dash bool

	Num     int  // num=N: physical GPUs per host (per task with PerTask)
	PerTask bool // num=N/task
	Mode    string
	// MPS is "no", or "yes", "per_socket" or "per_gpu", each optionally
	// followed by ",shared" and ",nocvd" (in that order; IBM's ",share"
	// is read as ",shared").
	MPS        string
	JExclusive bool
	Aff        bool
	Block      bool
	Gpack      bool
	Vendor     string // gvendor: nvidia or amd
	// Model is gmodel's name: a full LSF model name (TeslaV100_SXM2_32GB),
	// a brand (Tesla) or a type (V100); see ModelMatches.
	Model string
	// ModelMemMB is gmodel's -mem_size (in GPU_REQ files #mem_size), in
	// MB; ModelMemText is how it was written. 0: none.
	ModelMemMB   float64
	ModelMemText string
	// MemMB is gmem, the GPU memory reserved on each allocated GPU, in
	// MB (a value without a unit is MB); MemText is how it was written.
	MemMB   float64
	MemText string
	// Tile is gtile=N; TileSpread is gtile='!' (spread over the sockets).
	Tile       int
	TileSpread bool
	Link       bool // glink=yes (or the obsolete nvlink=yes)
	// MIG is mig=GI[/CI]: the GPU instance size and the compute instance
	// size (MIGCI 0: not written, 1 is the default).
	MIGGI, MIGCI int
}

// ErrBadReq is the prefix of every parse error, as bsub prints it.
var ErrBadReq = errors.New("Bad GPU requirement")

func bad(kw, val, format string, a ...any) error {
	return fmt.Errorf("%w: %s=%s: %s", ErrBadReq, kw, val, fmt.Sprintf(format, a...))
}

// Parse reads a GPU requirement in bsub -gpu syntax. "-" gives a Req with
// Dash set and nothing else; "" gives the zero Req (no requirement).
// Keywords are separated by ':', spaces around keywords and values are
// ignored, a keyword may appear once. gmodel's memory is written
// name-mem (bsub) or name#mem (GPU_REQ in lsb.queues / lsb.applications);
// both spellings are accepted everywhere. Errors start with "Bad GPU
// requirement" (gpu.md gives no LSF wording), name the keyword and say
// what is expected.
func Parse(s string) (*Req, error) {
	r := &Req{}
	s = strings.TrimSpace(s)
	if s == "" {
		return r, nil
	}
	if s == "-" {
		r.Dash = true
		return r, nil
	}
	for _, term := range strings.Split(s, ":") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue // "num=1::mode=shared", a trailing ':'
		}
		kw, val, ok := strings.Cut(term, "=")
		kw, val = strings.ToLower(strings.TrimSpace(kw)), strings.TrimSpace(val)
		if !ok {
			return nil, fmt.Errorf("%w: %q: expected keyword=value", ErrBadReq, term)
		}
		key, err := r.set(kw, val)
		if err != nil {
			return nil, err
		}
		if r.Set&key != 0 {
			if kw == "nvlink" || kw == "glink" {
				return nil, fmt.Errorf("%w: glink and nvlink: give one of them once (nvlink is obsolete)", ErrBadReq)
			}
			return nil, fmt.Errorf("%w: %s is given twice", ErrBadReq, kw)
		}
		r.Set |= key
	}
	return r, nil
}

// set parses one keyword's value into r and returns its key.
func (r *Req) set(kw, val string) (Keys, error) {
	yesNo := func(key Keys, dst *bool) (Keys, error) {
		switch strings.ToLower(val) {
		case "yes", "y":
			*dst = true
		case "no", "n":
			*dst = false
		default:
			return 0, bad(kw, val, "expected yes or no")
		}
		return key, nil
	}
	switch kw {
	case "num":
		n, per, _ := strings.Cut(val, "/")
		switch strings.ToLower(strings.TrimSpace(per)) {
		case "", "host":
		case "task":
			r.PerTask = true
		default:
			return 0, bad(kw, val, "expected num=N, num=N/task or num=N/host")
		}
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || v <= 0 {
			return 0, bad(kw, val, "expected a positive number of GPUs")
		}
		r.Num = v
		return KeyNum, nil
	case "mode":
		switch strings.ToLower(val) {
		case ModeShared, ModeExclusiveProcess:
			r.Mode = strings.ToLower(val)
		default:
			return 0, bad(kw, val, "expected shared or exclusive_process")
		}
		return KeyMode, nil
	case "mps":
		m, err := parseMPS(val)
		if err != nil {
			return 0, bad(kw, val, "%s", err)
		}
		r.MPS = m
		return KeyMPS, nil
	case "j_exclusive":
		return yesNo(KeyJExclusive, &r.JExclusive)
	case "aff":
		return yesNo(KeyAff, &r.Aff)
	case "block":
		return yesNo(KeyBlock, &r.Block)
	case "gpack":
		return yesNo(KeyGpack, &r.Gpack)
	case "gvendor":
		switch strings.ToLower(val) {
		case "nvidia", "amd":
			r.Vendor = strings.ToLower(val)
		default:
			return 0, bad(kw, val, "expected nvidia or amd")
		}
		return KeyVendor, nil
	case "gmodel":
		name, mem := val, ""
		if i := strings.LastIndexAny(val, "-#"); i >= 0 {
			name, mem = val[:i], val[i+1:]
			mb, ok := parseMem(mem)
			if !ok || mb <= 0 {
				return 0, bad(kw, val, "expected model_name or model_name-mem_size (such as TeslaK80-12G)")
			}
			r.ModelMemMB, r.ModelMemText = mb, mem
		}
		if !validModel(name) {
			return 0, bad(kw, val, "a model name has letters, digits and '_' (spaces removed, '-' and '/' written '_')")
		}
		r.Model = name
		return KeyModel, nil
	case "gmem":
		mb, ok := parseMem(val)
		if !ok || mb <= 0 {
			return 0, bad(kw, val, "expected a memory size such as 8000, 8G or 512MB")
		}
		r.MemMB, r.MemText = mb, val
		return KeyMem, nil
	case "gtile":
		if v := strings.Trim(val, `'"`); v == "!" {
			r.TileSpread = true
			return KeyTile, nil
		}
		v, err := strconv.Atoi(val)
		if err != nil || v <= 0 {
			return 0, bad(kw, val, "expected a positive number of GPUs per socket or '!'")
		}
		r.Tile = v
		return KeyTile, nil
	case "glink", "nvlink":
		if strings.ToLower(val) != "yes" {
			return 0, bad(kw, val, "expected yes")
		}
		r.Link = true
		return KeyLink, nil
	case "mig":
		gi, ci, err := parseMIG(val)
		if err != nil {
			return 0, bad(kw, val, "%s", err)
		}
		r.MIGGI, r.MIGCI = gi, ci
		return KeyMIG, nil
	}
	return 0, fmt.Errorf("%w: unknown keyword %q (num, mode, mps, j_exclusive, aff, block, gpack, gvendor, gmodel, gmem, gtile, glink, mig)", ErrBadReq, kw)
}

func parseMPS(val string) (string, error) {
	parts := strings.Split(strings.ToLower(val), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	switch parts[0] {
	case "no":
		if len(parts) > 1 {
			return "", errors.New("mps=no takes no options")
		}
		return "no", nil
	case "yes", "per_socket", "per_gpu":
	default:
		return "", errors.New("expected yes, per_socket, per_gpu or no, optionally with ,shared and ,nocvd")
	}
	var shared, nocvd bool
	for _, p := range parts[1:] {
		switch p {
		case "shared", "share":
			if shared {
				return "", errors.New("shared is given twice")
			}
			shared = true
		case "nocvd":
			if nocvd {
				return "", errors.New("nocvd is given twice")
			}
			nocvd = true
		default:
			return "", fmt.Errorf("unknown option %q (shared, nocvd)", p)
		}
	}
	out := parts[0]
	if shared {
		out += ",shared"
	}
	if nocvd {
		out += ",nocvd"
	}
	return out, nil
}

func parseMIG(val string) (gi, ci int, err error) {
	g, c, hasCI := strings.Cut(val, "/")
	gi, err = strconv.Atoi(strings.TrimSpace(g))
	if err != nil || (gi != 1 && gi != 2 && gi != 3 && gi != 4 && gi != 7) {
		return 0, 0, errors.New("the GPU instance size is 1, 2, 3, 4 or 7")
	}
	if !hasCI {
		return gi, 0, nil
	}
	ci, err = strconv.Atoi(strings.TrimSpace(c))
	if err != nil || ci < 1 || ci > gi {
		return 0, 0, fmt.Errorf("the compute instance size is 1 to %d", gi)
	}
	if gi == 4 && ci == 3 || gi == 7 && (ci == 5 || ci == 6) {
		return 0, 0, fmt.Errorf("%d/%d is not a valid MIG profile", gi, ci)
	}
	return gi, ci, nil
}

func validModel(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// parseMem reads a memory size: a number with an optional unit K, M, G,
// T (or KB, MB, GB, TB, any case); no unit is MB, as rusage[mem=].
func parseMem(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
		i--
	}
	num, unit := s[:i], strings.ToUpper(s[i:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 || strings.ContainsAny(num, "eE+-") {
		return 0, false
	}
	f := 0.0
	switch strings.TrimSuffix(unit, "B") {
	case "K":
		f = 1.0 / 1024
	case "", "M":
		f = 1
	case "G":
		f = 1024
	case "T":
		f = 1024 * 1024
	default:
		return 0, false
	}
	if unit == "B" { // "8B" is not a size
		return 0, false
	}
	return v * f, true
}

// String prints the keywords that are set, in the synopsis' order, as
// bsub -gpu takes them back ("-" for Dash, "" for nothing).
func (r *Req) String() string {
	if r == nil {
		return ""
	}
	if r.Dash && r.Set == 0 {
		return "-"
	}
	var b []string
	add := func(k Keys, s string) {
		if r.Set&k != 0 {
			b = append(b, s)
		}
	}
	yn := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	num := strconv.Itoa(r.Num)
	if r.PerTask {
		num += "/task"
	}
	add(KeyNum, "num="+num)
	add(KeyMode, "mode="+r.Mode)
	add(KeyMPS, "mps="+r.MPS)
	add(KeyJExclusive, "j_exclusive="+yn(r.JExclusive))
	add(KeyAff, "aff="+yn(r.Aff))
	add(KeyBlock, "block="+yn(r.Block))
	add(KeyGpack, "gpack="+yn(r.Gpack))
	add(KeyVendor, "gvendor="+r.Vendor)
	model := r.Model
	if r.ModelMemText != "" {
		model += "-" + r.ModelMemText
	}
	add(KeyModel, "gmodel="+model)
	tile := strconv.Itoa(r.Tile)
	if r.TileSpread {
		tile = "'!'"
	}
	add(KeyTile, "gtile="+tile)
	add(KeyMem, "gmem="+r.MemText)
	add(KeyLink, "glink=yes")
	mig := strconv.Itoa(r.MIGGI)
	if r.MIGCI > 0 {
		mig += "/" + strconv.Itoa(r.MIGCI)
	}
	add(KeyMIG, "mig="+mig)
	return strings.Join(b, ":")
}

// Default is LSF's requirement when no level sets anything:
// num=1:mode=shared:mps=no:j_exclusive=no.
const Default = "num=1:mode=shared:mps=no:j_exclusive=no"

// Effective returns a copy of r with LSF's defaults filled in for the
// keywords r does not set (num=1, mode=shared, mps=no, j_exclusive=no,
// aff=yes, gvendor=nvidia) and LSF's implications applied:
// mode=exclusive_process forces j_exclusive=yes, block=yes turns aff off.
// Set keeps saying what was written.
func (r *Req) Effective() *Req {
	e := &Req{}
	if r != nil {
		*e = *r
	}
	e.Dash = false
	if e.Set&KeyNum == 0 {
		e.Num, e.PerTask = 1, false
	}
	if e.Set&KeyMode == 0 {
		e.Mode = ModeShared
	}
	if e.Set&KeyMPS == 0 {
		e.MPS = "no"
	}
	if e.Set&KeyAff == 0 {
		e.Aff = true
	}
	if e.Set&KeyVendor == 0 {
		e.Vendor = "nvidia"
	}
	if e.Mode == ModeExclusiveProcess {
		e.JExclusive = true
	}
	if e.Block {
		e.Aff = false
	}
	return e
}

// Exclusive reports whether the requirement's GPUs may not be used by any
// other job (j_exclusive=yes, or mode=exclusive_process which forces it).
func (r *Req) Exclusive() bool { return r.JExclusive || r.Mode == ModeExclusiveProcess }

// NoCVD reports mps=...,nocvd: CUDA_VISIBLE_DEVICES is not set for the
// job.
func (r *Req) NoCVD() bool { return strings.HasSuffix(r.MPS, ",nocvd") }

// FromRusage gives the requirement rusage[ngpus_physical=N] stands for:
// num=N (per task when the rusage is /task) with every other keyword at
// its default. ok is false when n is not a positive whole number.
func FromRusage(n float64, perTask bool) (r *Req, ok bool) {
	if n <= 0 || n != math.Trunc(n) || n > math.MaxInt32 {
		return nil, false
	}
	return &Req{Set: KeyNum, Num: int(n), PerTask: perTask}, true
}

// Rusage is the rusage term LSF turns a requirement into, for bjobs -l's
// effective requirement: "rusage[ngpus_physical=2]" (":/task" style
// "ngpus_physical=2/task" for a per-task count).
func (r *Req) Rusage() string {
	e := r.Effective()
	s := "rusage[ngpus_physical=" + strconv.Itoa(e.Num)
	if e.PerTask {
		s += "/task"
	}
	return s + "]"
}

// Level is one level's requirement for Merge, lowest first: the cluster's
// LSB_GPU_REQ, the queue's GPU_REQ, the application profile's GPU_REQ,
// the job's -gpu. Req nil or zero: the level sets nothing.
type Level struct {
	Name string // for messages: "cluster", "queue normal", "application gpuapp", "job"
	Req  *Req
	// Fixed (application profile only): the profile's keywords cannot be
	// overridden by the job (DESIGN.md layering: fixed/default).
	Fixed bool
}

// Merge combines the levels (lowest first) into the job's requirement,
// before defaults (call Effective on the result). The rule, reading
// IBM's three statements together (gpu.md §3): num, mode, mps and
// j_exclusive are merged one by one, each from the highest level that
// sets it; the other keywords too when mergeAll (GPU_REQ_MERGE=Y), else
// they come together from the highest level that sets any of them. A
// level marked Fixed keeps its keywords against the levels above it: a
// job that sets one of them to another value is an error naming the
// profile.
func Merge(mergeAll bool, levels ...Level) (*Req, error) {
	out := &Req{}
	var fixed *Level
	var fixedKeys Keys
	otherFrom := -1
	for i, l := range levels {
		if l.Req != nil && l.Req.Set&^basicKeys != 0 {
			otherFrom = i
		}
	}
	for i := range levels {
		l := &levels[i]
		r := l.Req
		if r == nil || r.Set == 0 {
			continue
		}
		take := r.Set
		if !mergeAll && !l.Fixed { // a fixed profile's keywords are all in force
			take &= basicKeys
			if i == otherFrom {
				take |= r.Set &^ basicKeys
				if fixed == nil || fixedKeys&^basicKeys == 0 {
					out.clear(^basicKeys) // the others come whole from here
				}
			}
		}
		if fixed != nil {
			if clash := take & fixedKeys; clash != 0 {
				if differs(out, r, clash) {
					return nil, fmt.Errorf("%w: %s fixes %s; the %s asks for %s", ErrBadReq, fixed.Name,
						(&Req{}).copyKeys(out, clash).String(), l.Name, (&Req{}).copyKeys(r, clash).String())
				}
				take &^= clash
			}
		}
		out.copyKeys(r, take)
		if l.Fixed {
			fixed, fixedKeys = l, r.Set
		}
	}
	return out, nil
}

// differs reports whether a and b disagree on any of keys.
func differs(a, b *Req, keys Keys) bool {
	x, y := (&Req{}).copyKeys(a, keys), (&Req{}).copyKeys(b, keys)
	return x.String() != y.String()
}

// copyKeys copies the fields of keys from src into r and returns r.
func (r *Req) copyKeys(src *Req, keys Keys) *Req {
	for k := Keys(1); k <= KeyMIG; k <<= 1 {
		if keys&k == 0 || src.Set&k == 0 {
			continue
		}
		switch k {
		case KeyNum:
			r.Num, r.PerTask = src.Num, src.PerTask
		case KeyMode:
			r.Mode = src.Mode
		case KeyMPS:
			r.MPS = src.MPS
		case KeyJExclusive:
			r.JExclusive = src.JExclusive
		case KeyAff:
			r.Aff = src.Aff
		case KeyBlock:
			r.Block = src.Block
		case KeyGpack:
			r.Gpack = src.Gpack
		case KeyVendor:
			r.Vendor = src.Vendor
		case KeyModel:
			r.Model, r.ModelMemMB, r.ModelMemText = src.Model, src.ModelMemMB, src.ModelMemText
		case KeyMem:
			r.MemMB, r.MemText = src.MemMB, src.MemText
		case KeyTile:
			r.Tile, r.TileSpread = src.Tile, src.TileSpread
		case KeyLink:
			r.Link = src.Link
		case KeyMIG:
			r.MIGGI, r.MIGCI = src.MIGGI, src.MIGCI
		}
		r.Set |= k
	}
	return r
}

// clear unsets keys.
func (r *Req) clear(keys Keys) {
	var z Req
	z.copyKeys(r, r.Set&^keys)
	*r = z
}

// CheckCeiling checks an effective requirement against a queue's or a
// project's most GPUs per host (0: none), for the submission-time
// rejection DESIGN.md asks for. slots is the job's minimum slots on one
// host (for num=N/task).
func CheckCeiling(e *Req, maxGPUs, slots int, who string) error {
	if maxGPUs <= 0 {
		return nil
	}
	n := e.Num
	if e.PerTask {
		n *= max(1, slots)
	}
	if n > maxGPUs {
		return fmt.Errorf("Job requests %d GPUs per host; %s allows at most %d", n, who, maxGPUs)
	}
	return nil
}
