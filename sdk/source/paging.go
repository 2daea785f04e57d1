package source

import (
	"strconv"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// PageSize returns the page size a request for n papers gets: DefaultPageSize for
// 0 or less, at most MaxPageSize. The serve helper already applies it to every
// request; a source calls it again when it pages by hand or is called in process.
func PageSize(n int) int {
	switch {
	case n <= 0:
		return DefaultPageSize
	case n > MaxPageSize:
		return MaxPageSize
	}
	return n
}

// OffsetCursor is the cursor of a source that pages by offset: n in decimal.
func OffsetCursor(n int) string { return strconv.Itoa(n) }

// ParseOffset reads a cursor OffsetCursor wrote: "" is offset 0; otherwise the
// cursor must be a decimal offset, written exactly as OffsetCursor writes it, and
// below limit (the upstream's cap on offsets). Anything else is a
// protocol.ErrBadRequest naming the cursor.
func ParseOffset(cursor string, limit int) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(cursor)
	if err != nil || n < 0 || n >= limit || strconv.Itoa(n) != cursor {
		return 0, protocol.BadRequest("cursor %q is not one this source issued", cursor)
	}
	return n, nil
}
