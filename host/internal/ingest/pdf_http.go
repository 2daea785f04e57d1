package ingest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"unicode"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// PDF answers GET /api/papers/{id}/pdf with the stored PDF of a paper the caller
// may see (papers.VisiblePDF says which one), through http.ServeContent: Range
// requests, If-Modified-Since, and the digest as ETag. A paper the caller may not
// see, one without a stored PDF, and one whose file is gone all answer 404 like a
// missing paper. The answer is the caller's alone: no cache keeps it, shared or not.
func (a *API) PDF(w http.ResponseWriter, r *http.Request) {
	notFound := httpx.NotFound("No such paper.")
	paperID, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		httpx.Err(w, r, notFound)
		return
	}
	ctx := r.Context()
	pdf, err := papers.New(a.pool).VisiblePDF(ctx, auth.CallerFrom(ctx).UserID, paperID)
	if errors.Is(err, papers.ErrNotFound) || (err == nil && !isDigest(pdf.SHA256)) {
		httpx.Err(w, r, notFound)
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	f, err := os.Open(a.store.Path(pdf.SHA256))
	if errors.Is(err, fs.ErrNotExist) {
		httpx.Err(w, r, notFound)
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	defer func() { _ = f.Close() }()
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", contentDisposition(pdf.Title))
	h.Set("Cache-Control", "private, no-store")
	h.Set("Vary", "Cookie")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"`+pdf.SHA256+`"`)
	http.ServeContent(w, r, "", pdf.Since, f)
}

// isDigest says whether sum is a hex SHA-256, the only name the store files a PDF
// under; anything else never reaches the file system.
func isDigest(sum string) bool {
	_, err := hex.DecodeString(sum)
	return err == nil && len(sum) == 64
}

// maxFilenameRunes bounds the file name a PDF is offered under.
const maxFilenameRunes = 120

// contentDisposition offers the PDF inline under the paper's title: filename= in
// plain ASCII (quotes, backslashes, control and other characters become "_"), and
// filename*= with the title in UTF-8 (RFC 6266).
func contentDisposition(title string) string {
	var clean []rune
	for _, c := range strings.Join(strings.Fields(title), " ") {
		if len(clean) == maxFilenameRunes {
			break
		}
		if !unicode.IsPrint(c) || strings.ContainsRune(`"\/:*?<>|`, c) {
			c = '_'
		}
		clean = append(clean, c)
	}
	name := strings.Trim(string(clean), " ._")
	if name == "" {
		name = "paper"
	}
	ascii := []rune(name)
	for i, c := range ascii {
		if c > unicode.MaxASCII {
			ascii[i] = '_'
		}
	}
	return `inline; filename="` + string(ascii) + `.pdf"; filename*=UTF-8''` + extValue(name+".pdf")
}

// extValue percent-encodes s as an RFC 5987 ext-value's value: every byte but the
// attr-chars.
func extValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < unicode.MaxASCII && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || strings.IndexByte("!#$&+-.^_`|~", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
