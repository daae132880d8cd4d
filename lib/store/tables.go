package store

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
)

// tableEntry is one key version read from a table.
type tableEntry struct {
	key   []byte // with Badger's version suffix
	value y.ValueStruct
}

// readTable opens one table file read-only, outside Badger, and returns its
// entries up to the first block that fails its checksum. Badger panics on
// some damage (a truncated table's index) where it should return an error:
// here a panic is damage too, reported with the file's name.
func readTable(path string, compression options.CompressionType, keep bool) (entries []tableEntry, damage string) {
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && mf == nil {
		return nil, fmt.Sprintf("table %s cannot be opened: %v", filepath.Base(path), err)
	}
	defer mf.Close(-1)
	defer func() {
		if r := recover(); r != nil {
			damage = fmt.Sprintf("table %s is damaged (truncated or overwritten)", filepath.Base(path))
		}
	}()
	// Every block's checksum is checked as the iterator reads it, which
	// reads them all: checking them at open as well (OnTableAndBlockRead)
	// would read and decompress each twice. To salvage, the blocks
	// before a bad one count.
	t, err := table.OpenTable(mf, table.Options{ChkMode: options.OnBlockRead, Compression: compression, BlockSize: 4 << 10})
	if err != nil {
		return nil, fmt.Sprintf("table %s is damaged: %v", filepath.Base(path), firstLine(err))
	}
	it := t.NewIterator(0)
	defer it.Close()
	n := 0
	for it.Rewind(); it.Valid(); it.Next() {
		n++
		if keep {
			v := it.Value()
			v.Value = append([]byte(nil), v.Value...)
			entries = append(entries, tableEntry{key: append([]byte(nil), it.Key()...), value: v})
		}
	}
	if uint32(n) < t.KeyCount() {
		return entries, fmt.Sprintf("table %s is damaged: %d of its %d keys read back", filepath.Base(path), n, t.KeyCount())
	}
	return entries, ""
}

func firstLine(v any) string {
	s := fmt.Sprint(v)
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
