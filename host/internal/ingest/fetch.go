package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpapi/respond"
	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// MaxDownloadBytes bounds a PDF fetched from a link (the reference's 100 MB).
const MaxDownloadBytes = 100 << 20

// maxRedirects bounds the redirects a download follows.
const maxRedirects = 5

// Fetcher downloads PDFs from links a source gave or a user sent. It connects only
// to public addresses: the check runs on the address actually dialed, for the first
// request and every redirect, so a link cannot reach the host's own network (SSRF).
type Fetcher struct {
	client *http.Client
}

// NewFetcher returns a Fetcher whose connections pass check (netguard.PublicOnly in
// the host; tests allow their own local server through it).
func NewFetcher(check func(netip.AddrPort) error) *Fetcher {
	dialer := &net.Dialer{Timeout: 15 * time.Second, Control: netguard.DialControl(check)}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us and escape the check
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          4,
	}
	return &Fetcher{client: &http.Client{
		Transport: transport,
		Timeout:   5 * time.Minute,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			return checkURL(req.URL)
		},
	}}
}

// checkURL accepts http and https URLs without credentials.
func checkURL(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("only http and https links can be fetched")
	case u.User != nil:
		return fmt.Errorf("links with credentials are refused")
	case u.Hostname() == "":
		return fmt.Errorf("the link has no host")
	}
	return nil
}

// ErrFetch is a download that did not give a PDF; its message says why.
var ErrFetch = errors.New("ingest: download failed")

// Fetch downloads link into the store and returns the PDF's digest and size.
func (f *Fetcher) Fetch(ctx context.Context, store *Store, link string) (string, int64, error) {
	u, err := url.Parse(link)
	if err == nil {
		err = checkURL(u)
	}
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	req.Header.Set("User-Agent", "Lectern (self-hosted research assistant)")
	req.Header.Set("Accept", "application/pdf, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		// The clause says what happened; the raw text (addresses, resolver) stays in
		// the logs.
		return "", 0, &fetchError{reason: netguard.Reason(err), cause: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("%w: the server answered %s", ErrFetch, resp.Status)
	}
	sum, size, err := store.Put(io.LimitReader(resp.Body, MaxDownloadBytes+1))
	switch {
	case errors.Is(err, errNotPDF):
		return "", 0, fmt.Errorf("%w: the link does not lead to a PDF", ErrFetch)
	case err != nil:
		return "", 0, fmt.Errorf("%w: %v", ErrFetch, err)
	case size > MaxDownloadBytes:
		return "", 0, fmt.Errorf("%w: the PDF is larger than 100 MB", ErrFetch)
	}
	return sum, size, nil
}

// fetchError is a download that failed on the network: reason is for people,
// cause for the logs and DEV_ERROR_DETAIL.
type fetchError struct {
	reason string
	cause  error
}

func (e *fetchError) Error() string {
	return ErrFetch.Error() + ": " + e.reason + ": " + e.cause.Error()
}

func (e *fetchError) Is(target error) bool { return target == ErrFetch }

func (e *fetchError) Unwrap() error { return e.cause }

type ingestURLBody struct {
	URL string `json:"url"`
}

// IngestURL answers POST /api/papers/{id}/ingest {"url"?}: it downloads the paper's
// PDF (from url, else the paper's own pdf_url), adds the paper to the caller's
// library and enqueues ingest.pdf for it, in one transaction. The paper must be one
// the caller may see.
func (a *API) IngestURL(w http.ResponseWriter, r *http.Request) {
	paperID, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		respond.Err(w, r, respond.NotFound("No such paper."))
		return
	}
	var body ingestURLBody
	if r.ContentLength != 0 && !auth.DecodeJSON(w, r, &body) {
		return
	}
	user := auth.CallerFrom(r.Context()).UserID
	it, err := papers.New(a.pool).Get(r.Context(), user, paperID)
	if errors.Is(err, papers.ErrNotFound) {
		respond.Err(w, r, respond.NotFound("No such paper."))
		return
	}
	if err != nil {
		respond.Err(w, r, respond.Internal(err))
		return
	}
	link := strings.TrimSpace(body.URL)
	if link == "" {
		link = it.PDFURL
	}
	if link == "" {
		respond.Err(w, r, respond.Invalid("This paper has no PDF link; send one as \"url\".", respond.FieldError{Field: "url", Message: "is required for this paper"}))
		return
	}
	sum, size, err := a.fetcher.Fetch(r.Context(), a.store, link)
	if errors.Is(err, ErrFetch) {
		detail := strings.TrimPrefix(err.Error(), "ingest: ")
		var fe *fetchError
		if errors.As(err, &fe) {
			detail = "download failed: " + fe.reason
		}
		e := respond.Invalid(detail+".", respond.FieldError{Field: "url", Message: "could not be fetched as a PDF"})
		e.Cause = err
		respond.Err(w, r, e)
		return
	}
	if err != nil {
		respond.Err(w, r, respond.Internal(err))
		return
	}
	res := UploadResult{PaperID: paperID}
	err = pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		if err := papers.AddToLibraryTx(r.Context(), tx, user, paperID, "manual_save"); err != nil {
			return err
		}
		if _, err := tx.Exec(r.Context(), `UPDATE papers SET metadata = metadata || jsonb_build_object('download',
			jsonb_build_object('url', $2::text, 'sha256', $3::text, 'bytes', $4::bigint)) WHERE id = $1`, paperID, link, sum, size); err != nil {
			return err
		}
		var err error
		res.Job, err = a.queue.EnqueueTx(r.Context(), tx, user, Args{PaperID: paperID, SHA256: sum})
		return err
	})
	if err != nil {
		respond.Err(w, r, respond.Internal(err))
		return
	}
	respond.JSON(w, http.StatusAccepted, res)
}
