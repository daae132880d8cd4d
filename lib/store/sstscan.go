package store

import (
	"encoding/binary"
	"hash/crc32"
	"os"

	"github.com/dgraph-io/badger/v4/y"
)

// Salvage of a table Badger cannot open, or whose iteration stops at a
// damaged block: its index (at the end of the file) or its first block
// (which Badger reads at open for the table's smallest key) damaged
// loses every block, and a damaged block in the middle loses the ones
// after it. scanTable reads the blocks by their own checksums instead,
// without the index. An uncompressed table (what the store writes) is its
// blocks one after the other from byte 0, then the index. A block is
//
//	entries | entry offsets (uint32 each, native order) | count (uint32, big-endian)
//	| checksum (pb.Checksum: CRC32C of everything before it) | checksum length (uint32, big-endian)
//
// and an entry is a header (overlap and diff with the block's first key,
// uint16 each, native order), the key's differing bytes and the encoded
// value. From the start of a block the scan finds its end where a
// checksum of what precedes it fits; after a damaged block it finds the
// next block's end by its trailer (a checksum and a plausible offset
// table) and its start by the offsets and the checksum.

// maxBlock bounds a block's size (a block holds at least one entry; the
// store's records are far smaller than this).
const maxBlock = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// scanTableFile is scanTable of the table file at path (nothing when it
// cannot be read).
func scanTableFile(path string) []tableEntry {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	entries, _ := scanTable(b)
	return entries
}

// scanTable returns the entries of every block of the table b whose
// checksum holds, and how many stretches of damage it skipped.
func scanTable(b []byte) (entries []tableEntry, skipped int) {
	for s := 0; s < len(b); {
		if dataEnd, end, ok := blockFrom(b, s); ok {
			if es, ok := decodeBlock(b[s:dataEnd]); ok {
				entries = append(entries, es...)
				s = end
				continue
			}
		}
		skipped++
		next, ok := nextBlock(b, s+1)
		if !ok {
			break
		}
		s = next
	}
	return entries, skipped
}

// blockFrom looks for the end of a block that starts at s: dataEnd is
// where its checksum starts, end where the block ends.
func blockFrom(b []byte, s int) (dataEnd, end int, ok bool) {
	crc := uint32(0)
	limit := min(len(b), s+maxBlock)
	for x := s; x < limit; x++ {
		if x >= s+8 {
			if cl, sum, ok := trailerAt(b, x); ok && sum == crc {
				if n := int(binary.BigEndian.Uint32(b[x-4 : x])); n > 0 && 4*n+4 <= x-s {
					return x, x + cl + 4, true
				}
			}
		}
		crc = crc32.Update(crc, castagnoli, b[x:x+1])
	}
	return 0, 0, false
}

// trailerAt reads a block checksum that starts at x: its length and the
// sum it holds.
func trailerAt(b []byte, x int) (cl int, sum uint32, ok bool) {
	if x >= len(b) || b[x] != 0x10 { // field 2 (the sum), a varint; the algorithm, CRC32C, is 0 and omitted
		return 0, 0, false
	}
	for cl = 2; cl <= 6; cl++ {
		if x+cl+4 > len(b) {
			return 0, 0, false
		}
		if binary.BigEndian.Uint32(b[x+cl:x+cl+4]) != uint32(cl) {
			continue
		}
		v, n := binary.Uvarint(b[x+1 : x+cl])
		if n == cl-1 && v <= 0xffffffff {
			return cl, uint32(v), true
		}
	}
	return 0, 0, false
}

// nextBlock finds the start of the first whole block at or after from.
func nextBlock(b []byte, from int) (int, bool) {
	for x := from + 8; x < len(b); x++ {
		_, sum, ok := trailerAt(b, x)
		if !ok {
			continue
		}
		n := int(binary.BigEndian.Uint32(b[x-4 : x]))
		offs := x - 4 - 4*n // where the offsets start: the entries end
		if n <= 0 || n > maxBlock/4 || offs-from < 4 {
			continue
		}
		off := make([]int, n)
		ascending := true
		for i := range n {
			off[i] = int(binary.NativeEndian.Uint32(b[offs+4*i:]))
			if i == 0 && off[0] != 0 || i > 0 && off[i] <= off[i-1] {
				ascending = false
				break
			}
		}
		if !ascending {
			continue
		}
		// The block's start: its last entry (at least a header) ends
		// where the offsets start, its first has no overlap.
		hi := offs - off[n-1] - 4
		for s := hi; s >= from && s > offs-maxBlock; s-- {
			if b[s] != 0 || b[s+1] != 0 {
				continue
			}
			if crc32.Checksum(b[s:x], castagnoli) == sum {
				return s, true
			}
		}
	}
	return 0, false
}

// decodeBlock decodes the entries of a block's data (up to its checksum).
func decodeBlock(d []byte) ([]tableEntry, bool) {
	if len(d) < 8 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(d[len(d)-4:]))
	offs := len(d) - 4 - 4*n
	if n <= 0 || offs < 0 {
		return nil, false
	}
	var base []byte
	entries := make([]tableEntry, 0, n)
	for i := range n {
		from := int(binary.NativeEndian.Uint32(d[offs+4*i:]))
		to := offs
		if i+1 < n {
			to = int(binary.NativeEndian.Uint32(d[offs+4*(i+1):]))
		}
		if from+4 > to || to > offs {
			return nil, false
		}
		overlap := int(binary.NativeEndian.Uint16(d[from:]))
		diff := int(binary.NativeEndian.Uint16(d[from+2:]))
		if i == 0 && overlap != 0 || overlap > len(base) || from+4+diff+2 > to {
			return nil, false
		}
		key := append(append([]byte(nil), base[:overlap]...), d[from+4:from+4+diff]...)
		if i == 0 {
			base = key
		}
		if len(key) < 8 {
			return nil, false // no version suffix
		}
		var v y.ValueStruct
		v.Decode(d[from+4+diff : to])
		v.Value = append([]byte(nil), v.Value...)
		entries = append(entries, tableEntry{key: key, value: v})
	}
	return entries, true
}
