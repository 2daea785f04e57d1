package embedded

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// floatFile holds a partition's exact rows, normalised float32, row i at byte
// offset i·dim·4, for the rerank of a search's short list. It is the partition's
// own file: created in the store's directory and unlinked at once, so it lives
// exactly as long as the open descriptor (a crash leaves nothing behind), no other
// process or store can see it, and it is rewritten from PostgreSQL by every load.
// Writes reach it under the partition's write lock in the same step as the codes,
// so the two never disagree.
//
// Rows are read with pread, not through a memory map: the pages then stay in the
// kernel's page cache, which the kernel shares and reclaims, instead of counting in
// the process's resident memory as touched pages of a mapping would. A search reads
// only its short list (tens of rows).
type floatFile struct {
	f         *os.File
	dim       int
	pending   []byte // encoded rows not yet written, the first of them row pendingAt
	pendingAt int
}

// floatFileBuffer is how many bytes of rows are gathered before one write: a load
// writes its rows in order, a few hundred at a time.
const floatFileBuffer = 1 << 20

// openFloatFile creates a partition's file in dir (made if missing).
func openFloatFile(dir string) (*floatFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded: vector file directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "partition-*.f32")
	if err != nil {
		return nil, fmt.Errorf("embedded: create vector file in %s: %w", dir, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("embedded: unlink vector file: %w", err)
	}
	return &floatFile{f: f}, nil
}

// reset empties the file for rows of dim components.
func (f *floatFile) reset(dim int) error {
	f.dim, f.pending, f.pendingAt = dim, f.pending[:0], 0
	if err := f.f.Truncate(0); err != nil {
		return fmt.Errorf("embedded: empty vector file: %w", err)
	}
	return nil
}

func (f *floatFile) rowBytes() int { return f.dim * 4 }

// put writes the normalised vector v as row i. Consecutive rows are gathered and
// written together; call flush before reading.
func (f *floatFile) put(i int, v []float32) error {
	if len(f.pending) > 0 && i != f.pendingAt+len(f.pending)/f.rowBytes() {
		if err := f.flush(); err != nil {
			return err
		}
	}
	if len(f.pending) == 0 {
		f.pendingAt = i
	}
	for _, x := range v {
		f.pending = binary.LittleEndian.AppendUint32(f.pending, math.Float32bits(x))
	}
	if len(f.pending) >= floatFileBuffer {
		return f.flush()
	}
	return nil
}

// flush writes the gathered rows.
func (f *floatFile) flush() error {
	if len(f.pending) == 0 {
		return nil
	}
	_, err := f.f.WriteAt(f.pending, int64(f.pendingAt)*int64(f.rowBytes()))
	f.pending = f.pending[:0]
	if err != nil {
		return fmt.Errorf("embedded: write vector file: %w", err)
	}
	return nil
}

// read reads row i into dst, using buf (rowBytes long) for the bytes. Safe for
// concurrent use once flushed.
func (f *floatFile) read(i int, dst []float32, buf []byte) error {
	if _, err := f.f.ReadAt(buf, int64(i)*int64(f.rowBytes())); err != nil {
		return fmt.Errorf("embedded: read vector file row %d: %w", i, err)
	}
	for j := range dst {
		dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[j*4:]))
	}
	return nil
}

// move copies row src over row dst.
func (f *floatFile) move(dst, src int) error {
	if err := f.flush(); err != nil {
		return err
	}
	buf := make([]byte, f.rowBytes())
	if _, err := f.f.ReadAt(buf, int64(src)*int64(f.rowBytes())); err != nil {
		return fmt.Errorf("embedded: read vector file row %d: %w", src, err)
	}
	if _, err := f.f.WriteAt(buf, int64(dst)*int64(f.rowBytes())); err != nil {
		return fmt.Errorf("embedded: write vector file: %w", err)
	}
	return nil
}

// close releases the file; its blocks go with it.
func (f *floatFile) close() error { return f.f.Close() }
