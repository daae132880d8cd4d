package controller

import (
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"
	"weak"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/requeue"
)

// effSpec is a job's effective spec as the controller keeps it: encoded,
// exactly as the store holds it and queries send it, plus the few fields
// the controller itself reads. A decoded api.JobSpec costs about 700 bytes
// a job whatever it holds; this costs about a third of that, and a query
// sends the bytes without encoding them again. An array's elements share
// one.
type effSpec struct {
	raw []byte

	queue, user, jobName, command  string
	project, app, dependency, out  string
	uid                            uint32
	minTasks, maxTasks, arrayLimit int32
	userPriority                   int32
	beginTime                      int64
	exclusive                      bool
	limits                         []*api.PendLimit
	hosts                          []string // -m
	resReq                         string   // the merged effective -R
	runLimit                       int64    // seconds
	// The settings few jobs have, apart so that the others do not pay
	// for them (nil: none of them).
	*effExtra
}

// effExtra holds an effective spec's rarely set fields.
type effExtra struct {
	jobGroup, userGroup, desc string          // -g (as api.JobGroupPath writes it), -G, -Jd
	estRun                    int64           // -We, seconds (runtime_est_exceeded)
	requeue                   *requeue.Values // -Q or the profile's or queue's; nil: none
	terminateOrphan           bool            // -ti
	rerunnable                bool            // -r (or the queue's or profile's)
	gpu                       string          // the merged GPU requirement ("" none)
	rsv                       string          // -U: the advance reservation
	claim                     string          // -claim: the standalone claim
}

// splitOrigin takes the origin map out of an effective spec and returns
// it encoded on its own (nil when there is none): the store keeps it apart
// and a query for the long form appends it to the spec's bytes (two
// encoded messages concatenated decode as their merge). It is encoded by
// hand, in key order: proto.Marshal of a map walks it by reflection (6%
// of a submission's CPU), and the sorted form is the same bytes for every
// job of one pattern.
func splitOrigin(spec *api.JobSpec) []byte {
	if len(spec.Origin) == 0 {
		return nil
	}
	keys := make([]string, 0, len(spec.Origin))
	size := 0
	for k, v := range spec.Origin {
		keys = append(keys, k)
		size += 2*protowire.SizeVarint(uint64(len(k)+len(v)+4)) + len(k) + len(v) + 8
	}
	slices.Sort(keys)
	raw := make([]byte, 0, size)
	for _, k := range keys {
		v := spec.Origin[k]
		raw = protowire.AppendTag(raw, originField, protowire.BytesType)
		raw = protowire.AppendVarint(raw, uint64(protowire.SizeTag(1)+protowire.SizeBytes(len(k))+protowire.SizeTag(2)+protowire.SizeBytes(len(v))))
		raw = protowire.AppendTag(raw, 1, protowire.BytesType)
		raw = protowire.AppendString(raw, k)
		raw = protowire.AppendTag(raw, 2, protowire.BytesType)
		raw = protowire.AppendString(raw, v)
	}
	spec.Origin = nil
	return raw
}

// originField is api.JobSpec's origin map's field number.
const originField = 48

// newEffSpec keeps spec (which the caller no longer changes) in encoded
// form; raw, when given, is its encoding.
func newEffSpec(spec *api.JobSpec, raw []byte) (*effSpec, error) {
	if raw == nil {
		var err error
		if raw, err = proto.Marshal(spec); err != nil {
			return nil, err
		}
	}
	e := &effSpec{
		raw:          raw,
		queue:        spec.Queue,
		user:         spec.User,
		jobName:      spec.JobName,
		command:      spec.Command,
		project:      spec.Project,
		app:          spec.App,
		dependency:   spec.Dependency,
		out:          spec.OutputFile,
		uid:          spec.Uid,
		minTasks:     spec.MinTasks,
		maxTasks:     spec.MaxTasks,
		arrayLimit:   spec.ArrayLimit,
		userPriority: spec.UserPriority,
		beginTime:    spec.BeginTime,
		exclusive:    spec.Exclusive,
		limits:       spec.PendLimits,
		hosts:        spec.Hosts,
		resReq:       strings.Join(spec.ResReq, " "),
		runLimit:     spec.RunLimitSec,
	}
	x := effExtra{
		jobGroup:  api.JobGroupPath(spec.JobGroup),
		userGroup: spec.UserGroup,
		desc:      spec.Description,
		estRun:    spec.EstimatedRunSec,
		requeue:   parseRequeue(spec.RequeueExitValues),

		terminateOrphan: spec.TerminateOrphan,
		rerunnable:      spec.Rerunnable,
		gpu:             spec.Gpu,
		rsv:             spec.Reservation,
		claim:           spec.Claim,
	}
	if x != (effExtra{}) {
		e.effExtra = &x
	}
	return e, nil
}

// parseRequeue reads requeue exit values the submission or the
// configuration checked already; nil when there are none.
func parseRequeue(v string) *requeue.Values {
	if v == "" {
		return nil
	}
	r, err := requeue.Parse(v)
	if err != nil {
		slog.Warn("ignoring requeue exit values", "values", v, "err", err)
		return nil
	}
	return r
}

// decodeEffSpec reads an effective spec as the store returns it.
func decodeEffSpec(raw []byte) (*effSpec, error) {
	spec := &api.JobSpec{}
	if err := proto.Unmarshal(raw, spec); err != nil {
		return nil, err
	}
	return newEffSpec(spec, raw)
}

// effSpecs interns effective specs by their encoding. The jobs of one
// submission pattern (a workflow's thousands of alike bsubs) have the same
// effective spec, byte for byte: they share one effSpec and its bytes
// rather than holding about 700 bytes each, and a restart decodes each
// pattern once. An effSpec is immutable, so sharing it is safe; the table
// holds them weakly, and forgets one when no job holds it any more.
type effSpecs struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[effSpec]
}

// lookup returns the interned spec encoded as raw, nil when there is none.
func (t *effSpecs) lookup(raw []byte) *effSpec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[string(raw)].Value()
}

// add interns e and returns the spec to use: e, or the one with e's
// encoding interned already.
func (t *effSpecs) add(e *effSpec) *effSpec {
	// The key is e's own bytes, which never change: no copy of them.
	k := unsafe.String(unsafe.SliceData(e.raw), len(e.raw))
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.m[k].Value(); old != nil {
		return old
	}
	if t.m == nil {
		t.m = map[string]weak.Pointer[effSpec]{}
	}
	t.m[k] = weak.Make(e)
	runtime.AddCleanup(e, t.drop, k)
	return e
}

// drop forgets the entry of a collected spec, unless a live one with the
// same encoding replaced it meanwhile.
func (t *effSpecs) drop(k string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if wp, ok := t.m[k]; ok && wp.Value() == nil {
		delete(t.m, k)
	}
}

// intern keeps a new effective spec (which the caller no longer changes),
// shared with the jobs whose effective spec encodes the same.
func (t *effSpecs) intern(spec *api.JobSpec) (*effSpec, error) {
	raw, err := proto.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if e := t.lookup(raw); e != nil {
		return e, nil
	}
	e, err := newEffSpec(spec, raw)
	if err != nil {
		return nil, err
	}
	return t.add(e), nil
}

// decode is decodeEffSpec through the table: an encoding seen before is
// not decoded again.
func (t *effSpecs) decode(raw []byte) (*effSpec, error) {
	if e := t.lookup(raw); e != nil {
		return e, nil
	}
	e, err := decodeEffSpec(raw)
	if err != nil {
		return nil, err
	}
	return t.add(e), nil
}

// Spec decodes the whole effective spec.
func (e *effSpec) Spec() (*api.JobSpec, error) {
	spec := &api.JobSpec{}
	return spec, proto.Unmarshal(e.raw, spec)
}

// The getters mirror api.JobSpec's, nil-safe like them.

// GetRerunnable: the job is rerun when its host fails.
func (e *effSpec) GetRerunnable() bool {
	return e != nil && e.effExtra != nil && e.rerunnable
}

func (e *effSpec) GetQueue() string {
	if e == nil {
		return ""
	}
	return e.queue
}

func (e *effSpec) GetUser() string {
	if e == nil {
		return ""
	}
	return e.user
}

func (e *effSpec) GetJobName() string {
	if e == nil {
		return ""
	}
	return e.jobName
}

func (e *effSpec) GetCommand() string {
	if e == nil {
		return ""
	}
	return e.command
}

func (e *effSpec) GetProject() string {
	if e == nil {
		return ""
	}
	return e.project
}

func (e *effSpec) GetApp() string {
	if e == nil {
		return ""
	}
	return e.app
}

func (e *effSpec) GetDependency() string {
	if e == nil {
		return ""
	}
	return e.dependency
}

func (e *effSpec) GetOutputFile() string {
	if e == nil {
		return ""
	}
	return e.out
}

func (e *effSpec) GetUid() uint32 {
	if e == nil {
		return 0
	}
	return e.uid
}

func (e *effSpec) GetMinTasks() int32 {
	if e == nil {
		return 0
	}
	return e.minTasks
}

func (e *effSpec) GetMaxTasks() int32 {
	if e == nil {
		return 0
	}
	return e.maxTasks
}

func (e *effSpec) GetArrayLimit() int32 {
	if e == nil {
		return 0
	}
	return e.arrayLimit
}

func (e *effSpec) GetUserPriority() int32 {
	if e == nil {
		return 0
	}
	return e.userPriority
}

func (e *effSpec) GetBeginTime() int64 {
	if e == nil {
		return 0
	}
	return e.beginTime
}

func (e *effSpec) GetExclusive() bool {
	return e != nil && e.exclusive
}

func (e *effSpec) GetJobGroup() string {
	if e == nil || e.effExtra == nil {
		return ""
	}
	return e.jobGroup
}

func (e *effSpec) GetUserGroup() string {
	if e == nil || e.effExtra == nil {
		return ""
	}
	return e.userGroup
}

func (e *effSpec) GetDescription() string {
	if e == nil || e.effExtra == nil {
		return ""
	}
	return e.desc
}

func (e *effSpec) GetEstimatedRunSec() int64 {
	if e == nil || e.effExtra == nil {
		return 0
	}
	return e.estRun
}

func (e *effSpec) GetTerminateOrphan() bool {
	return e != nil && e.effExtra != nil && e.terminateOrphan
}

// GetGpu is the job's effective GPU requirement ("" none).
func (e *effSpec) GetGpu() string {
	if e == nil || e.effExtra == nil {
		return ""
	}
	return e.gpu
}

// GetRunLimitSec is the job's effective run limit in seconds (0 none).
func (e *effSpec) GetRunLimitSec() int64 {
	if e == nil {
		return 0
	}
	return e.runLimit
}

// GetReservation is bsub -U's advance reservation ("" none).
func (e *effSpec) GetReservation() string {
	if e == nil || e.effExtra == nil {
		return ""
	}
	return e.rsv
}

// GetClaim is bsub -claim's standalone claim ("" none).
func (e *effSpec) GetClaim() string {
	if e == nil || e.effExtra == nil {
		return ""
	}
	return e.claim
}
