package learning

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// MaxImportCards bounds one card import.
const MaxImportCards = 20000

// ownedDeck checks the deck of the path is the caller's and returns its id and name.
func (a *API) ownedDeck(r *http.Request) (uuid.UUID, string, error) {
	id, err := pathUUID(r, "id")
	if err != nil {
		return uuid.Nil, "", err
	}
	name, err := a.store.DeckName(r.Context(), caller(r), id)
	return id, name, err
}

// ExportDeck answers GET /api/decks/{id}/export?format=anki|csv with the deck's
// cards (drafts left out). "anki" is Anki's plain-text import format: tab-separated
// front, back and tags, with the header lines (#separator, #html, #tags column,
// #deck) that Anki 2.1.55 and later read, so File > Import needs no settings. "csv"
// is front,back,tags with a header row, what POST .../import reads back.
func (a *API) ExportDeck(w http.ResponseWriter, r *http.Request) {
	deck, name, err := a.ownedDeck(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "anki"
	}
	if format != "anki" && format != "csv" {
		fail(w, r, invalid("format", "must be anki or csv"))
		return
	}
	cards, err := a.store.ExportCards(r.Context(), caller(r), deck)
	if err != nil {
		fail(w, r, err)
		return
	}
	file := strings.Map(func(r rune) rune {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, name)
	if format == "anki" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+file+`.txt"`)
		fmt.Fprintf(w, "#separator:tab\n#html:false\n#tags column:3\n#deck:%s\n", oneLine(name))
		for _, c := range cards {
			fmt.Fprintf(w, "%s\t%s\t%s\n", ankiField(c.Front), ankiField(c.Back), strings.Join(ankiTags(c.Tags), " "))
		}
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+file+`.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"front", "back", "tags"})
	for _, c := range cards {
		_ = cw.Write([]string{c.Front, c.Back, strings.Join(c.Tags, " ")})
	}
	cw.Flush()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ankiField keeps a field on one line: Anki's plain-text format has no escapes, so
// tabs become spaces and line breaks become <br> (shown as breaks by Anki).
func ankiField(s string) string {
	s = strings.ReplaceAll(s, "\t", " ")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "<br>")
	return s
}

func ankiTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t = strings.Join(strings.Fields(t), "_"); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// ImportResult says what a card import did.
type ImportResult struct {
	Imported int               `json:"imported"`
	Errors   []ImportLineError `json:"errors"`
}

// ImportLineError is a CSV row that was not imported.
type ImportLineError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// ImportDeck answers POST /api/decks/{id}/import: a CSV file with a header row
// naming the columns front and back (required) and tags (optional, space-separated).
// Good rows become active new cards of the deck in one transaction; bad rows are
// reported by line and skipped.
func (a *API) ImportDeck(w http.ResponseWriter, r *http.Request) {
	deck, _, err := a.ownedDeck(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	cr := csv.NewReader(http.MaxBytesReader(w, r.Body, 10<<20))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		fail(w, r, invalid("body", "must be a CSV file with a header row (front,back,tags)"))
		return
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	fi, okF := col["front"]
	bi, okB := col["back"]
	ti, okT := col["tags"]
	if !okF || !okB {
		fail(w, r, invalid("body", "the header row must name the columns front and back"))
		return
	}
	res := ImportResult{Errors: []ImportLineError{}}
	var good []CardText
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				res.Errors = append(res.Errors, ImportLineError{Line: pe.Line, Message: pe.Err.Error()})
				continue
			}
			fail(w, r, httpx.BadRequest("The file could not be read: "+err.Error()))
			return
		}
		line, _ := cr.FieldPos(0)
		get := func(i int) string {
			if i < len(rec) {
				return rec[i]
			}
			return ""
		}
		front, back := strings.TrimSpace(get(fi)), get(bi)
		switch {
		case front == "":
			res.Errors = append(res.Errors, ImportLineError{Line: line, Message: "front is empty"})
			continue
		case utf8.RuneCountInString(front) > maxTextChars || utf8.RuneCountInString(back) > maxTextChars:
			res.Errors = append(res.Errors, ImportLineError{Line: line, Message: "a field is over 20000 characters"})
			continue
		}
		var tags []string
		if okT {
			tags = strings.Fields(get(ti))
		}
		if tags == nil {
			tags = []string{}
		}
		good = append(good, CardText{Front: front, Back: back, Tags: tags})
		if len(good) > MaxImportCards {
			fail(w, r, invalid("body", fmt.Sprintf("at most %d cards per import", MaxImportCards)))
			return
		}
	}
	err = a.store.ImportCards(r.Context(), caller(r), deck, good)
	if err != nil {
		fail(w, r, err)
		return
	}
	res.Imported = len(good)
	httpx.JSON(w, http.StatusOK, res)
}
