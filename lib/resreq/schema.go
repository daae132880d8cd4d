package resreq

import (
	"fmt"
	"math"
	"sort"
)

// Kind is the kind of a resource.
type Kind uint8

// Resource kinds. Unknown is the kind of a name the parser was not told
// about.
const (
	Unknown Kind = iota
	Numeric
	String
	Boolean
)

func (k Kind) String() string {
	switch k {
	case Numeric:
		return "numeric"
	case String:
		return "string"
	case Boolean:
		return "Boolean"
	}
	return "unknown"
}

// Resource describes a resource the cluster knows.
type Resource struct {
	Name string
	Kind Kind
	// Units: the resource takes memory units (mem>4GB); values without a
	// unit are MB.
	Units bool
	// Consumable: the resource may appear in rusage[].
	Consumable bool
	// Increasing: a larger value means a more loaded host, so order[] puts
	// low values first (as r15s or ut). Otherwise high values come first
	// (as mem or slots).
	Increasing bool
}

// builtins are LSF's built-in resources (resreq.md §2.3) plus slots,
// maxslots and the GPU counts.
var builtins = []Resource{
	{Name: "r15s", Kind: Numeric, Consumable: true, Increasing: true},
	{Name: "r1m", Kind: Numeric, Consumable: true, Increasing: true},
	{Name: "r15m", Kind: Numeric, Consumable: true, Increasing: true},
	{Name: "ut", Kind: Numeric, Consumable: true, Increasing: true},
	{Name: "pg", Kind: Numeric, Consumable: true, Increasing: true},
	{Name: "io", Kind: Numeric, Consumable: true, Increasing: true},
	{Name: "ls", Kind: Numeric, Consumable: true, Increasing: true},
	{Name: "it", Kind: Numeric, Consumable: true},
	{Name: "tmp", Kind: Numeric, Units: true, Consumable: true},
	{Name: "swp", Kind: Numeric, Units: true, Consumable: true},
	{Name: "mem", Kind: Numeric, Units: true, Consumable: true},
	{Name: "ncpus", Kind: Numeric},
	{Name: "nprocs", Kind: Numeric},
	{Name: "ncores", Kind: Numeric},
	{Name: "nthreads", Kind: Numeric},
	{Name: "ndisks", Kind: Numeric},
	{Name: "maxmem", Kind: Numeric, Units: true},
	{Name: "maxswp", Kind: Numeric, Units: true},
	{Name: "maxtmp", Kind: Numeric, Units: true},
	{Name: "cpuf", Kind: Numeric},
	{Name: "rexpri", Kind: Numeric, Increasing: true},
	{Name: "slots", Kind: Numeric},
	{Name: "maxslots", Kind: Numeric},
	{Name: "ngpus", Kind: Numeric},
	{Name: "ngpus_physical", Kind: Numeric, Consumable: true},
	{Name: "type", Kind: String},
	{Name: "model", Kind: String},
	{Name: "hname", Kind: String},
	{Name: "status", Kind: String},
	{Name: "server", Kind: Boolean},
}

// aliases are the names LSF accepts for built-in load indices.
var aliases = map[string]string{
	"swap":  "swp",
	"idle":  "it",
	"login": "ls",
	"cpu":   "r1m",
}

// sectionNames cannot be resource names.
var sectionNames = map[string]bool{
	"select": true, "order": true, "rusage": true, "span": true,
	"same": true, "cu": true, "affinity": true, "defined": true,
}

// Builtins returns LSF's built-in resources.
func Builtins() []Resource { return append([]Resource(nil), builtins...) }

type schemaEntry struct {
	res   Resource
	index int // within its kind
}

// Schema is the set of resources of a cluster, each with an index within
// its kind. Hosts are described against a schema, and select strings are
// compiled against it, so that matching is a few slice reads.
type Schema struct {
	entries map[string]schemaEntry
	nNum    int
	nStr    int
	nBool   int
	strict  bool
	// memUnit is the unit of a memory amount written without one
	// (LSF_UNIT_FOR_LIMITS); NoUnit is MB.
	memUnit Unit
}

// WithMemUnit returns the schema with u as the unit of memory amounts
// written without one, in select[] comparisons and rusage[] (LSF's
// LSF_UNIT_FOR_LIMITS governs them as it governs bsub -M). The parser
// writes the unit into the number it reads, so the requirement prints
// and evaluates the same under any schema.
func (s *Schema) WithMemUnit(u Unit) *Schema {
	c := *s
	c.memUnit = u
	return &c
}

// ParseUnit reads a memory unit name: KB, MB, ... ZB, or its first
// letter, any case.
func ParseUnit(s string) (Unit, bool) { return parseUnit(s) }

// NewSchema returns a schema holding the built-in resources and the site
// resources given. A site resource may not redefine a built-in one or use a
// reserved name.
func NewSchema(site ...Resource) (*Schema, error) {
	s := &Schema{entries: make(map[string]schemaEntry, len(builtins)+len(site)), strict: true}
	for _, r := range builtins {
		s.add(r)
	}
	for _, r := range site {
		if !validName(r.Name) {
			return nil, fmt.Errorf("resource name %q: use letters, digits and '_', starting with a letter or '_'", r.Name)
		}
		if _, ok := s.entries[r.Name]; ok {
			return nil, fmt.Errorf("resource %q is defined twice or redefines a built-in resource", r.Name)
		}
		if _, ok := aliases[r.Name]; ok || sectionNames[r.Name] {
			return nil, fmt.Errorf("resource name %q is reserved", r.Name)
		}
		switch r.Kind {
		case Numeric:
		case String, Boolean:
			if r.Units || r.Consumable {
				return nil, fmt.Errorf("resource %q: only a numeric resource can take units or be consumable", r.Name)
			}
		default:
			return nil, fmt.Errorf("resource %q: kind must be numeric, string or Boolean", r.Name)
		}
		s.add(r)
	}
	return s, nil
}

var builtinSchema = func() *Schema {
	s, err := NewSchema()
	if err != nil {
		panic(err)
	}
	s.strict = false
	return s
}()

func (s *Schema) add(r Resource) {
	e := schemaEntry{res: r}
	switch r.Kind {
	case Numeric:
		e.index = s.nNum
		s.nNum++
	case String:
		e.index = s.nStr
		s.nStr++
	case Boolean:
		e.index = s.nBool
		s.nBool++
	}
	s.entries[r.Name] = e
}

// Lookup returns the resource called name (an alias is resolved) and its
// index within its kind.
func (s *Schema) Lookup(name string) (Resource, int, bool) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	e, ok := s.entries[name]
	return e.res, e.index, ok
}

// Resources returns the resources of the schema, sorted by name.
func (s *Schema) Resources() []Resource {
	out := make([]Resource, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e.res)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NewHost returns a host that defines no resource: every numeric value is
// NaN, every string empty, every Boolean false.
func (s *Schema) NewHost() *Host {
	h := &Host{
		Num:  make([]float64, s.nNum),
		Str:  make([]string, s.nStr),
		Bool: make([]bool, s.nBool),
	}
	for i := range h.Num {
		h.Num[i] = math.NaN()
	}
	return h
}

// Set sets the value of a resource on h: a float64 for a numeric resource,
// a string for a string resource, a bool for a Boolean one.
func (s *Schema) Set(h *Host, name string, value any) error {
	r, i, ok := s.Lookup(name)
	if !ok {
		return fmt.Errorf("unknown resource %q", name)
	}
	switch v := value.(type) {
	case float64:
		if r.Kind == Numeric {
			h.Num[i] = v
			return nil
		}
	case int:
		if r.Kind == Numeric {
			h.Num[i] = float64(v)
			return nil
		}
	case string:
		if r.Kind == String {
			h.Str[i] = v
			return nil
		}
	case bool:
		if r.Kind == Boolean {
			h.Bool[i] = v
			return nil
		}
	}
	return fmt.Errorf("resource %q is %s; cannot set it to %T", name, r.Kind, value)
}

// Host is what a compiled select or order reads about one host. Build it
// with Schema.NewHost and fill the slices by the indices Schema.Lookup
// returns. A NaN numeric value or an empty string means the host does not
// define that resource.
type Host struct {
	Num  []float64
	Str  []string
	Bool []bool
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}
