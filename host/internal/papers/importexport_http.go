package papers

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

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

// Export answers GET /api/library/export?format=bibtex|ris|csljson with the papers of
// the caller's library (not trashed).
func (a *API) Export(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "bibtex"
	}
	out, ok := exportFormats[format]
	if !ok {
		httpx.Err(w, r, httpx.Invalid("format must be bibtex, ris or csljson.", httpx.FieldError{Field: "format", Message: "must be bibtex, ris or csljson"}))
		return
	}
	entries, err := a.store.libraryEntries(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.Header().Set("Content-Type", out.contentType)
	w.Header().Set("Content-Disposition", `attachment; filename="lectern-library.`+out.ext+`"`)
	if err := out.write(w, entries); err != nil {
		httpx.Err(w, r, httpx.Internal(err))
	}
}
