package ingest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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

// Fetch downloads link into a staged file of the store (see Store): the caller
// keeps it with KeepTx, and discards it on every path.
func (f *Fetcher) Fetch(ctx context.Context, store *Store, link string) (*Staged, error) {
	u, err := url.Parse(link)
	if err == nil {
		err = checkURL(u)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	req.Header.Set("User-Agent", "Lectern (self-hosted research assistant)")
	req.Header.Set("Accept", "application/pdf, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		// The clause says what happened; the raw text (addresses, resolver) stays in
		// the logs.
		return nil, &fetchError{reason: netguard.Reason(err), cause: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: the server answered %s", ErrFetch, resp.Status)
	}
	st, err := store.Stage(resp.Body, MaxDownloadBytes)
	switch {
	case errors.Is(err, errNotPDF):
		return nil, fmt.Errorf("%w: the link does not lead to a PDF", ErrFetch)
	case errors.Is(err, errTooLarge):
		return nil, fmt.Errorf("%w: the PDF is larger than 100 MB", ErrFetch)
	case errors.Is(err, errBodyRead):
		return nil, fmt.Errorf("%w: the download broke off", ErrFetch)
	case err != nil:
		return nil, err
	}
	return st, nil
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

// reread reads a PDF again into the caller's own private paper, recording the link
// on it.
func (a *API) reread(ctx context.Context, user, paperID uuid.UUID, link string, st *Staged) (UploadResult, error) {
	res := UploadResult{PaperID: paperID, Status: StatusQueued, Message: "Lectern is reading the PDF into your paper."}
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		if err := st.KeepTx(ctx, tx); err != nil {
			return err
		}
		if err := papers.RecordDownloadTx(ctx, tx, paperID, link, st.Sum, st.Size); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		var err error
		res.Job, err = a.queue.EnqueueTx(ctx, tx, user, Args{PaperID: paperID, SHA256: st.Sum})
		return err
	})
	return res, err
}

// fill reads the PDF of a shared paper's own pdf_url into that paper, which has no
// text yet, and adds it to the caller's library. Nothing of the caller is written
// on the shared row.
func (a *API) fill(ctx context.Context, user, paperID uuid.UUID, st *Staged) (UploadResult, error) {
	res := UploadResult{PaperID: paperID, Status: StatusQueued, Message: "Lectern is fetching and reading the paper's PDF."}
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		if err := st.KeepTx(ctx, tx); err != nil {
			return err
		}
		if err := papers.AddToLibraryTx(ctx, tx, user, paperID, "manual_save"); err != nil {
			return err
		}
		var err error
		res.Job, err = a.queue.EnqueueTx(ctx, tx, user, Args{PaperID: paperID, SHA256: st.Sum})
		return err
	})
	return res, err
}

// version makes the PDF the caller's own private version of a paper others read,
// unless the caller or the corpus already has its text.
func (a *API) version(ctx context.Context, user, paperID uuid.UUID, link string, st *Staged) (UploadResult, error) {
	var res UploadResult
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		if err := st.KeepTx(ctx, tx); err != nil {
			return err
		}
		id, err := findCopyTx(ctx, tx, user, st.Sum)
		if err == nil {
			res = UploadResult{PaperID: id, Status: StatusExisting, Message: "Lectern already has this PDF's text; that paper is in your library."}
			return nil
		}
		if !errors.Is(err, papers.ErrNotFound) {
			return err
		}
		if id, err = CreateVersionTx(ctx, tx, user, paperID, link, st.Sum, st.Size); err != nil {
			return err
		}
		res = UploadResult{PaperID: id, Status: StatusQueued, VersionOf: &paperID,
			Message: "Other readers share this paper, so Lectern is reading your PDF into your own private version of it."}
		res.Job, err = a.queue.EnqueueTx(ctx, tx, user, Args{PaperID: id, SHA256: st.Sum})
		return err
	})
	return res, err
}
