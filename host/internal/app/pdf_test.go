package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// getPDF asks for a paper's PDF as the holder of cookie, with extra headers.
func (b *testBundle) getPDF(t *testing.T, cookie string, paperID uuid.UUID, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	return b.do(t, req{method: http.MethodGet, path: "/api/papers/" + paperID.String() + "/pdf", cookie: cookie, headers: headers})
}

// TestPaperPDFIsServedToWhoMaySeeIt: the reader's PDF is the exact stored file,
// served in ranges, to the owner only while the paper is private, to everyone once
// it is shared; no cache may keep it across users.
func TestPaperPDFIsServedToWhoMaySeeIt(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "ann@example.org", "user")
	b.user(t, "bo@example.org", "user")
	ann, bo := b.signIn(t, "ann@example.org"), b.signIn(t, "bo@example.org")
	const fixture = "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"
	content := fixturetest.Read(t, fixture)
	paperID := b.uploadAndIngest(t, ann, fixture)
	ctx := context.Background()
	var title string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT title FROM papers WHERE id = $1`, paperID).Scan(&title))

	rec := b.getPDF(t, ann, paperID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, sha256.Sum256(content), sha256.Sum256(rec.Body.Bytes()), "the owner gets the very bytes uploaded")
	h := rec.Header()
	require.Equal(t, "application/pdf", h.Get("Content-Type"))
	require.Equal(t, "private, no-store", h.Get("Cache-Control"))
	require.Equal(t, "Cookie", h.Get("Vary"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	require.Equal(t, "bytes", h.Get("Accept-Ranges"))
	require.Contains(t, h.Get("Content-Disposition"), `inline; filename="`)
	require.NotEmpty(t, title)
	require.Contains(t, h.Get("Content-Disposition"), ".pdf\"")

	rec = b.getPDF(t, ann, paperID, map[string]string{"Range": "bytes=100-1123"})
	require.Equal(t, http.StatusPartialContent, rec.Code)
	require.Equal(t, content[100:1124], rec.Body.Bytes(), "a range is that slice of the file")
	require.Equal(t, "application/pdf", rec.Header().Get("Content-Type"))

	rec = b.getPDF(t, ann, paperID, map[string]string{"If-None-Match": h.Get("ETag")})
	require.Equal(t, http.StatusNotModified, rec.Code, "the digest names the content")
	require.NotEmpty(t, h.Get("Last-Modified"))
	rec = b.getPDF(t, ann, paperID, map[string]string{"If-Modified-Since": h.Get("Last-Modified")})
	require.Equal(t, http.StatusNotModified, rec.Code, "nothing changed since the PDF was read")

	// Bo may not see Ann's private upload: its PDF answers exactly like no paper.
	rec = b.getPDF(t, bo, paperID, nil)
	missing := b.getPDF(t, bo, uuid.New(), nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, missing.Code, rec.Code)
	require.Equal(t, errorCode(t, missing), errorCode(t, rec))
	require.NotContains(t, rec.Body.String(), paperID.String())

	// Shared with everyone, the paper's PDF is Bo's to read too.
	_, err := b.pool.Exec(ctx, `UPDATE papers SET visibility = 'public' WHERE id = $1`, paperID)
	require.NoError(t, err)
	rec = b.getPDF(t, bo, paperID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, sha256.Sum256(content), sha256.Sum256(rec.Body.Bytes()))

	// A paper without a stored PDF: 404.
	var bare uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility) VALUES ('No PDF here', 'upload', 'public') RETURNING id`).Scan(&bare))
	rec = b.getPDF(t, ann, bare, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, errorCode(t, missing), errorCode(t, rec))

	// Bo's private version of the shared paper serves his PDF, never the original's,
	// and only to him.
	other := fixturetest.Read(t, "pdfs/bmc_jtmo_2010_4_1_with_groundtruth.pdf")
	st, err := b.app.PDFs.Stage(bytes.NewReader(other), -1)
	require.NoError(t, err)
	defer st.Discard()
	var boUser uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT id FROM users WHERE email = 'bo@example.org'`).Scan(&boUser))
	var version uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if err := st.KeepTx(ctx, tx); err != nil {
			return err
		}
		version, err = papers.CreateVersionTx(ctx, tx, boUser, paperID, "https://example.org/bo.pdf", st.Sum, st.Size)
		return err
	}))
	rec = b.getPDF(t, bo, version, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, sha256.Sum256(other), sha256.Sum256(rec.Body.Bytes()), "a private version serves its own PDF")
	rec = b.getPDF(t, ann, version, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "and nobody else sees it")
}
