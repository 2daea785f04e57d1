package web

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without JavaScript, one form post carries several files: each is forwarded to
// the API on its own, and the page lists each file's outcome with a link to its
// reading, or the API's reason for refusing it.
func TestUploadSeveralFilesInOnePost(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, "/onboarding?step=llm", p.url, p.body)

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range []struct {
		name    string
		content []byte
	}{
		{"first.pdf", samplePDF("Spaced Repetition for Readers", paperPages)},
		{"notes.txt", []byte("These are notes, not a PDF.")},
		{"second.pdf", samplePDF("Interleaving for Readers", paperPages)},
	} {
		fw, err := mw.CreateFormFile("file", f.name)
		require.NoError(t, err)
		_, err = fw.Write(f.content)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	req, err := http.NewRequest(http.MethodPost, b.base+"/papers/upload", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	p = b.do(req)

	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/papers/upload", p.url)
	require.Equal(t, 3, strings.Count(p.body, "<li data-outcome="), p.body)
	require.Equal(t, 2, strings.Count(p.body, `<li data-outcome="reading">`), p.body)
	require.Contains(t, p.body, `<li data-outcome="refused">`)
	require.Contains(t, p.body, "notes.txt")
	require.Contains(t, p.body, "The file is not a PDF.")
	require.Equal(t, 2, strings.Count(p.body, `<a href="/papers/`), "a link to each paper's reading")
	require.Less(t, strings.Index(p.body, "first.pdf"), strings.Index(p.body, "notes.txt"), "files in the order sent")
	require.Less(t, strings.Index(p.body, "notes.txt"), strings.Index(p.body, "second.pdf"))
}
