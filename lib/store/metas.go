package store

import (
	"maps"
	"slices"
)

// SetMetas stores (or, for nil values, deletes) several settings under
// m/<key> in one durable write: all of them or none (the provisioner's
// request and its instances).
func (s *Store) SetMetas(kv map[string][]byte) error {
	b := &batch{}
	for _, key := range slices.Sorted(maps.Keys(kv)) {
		k := []byte("m/" + key)
		if v := kv[key]; v == nil {
			b.Delete(k)
		} else {
			b.Set(k, v)
		}
	}
	return s.write(b)
}
