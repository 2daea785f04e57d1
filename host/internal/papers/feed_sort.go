package papers

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The feed's sorts. Each pages by keyset on (its key, the paper id); a cursor names
// the sort it was issued for, so a cursor of one sort is a bad cursor in another.
const (
	// SortAdded (the default) is newest first: by when the paper joined the library
	// in library scope, by when it was discovered in corpus scope.
	SortAdded = "added"
	// SortYear is by publication date, newest first; papers without one come last.
	SortYear = "year"
	// SortTitle is by title, A to Z, ignoring case.
	SortTitle = "title"
)

// SortNames lists the valid sort names, sorted.
func SortNames() []string { return []string{SortAdded, SortTitle, SortYear} }

// MaxQueryLen is the longest text filter the feed accepts, in characters.
const MaxQueryLen = 200

// feedOrder is one sort in one scope: its key and id columns, direction, and how its
// key travels in a cursor.
type feedOrder struct {
	name  string
	key   string // SQL of the sort key
	id    string // SQL of the tie-breaking paper id
	dir   string // ASC or DESC
	after string // the keyset comparison that continues past a row in dir's order
	text  bool   // the key is text; otherwise a timestamp or date
	cast  string // the cast of a cursor's key to the key's type, so an index can serve the comparison
}

// noDate is the year sort's key of a paper without a publication date: after every
// real date in descending order. In library scope the year and title keys are
// read from user_library's sort_year and sort_title, which triggers keep equal to
// these expressions (migration 0012), so the library's own indexes serve the sort.
const noDate = `DATE '0001-01-01'`

func feedOrderOf(sort, scope string) (feedOrder, error) {
	idCol := "p.id"
	if scope == ScopeLibrary {
		idCol = "ul.paper_id"
	}
	switch sort {
	case SortAdded:
		key := "p.discovered_at"
		if scope == ScopeLibrary {
			key = "ul.added_at"
		}
		return feedOrder{name: sort, key: key, id: idCol, dir: "DESC", after: "<"}, nil
	case SortYear:
		key := "coalesce(p.publication_date, " + noDate + ")"
		if scope == ScopeLibrary {
			key = "ul.sort_year" // the same key, kept beside the row (migration 0012)
		}
		return feedOrder{name: sort, key: key, id: idCol, dir: "DESC", after: "<", cast: "::date"}, nil
	case SortTitle:
		key := "lower(p.title)"
		if scope == ScopeLibrary {
			key = "ul.sort_title"
		}
		return feedOrder{name: sort, key: key, id: idCol, dir: "ASC", after: ">", text: true}, nil
	}
	return feedOrder{}, &ViewError{Field: "sort", Value: sort, Valid: SortNames()}
}

// encodeCursor writes the key and id of a page's last row. The added sort keeps the
// cursor it always had ("time|id"); the others lead with their name.
func (o feedOrder) encodeCursor(key any, id uuid.UUID) string {
	var k string
	switch v := key.(type) {
	case time.Time:
		k = v.UTC().Format(time.RFC3339Nano)
	case string:
		k = v
	}
	if o.name != SortAdded {
		k = o.name + "|" + k
	}
	return base64.RawURLEncoding.EncodeToString([]byte(k + "|" + id.String()))
}

// decodeCursor reads a cursor this sort issued: its key as a query argument and the
// id; ErrBadCursor for anything else, a cursor of another sort included.
func (o feedOrder) decodeCursor(s string) (any, uuid.UUID, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, uuid.Nil, ErrBadCursor
	}
	i := strings.LastIndexByte(string(raw), '|')
	if i < 0 {
		return nil, uuid.Nil, ErrBadCursor
	}
	keyPart, idPart := string(raw[:i]), string(raw[i+1:])
	id, err := uuid.Parse(idPart)
	if err != nil {
		return nil, uuid.Nil, ErrBadCursor
	}
	if o.name != SortAdded {
		rest, ok := strings.CutPrefix(keyPart, o.name+"|")
		if !ok {
			return nil, uuid.Nil, ErrBadCursor
		}
		keyPart = rest
	}
	if o.text {
		return keyPart, id, nil
	}
	ts, err := time.Parse(time.RFC3339Nano, keyPart)
	if err != nil {
		return nil, uuid.Nil, ErrBadCursor
	}
	return ts, id, nil
}
