package source

import (
	"strconv"
	"strings"

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

// A source that pages with an upstream cursor (Crossref's next-cursor, OpenAlex's
// next_cursor) also counts the papers it has handed out, because the upstream
// hands out a next cursor even on its last page. Its cursor is
// "c:<papers seen so far>:<upstream cursor>".

// ParseUpstreamCursor reads a cursor NextUpstreamCursor wrote: "" is the start
// (seen 0, upstream "*"). Anything else that is not such a cursor is a
// protocol.ErrBadRequest naming the cursor.
func ParseUpstreamCursor(cursor string) (seen int, upstream string, err error) {
	if cursor == "" {
		return 0, "*", nil
	}
	rest, ok := strings.CutPrefix(cursor, "c:")
	n, next, ok2 := strings.Cut(rest, ":")
	seen, err = strconv.Atoi(n)
	if !ok || !ok2 || err != nil || seen < 0 || next == "" {
		return 0, "", protocol.BadRequest("cursor %q is not one this source issued", cursor)
	}
	return seen, next, nil
}

// NextUpstreamCursor is the cursor of the page after one that brought got papers
// (of size asked for), seen in all, out of total: "" when the listing ends there
// (no upstream cursor, a short page, or total reached).
func NextUpstreamCursor(seen, got, size int, total int64, upstream string) string {
	if upstream == "" || got < size || int64(seen) >= total {
		return ""
	}
	return "c:" + strconv.Itoa(seen) + ":" + upstream
}
