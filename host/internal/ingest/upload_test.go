package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// countingReader counts what the handler read of a body.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// multipartPDF is a multipart body with content in the field "file".
func multipartPDF(t *testing.T, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "big.pdf")
	require.NoError(t, err)
	_, err = fw.Write(content)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return buf.Bytes(), mw.FormDataContentType()
}

// requireEmptyDir fails when dir holds any file (a missing dir is empty).
func requireEmptyDir(t *testing.T, dir, what string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Empty(t, names, what)
}

// Not parallel: it points TMPDIR, where mime/multipart would spill a large part, at
// a folder of its own.
func TestAnOversizedUploadLeavesNoFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b := setup(t)
	// Two PDFs over the 50 MB limit: 51 MB, whose body is over the limit plus the
	// multipart allowance, and one just over 50 MB, whose body is not, so only the
	// size of the PDF itself refuses it.
	send := func(t *testing.T, size int, announce bool) (*httptest.ResponseRecorder, int64) {
		body, ct := multipartPDF(t, append([]byte("%PDF-1.4\n"), make([]byte, size)...))
		rd := &countingReader{r: bytes.NewReader(body)}
		r := httptest.NewRequest(http.MethodPost, "/api/papers/upload", rd)
		r.Header.Set("Content-Type", ct)
		r.ContentLength = -1
		if announce {
			r.ContentLength = int64(len(body))
		}
		// The caller goes on a copy of the request, as the host's middleware does.
		r = r.WithContext(auth.WithCaller(r.Context(), auth.Caller{UserID: b.ann, Role: "user"}))
		rec := httptest.NewRecorder()
		b.api.Upload(rec, r)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), "larger than 50 MB")
		return rec, rd.n.Load()
	}
	const mb51, justOver = 51 << 20, MaxUploadBytes + 500_000
	t.Run("51 MB with its length", func(t *testing.T) {
		_, read := send(t, mb51, true)
		require.Zero(t, read, "a body announced too large is refused before it is read")
	})
	t.Run("51 MB without a length", func(t *testing.T) { send(t, mb51, false) })
	t.Run("just over 50 MB with its length", func(t *testing.T) { send(t, justOver, true) })
	t.Run("just over 50 MB without a length", func(t *testing.T) { send(t, justOver, false) })
	requireEmptyDir(t, b.api.store.dir, "nothing of a refused upload is in the data folder")
	requireEmptyDir(t, tmp, "no multipart temporary file is left")
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM papers`).Scan(&n))
	require.Zero(t, n)
}

func TestAFailedUploadLeavesNoFile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A caller the database does not know: creating the paper fails.
	rec, _ := b.upload(t, uuid.New(), "orphan.pdf", []byte("%PDF-1.4\n% a PDF whose paper cannot be created\n%%EOF\n"))
	require.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())
	requireEmptyDir(t, b.api.store.dir, "the stored file goes when its transaction fails")

	// But a file another paper refers to stays.
	pdf := []byte("%PDF-1.4\n% kept because Ann's paper refers to it\n%%EOF\n")
	rec, _ = b.upload(t, b.ann, "kept.pdf", pdf)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	rec, _ = b.upload(t, uuid.New(), "same.pdf", pdf)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	_, err := os.Stat(b.api.store.Path(digest(pdf)))
	require.NoError(t, err, "the file Ann's paper refers to is kept")
}

func TestReuploadsAreNotDuplicates(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/clef2008_wang_answer_validation_word.pdf")
	b := setup(t)
	ctx := context.Background()
	countPapers := func() (n int) {
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM papers`).Scan(&n))
		return n
	}

	// Six uploads of one PDF at once by Ann make one paper and one job.
	const parallel = 6
	var wg sync.WaitGroup
	codes, ids := make([]int, parallel), make([]uuid.UUID, parallel)
	var job atomic.Int64
	for i := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, res := b.upload(t, b.ann, "paper "+strconv.Itoa(i)+".pdf", pdf)
			codes[i], ids[i] = rec.Code, res.PaperID
			if res.Job != nil {
				job.Store(res.Job.ID)
			}
		}()
	}
	wg.Wait()
	accepted := 0
	for i := range parallel {
		require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, codes[i])
		if codes[i] == http.StatusAccepted {
			accepted++
		}
		require.Equal(t, ids[0], ids[i], "every upload answers with the same paper")
	}
	require.Equal(t, 1, accepted, "one upload creates the paper, the others find it")
	require.Equal(t, 1, countPapers())
	state, output := b.waitJob(t, job.Load())
	require.Equal(t, "completed", state, output)
	annPaper := ids[0]

	// Once read, the same PDF again: 200, the same paper, no job, no new file.
	rec, res := b.upload(t, b.ann, "again.pdf", pdf)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, annPaper, res.PaperID)
	require.Nil(t, res.Job)
	require.Equal(t, StatusExisting, res.Status)
	var jobs int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'ingest.pdf'`).Scan(&jobs))
	require.Equal(t, 1, jobs)
	entries, err := os.ReadDir(b.api.store.dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one file for one PDF")

	// Bob uploads it too: Ann's copy is private, so he gets his own, and learns
	// nothing of hers.
	rec, res = b.upload(t, b.bob, "bob.pdf", pdf)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.NotEqual(t, annPaper, res.PaperID)
	require.NotContains(t, rec.Body.String(), annPaper.String())
	state, output = b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)

	// A PDF whose text the shared corpus holds links that paper into the uploader's
	// library.
	shared := []byte("%PDF-1.4\n% the PDF of a public paper\n%%EOF\n")
	var public uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility) VALUES ('Public paper', 'arxiv', 'public') RETURNING id`).Scan(&public))
	_, err = b.pool.Exec(ctx, `INSERT INTO paper_texts (paper_id, extractor, content, page_count, sha256) VALUES ($1, 'test', 'text', 1, decode($2, 'hex'))`,
		public, digest(shared))
	require.NoError(t, err)
	before := countPapers()
	rec, res = b.upload(t, b.bob, "public.pdf", shared)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, public, res.PaperID)
	require.Nil(t, res.Job)
	require.Equal(t, before, countPapers())
	var inLibrary bool
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM user_library WHERE user_id = $1 AND paper_id = $2)`, b.bob, public).Scan(&inLibrary))
	require.True(t, inLibrary)
}

func TestUploadsAreRateLimitedPerUser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	notPDF := []byte("<html>not a pdf</html>")
	for i := range UploadsPerWindow {
		rec, _ := b.upload(t, b.ann, "x.pdf", notPDF)
		require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, "upload %d", i+1)
	}
	rec, _ := b.upload(t, b.ann, "x.pdf", notPDF)
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	var body struct{ Code string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	require.Equal(t, "rate_limited", body.Code)
	rec, _ = b.upload(t, b.bob, "x.pdf", notPDF)
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, "another user has his own allowance")
}

func TestAnyFileNameMakesATitle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pdf := []byte("%PDF-1.4\n% a PDF with a very long name\n%%EOF\n")
	rec, res := b.upload(t, b.ann, strings.Repeat("é", 1500)+".pdf", pdf)
	require.Equal(t, http.StatusAccepted, rec.Code, "a name the papers table would refuse is cut, never a 500: %s", rec.Body.String())
	var title string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT title FROM papers WHERE id = $1`, res.PaperID).Scan(&title))
	require.Equal(t, strings.Repeat("é", 1000), title, "the first 1000 characters")
}
