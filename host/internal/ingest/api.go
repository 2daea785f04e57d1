package ingest

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/ratelimit"
)

// API serves POST /api/papers/upload and POST /api/papers/{id}/ingest.
type API struct {
	pool    *pgxpool.Pool
	store   *Store
	queue   *jobs.Service
	fetcher *Fetcher
	uploads *ratelimit.Limiter
}

// NewAPI returns the upload API; fetcher downloads PDFs from links.
func NewAPI(pool *pgxpool.Pool, store *Store, queue *jobs.Service, fetcher *Fetcher) *API {
	return &API{pool: pool, store: store, queue: queue, fetcher: fetcher,
		uploads: ratelimit.New("PDF upload", UploadsPerWindow, UploadWindow)}
}

var errTooLargeResponse = &httpx.Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Detail: "The PDF is larger than 50 MB."}

// noSpaceResponse is a PDF the data folder had no room for: the server's state,
// not the client's fault, and nothing was kept, so the client may send it again.
func noSpaceResponse(cause error) *httpx.Error {
	return &httpx.Error{Status: http.StatusInsufficientStorage, Code: "insufficient_storage",
		Detail: "The server's disk is full, so the PDF was not kept; try again later, or ask the administrator to free space.", Cause: cause}
}

// Upload answers POST /api/papers/upload (multipart, field "file"): the content must
// be a PDF whatever its name says. A body announced larger than the limit is
// refused before it is read; the file part is streamed into the store, so no
// multipart temporary file exists. A PDF the caller already has, or whose text the
// shared corpus already holds, answers 200 with that paper (added to the caller's
// library). Otherwise the paper is created private to the uploader and added to
// their library in the same transaction as its ingest.pdf job: 202 with the paper id
// and the job. Nothing is kept of a refused or failed upload.
func (a *API) Upload(w http.ResponseWriter, r *http.Request) {
	user := auth.CallerFrom(r.Context()).UserID
	if ok, wait := a.uploads.Allow(user.String()); !ok {
		a.uploads.Refuse(w, r, wait)
		return
	}
	if r.ContentLength > MaxUploadBytes+multipartSlack {
		httpx.Err(w, r, errTooLargeResponse)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUploadBytes+multipartSlack)
	part, filename, ferr := filePart(r)
	if ferr != nil {
		httpx.Err(w, r, ferr)
		return
	}
	st, err := a.store.Stage(part, MaxUploadBytes)
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, errTooLarge), errors.As(err, &tooBig):
		httpx.Err(w, r, errTooLargeResponse)
		return
	case errors.Is(err, errNotPDF):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusUnsupportedMediaType, Code: "not_a_pdf", Detail: "The file is not a PDF."})
		return
	case errors.Is(err, errBodyRead):
		httpx.Err(w, r, httpx.BadRequest("The upload was cut short; send the PDF again."))
		return
	case errors.Is(err, ErrNoSpace):
		httpx.Err(w, r, noSpaceResponse(err))
		return
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	defer st.Discard()
	res, err := a.keepUpload(r.Context(), user, uploadTitle(filename), filename, st)
	a.answer(w, r, res, err, st.Sum)
}

// answer answers an upload or a fetch whose PDF (digest sum) was kept as res: 202
// when a job reads it, 200 for a paper that already existed. A failed transaction
// releases the PDF first.
func (a *API) answer(w http.ResponseWriter, r *http.Request, res UploadResult, err error, sum string) {
	if err != nil {
		a.release(r.Context(), sum)
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	status := http.StatusAccepted
	if res.Status == StatusExisting {
		status = http.StatusOK
	}
	httpx.JSON(w, status, res)
}

// filePart finds the multipart part "file" and returns it unread, with its file name.
func filePart(r *http.Request) (io.Reader, string, *httpx.Error) {
	missing := httpx.Invalid("Send the PDF as multipart/form-data in the field \"file\".", httpx.FieldError{Field: "file", Message: "is required"})
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, "", missing
	}
	for {
		p, err := mr.NextPart()
		var tooBig *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			return nil, "", missing
		case errors.As(err, &tooBig):
			return nil, "", errTooLargeResponse
		case err != nil:
			return nil, "", httpx.BadRequest("The multipart body cannot be read; send the PDF again in the field \"file\".")
		}
		if p.FormName() == "file" {
			return p, p.FileName(), nil
		}
		if _, err := io.Copy(io.Discard, p); err != nil {
			if errors.As(err, &tooBig) {
				return nil, "", errTooLargeResponse
			}
			return nil, "", httpx.BadRequest("The multipart body cannot be read; send the PDF again in the field \"file\".")
		}
	}
}

type ingestURLBody struct {
	URL string `json:"url"`
}

// IngestURL answers POST /api/papers/{id}/ingest {"url"?}: it reads a paper's PDF
// from a link. The paper must be one the caller may see. What the PDF becomes
// depends on who else reads the paper (docs/ownership.md, "Whose text a PDF
// becomes"); nothing the caller sends changes what another user reads:
//
//   - the caller's own private paper, held by no one else: the PDF (from url, else
//     its pdf_url) is read into it again; 202.
//   - a shared paper (public or instance-level) without text, no url or its own
//     pdf_url: the PDF from its recorded pdf_url fills the shared paper, which joins
//     the caller's library; 202.
//   - a shared paper that has text, no url: it joins the caller's library, nothing
//     is fetched; 200 with status "existing".
//   - otherwise (a link of the caller's on a paper others read): the PDF becomes the
//     caller's own private version of the paper, a new paper in their library
//     linked by version_of; 202 with its id. A PDF whose text the caller or the
//     corpus already has answers 200 with that paper instead.
func (a *API) IngestURL(w http.ResponseWriter, r *http.Request) {
	paperID, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound("No such paper."))
		return
	}
	var body ingestURLBody
	if r.ContentLength != 0 && !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	it, err := papers.New(a.pool).Get(ctx, user, paperID)
	if errors.Is(err, papers.ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("No such paper."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	held, err := papers.New(a.pool).HoldingOf(ctx, user, paperID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	corpus, mine, hasText := held.Shared, held.Mine, held.HasText
	link := strings.TrimSpace(body.URL)
	ownLink := link == "" || link == it.PDFURL
	if corpus && hasText && link == "" {
		if err := papers.AddToLibraryTx(ctx, a.pool, user, paperID, "manual_save"); err != nil {
			httpx.Err(w, r, httpx.Internal(err))
			return
		}
		httpx.JSON(w, http.StatusOK, UploadResult{PaperID: paperID, Status: StatusExisting,
			Message: "The paper's text is already in Lectern; it is in your library."})
		return
	}
	if link == "" {
		link = it.PDFURL
	}
	if link == "" {
		httpx.Err(w, r, httpx.Invalid("This paper has no PDF link; send one as \"url\".", httpx.FieldError{Field: "url", Message: "is required for this paper"}))
		return
	}
	if ok, wait := a.uploads.Allow(user.String()); !ok {
		a.uploads.Refuse(w, r, wait)
		return
	}
	st, err := a.fetcher.Fetch(ctx, a.store, link)
	if errors.Is(err, ErrFetch) {
		detail := strings.TrimPrefix(err.Error(), "ingest: ")
		var fe *fetchError
		if errors.As(err, &fe) {
			detail = "download failed: " + fe.reason
		}
		e := httpx.Invalid(detail+".", httpx.FieldError{Field: "url", Message: "could not be fetched as a PDF"})
		e.Cause = err
		httpx.Err(w, r, e)
		return
	}
	if errors.Is(err, ErrNoSpace) {
		httpx.Err(w, r, noSpaceResponse(err))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	defer st.Discard()
	var res UploadResult
	switch {
	case mine:
		res, err = a.reread(ctx, user, paperID, link, st)
	case corpus && !hasText && ownLink:
		res, err = a.fill(ctx, user, paperID, st)
	default:
		res, err = a.version(ctx, user, paperID, link, st)
	}
	a.answer(w, r, res, err, st.Sum)
}
