package embedded

import (
	"encoding/binary"
	"math/bits"

	"github.com/google/uuid"
)

// rowIndex finds a partition's row by its chunk id: an open-addressing hash table
// with linear probing whose slots hold row numbers (4 bytes each, kept at most half
// full), the ids themselves staying in partition.ids. A Go map from id to row
// costs 30 to 60 bytes a row, about 40 MB at 1M rows, on the Go heap whose size
// paces the garbage collector; this costs 8 to 16 MB.
//
// Every method takes the partition's ids, which must hold the rows the table
// names. The caller holds the partition's lock.
type rowIndex struct {
	slots []int32 // row+1, 0 for an empty slot
	n     int
}

// minRowSlots is the table's smallest size.
const minRowSlots = 16

// home is the slot where id's probe starts. Chunk ids are mixed whole, so ids
// that share a prefix (time-ordered UUIDs) still spread.
func (x *rowIndex) home(id uuid.UUID) int {
	h := binary.LittleEndian.Uint64(id[:8]) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(id[8:]), 31)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h & uint64(len(x.slots)-1))
}

// slot returns the slot holding id's row, or the empty slot where it would go.
func (x *rowIndex) slot(ids []uuid.UUID, id uuid.UUID) (int, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := len(x.slots) - 1
	for s := x.home(id); ; s = (s + 1) & mask {
		r := x.slots[s]
		if r == 0 {
			return s, false
		}
		if ids[r-1] == id {
			return s, true
		}
	}
}

// find returns id's row.
func (x *rowIndex) find(ids []uuid.UUID, id uuid.UUID) (int, bool) {
	s, ok := x.slot(ids, id)
	if !ok {
		return 0, false
	}
	return int(x.slots[s]) - 1, true
}

// reserve sizes the table for n rows of ids.
func (x *rowIndex) reserve(ids []uuid.UUID, n int) {
	size := minRowSlots
	for size < 2*n {
		size *= 2
	}
	if size <= len(x.slots) {
		return
	}
	old := x.slots
	x.slots = make([]int32, size)
	for _, r := range old {
		if r != 0 {
			s, _ := x.slot(ids, ids[r-1])
			x.slots[s] = r
		}
	}
}

// insert records that id, absent so far, is row (ids[row] == id).
func (x *rowIndex) insert(ids []uuid.UUID, id uuid.UUID, row int) {
	x.reserve(ids, x.n+1)
	s, _ := x.slot(ids, id)
	x.slots[s] = int32(row + 1)
	x.n++
}

// move records that id, present, is now row.
func (x *rowIndex) move(ids []uuid.UUID, id uuid.UUID, row int) {
	if s, ok := x.slot(ids, id); ok {
		x.slots[s] = int32(row + 1)
	}
}

// delete forgets id, shifting back the entries its slot was keeping from their
// home, so every probe still reaches its row.
func (x *rowIndex) delete(ids []uuid.UUID, id uuid.UUID) {
	hole, ok := x.slot(ids, id)
	if !ok {
		return
	}
	x.slots[hole] = 0
	x.n--
	mask := len(x.slots) - 1
	for s := (hole + 1) & mask; x.slots[s] != 0; s = (s + 1) & mask {
		home := x.home(ids[x.slots[s]-1])
		// The entry at s may fill the hole when its home is not cyclically within (hole, s].
		if (s-home)&mask >= (s-hole)&mask {
			x.slots[hole], x.slots[s] = x.slots[s], 0
			hole = s
		}
	}
}

// bytes is the table's memory.
func (x *rowIndex) bytes() int { return cap(x.slots) * 4 }
