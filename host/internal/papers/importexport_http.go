package papers

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/bibio"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// detectFormat picks bibtex or ris from ?format=, the content type, or the content.
func detectFormat(r *http.Request, body string) string {
	switch f := strings.ToLower(r.URL.Query().Get("format")); f {
	case "bibtex", "ris":
		return f
	case "":
	default:
		return "unknown:" + f
	}
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	switch {
	case strings.Contains(ct, "bibtex"):
		return "bibtex"
	case strings.Contains(ct, "research-info-systems"), strings.Contains(ct, "ris"):
		return "ris"
	}
	trimmed := strings.TrimLeft(strings.TrimPrefix(body, "\ufeff"), " \t\r\n")
	if strings.HasPrefix(trimmed, "TY  -") {
		return "ris"
	}
	return "bibtex"
}

// Import answers POST /api/library/import: a BibTeX or RIS file in the body (format
// from ?format=, the content type, or the content). Good entries join the caller's
// library, each in its own savepoint; bad ones are reported by line and lose nothing
// else.
func (a *API) Import(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxImportBytes))
	if err != nil {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large",
			Detail: fmt.Sprintf("The file is larger than %d MB.", MaxImportBytes>>20)})
		return
	}
	body := string(raw)
	if apiErr := httpx.CheckText("file", body); apiErr != nil {
		httpx.Err(w, r, apiErr)
		return
	}
	format := detectFormat(r, body)
	var entries []bibio.Entry
	var errs []bibio.LineError
	switch format {
	case "bibtex":
		entries, errs = bibio.ParseBibTeX(body)
	case "ris":
		entries, errs = bibio.ParseRIS(body)
	default:
		httpx.Err(w, r, httpx.Invalid("format must be bibtex or ris.", httpx.FieldError{Field: "format", Message: "must be bibtex or ris"}))
		return
	}
	if len(entries) == 0 && len(errs) == 0 {
		httpx.Err(w, r, httpx.Invalid("The file holds no entries.", httpx.FieldError{Field: "body", Message: "no BibTeX or RIS entries found"}))
		return
	}
	ctx := r.Context()
	res, err := a.store.ImportEntries(ctx, auth.CallerFrom(ctx).UserID, format, entries)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	// An entry refused for its own fault is said in words; anything else (the
	// database's text) goes to the log only.
	for _, f := range res.failures {
		slog.ErrorContext(ctx, "import entry", "request_id", httpx.RequestID(ctx), "line", f.line, "error", f.err)
	}
	res.Errors = append(errs, res.Errors...)
	res.Failed = len(res.Errors)
	if res.Errors == nil {
		res.Errors = []bibio.LineError{}
	}
	httpx.JSON(w, http.StatusOK, res)
}

// Export answers GET /api/library/export?format=bibtex|ris|csljson. With id=
// (repeated, at most MaxExportIDs) it exports those papers the caller may see, in
// that order, leaving out the others as if they had not been named; without, every
// paper that view=, scope=, sort= and q= select, as the feed reads them: by default
// the caller's whole library, trash left out.
func (a *API) Export(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "bibtex"
	}
	out, ok := exportFormats[format]
	if !ok {
		httpx.Err(w, r, httpx.Invalid("format must be bibtex, ris or csljson.", httpx.FieldError{Field: "format", Message: "must be bibtex, ris or csljson"}))
		return
	}
	p, apiErr := exportParams(q)
	if apiErr != nil {
		httpx.Err(w, r, apiErr)
		return
	}
	entries, err := a.store.ExportEntries(r.Context(), auth.CallerFrom(r.Context()).UserID, p)
	var ve *ViewError
	switch {
	case errors.As(err, &ve):
		httpx.Err(w, r, httpx.Invalid(ve.Error(), httpx.FieldError{Field: ve.Field, Message: "must be one of " + strings.Join(ve.Valid, ", ")}))
		return
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.Header().Set("Content-Type", out.contentType)
	w.Header().Set("Content-Disposition", `attachment; filename="lectern-library.`+out.ext+`"`)
	if err := out.write(w, entries); err != nil {
		httpx.Err(w, r, httpx.Internal(err))
	}
}

// exportParams reads an export's selection from its query: the ids, each once,
// or the feed's filter.
func exportParams(q url.Values) (ExportParams, *httpx.Error) {
	p := ExportParams{Filter: FeedParams{View: q.Get("view"), Scope: q.Get("scope"), Sort: q.Get("sort"), Query: q.Get("q")}}
	if utf8.RuneCountInString(p.Filter.Query) > MaxQueryLen {
		return p, httpx.Invalid("The filter text is too long.", httpx.FieldError{Field: "q", Message: "must be at most " + strconv.Itoa(MaxQueryLen) + " characters"})
	}
	raw := q["id"]
	if len(raw) > MaxExportIDs {
		return p, httpx.Invalid(fmt.Sprintf("Export at most %d papers by id at a time, or export all that match a filter.", MaxExportIDs),
			httpx.FieldError{Field: "id", Message: fmt.Sprintf("at most %d", MaxExportIDs)})
	}
	seen := make(map[uuid.UUID]bool, len(raw))
	for _, s := range raw {
		id, err := uuid.Parse(s)
		if err != nil {
			return p, httpx.Invalid("An id is not a paper id.", httpx.FieldError{Field: "id", Message: "must be a UUID"})
		}
		if !seen[id] {
			seen[id] = true
			p.IDs = append(p.IDs, id)
		}
	}
	return p, nil
}
