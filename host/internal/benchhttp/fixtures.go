package benchhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// uploadFixtures uploads every PDF of dir through POST /api/papers/upload, one
// user after another, and waits until the host has read them all: the real
// ingest (pdftotext, chunking, the builtin embedding) on real papers, beside the
// generated corpus. It returns how many were read.
func (s *server) uploadFixtures(ctx context.Context, dir string, cookies []string, log *slog.Logger) (int, error) {
	pdfs, err := filepath.Glob(filepath.Join(dir, "*.pdf"))
	if err != nil {
		return 0, err
	}
	if len(pdfs) == 0 {
		return 0, fmt.Errorf("no PDF in %s (set LECTERN_FIXTURES to the fixtures folder)", dir)
	}
	slices.Sort(pdfs)
	type pending struct{ name, job, cookie string }
	var jobs []pending
	for i, path := range pdfs {
		cookie := cookies[i%len(cookies)]
		job, err := s.upload(ctx, path, cookie)
		if err != nil {
			return 0, err
		}
		if job != "" {
			jobs = append(jobs, pending{filepath.Base(path), job, cookie})
		}
	}
	read := len(pdfs) - len(jobs)
	for _, j := range jobs {
		state, err := s.waitJob(ctx, j.job, j.cookie)
		if err != nil {
			return read, fmt.Errorf("%s: %w", j.name, err)
		}
		if state != "succeeded" {
			return read, fmt.Errorf("%s: its ingest job ended %s; see %s", j.name, state, s.logPath)
		}
		read++
		log.Info("fixture read", "pdf", j.name)
	}
	return read, nil
}

// upload sends one PDF and returns its ingest job's id ("" when the host already
// had it).
func (s *server) upload(ctx context.Context, path, cookie string) (string, error) {
	pdf, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", filepath.Base(path))
	if err != nil {
		return "", err
	}
	if _, err := fw.Write(pdf); err != nil {
		return "", err
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/papers/upload", &body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
	var res struct {
		Job *struct {
			ID int64 `json:"id"`
		} `json:"job"`
	}
	status, err := getJSON(req, &res)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", filepath.Base(path), err)
	}
	switch {
	case status == http.StatusOK:
		return "", nil
	case status != http.StatusAccepted || res.Job == nil:
		return "", fmt.Errorf("upload %s: status %d", filepath.Base(path), status)
	}
	return strconv.FormatInt(res.Job.ID, 10), nil
}

// waitJob polls a job until it ends and returns its final state.
func (s *server) waitJob(ctx context.Context, id, cookie string) (string, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/jobs/"+id, nil)
		if err != nil {
			return "", err
		}
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
		var env struct {
			State string `json:"state"`
		}
		if _, err := getJSON(req, &env); err != nil {
			return "", err
		}
		switch env.State {
		case "succeeded", "failed", "cancelled":
			return env.State, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("job %s did not end within 10 minutes", id)
}

// getJSON sends req and decodes a JSON answer into v.
func getJSON(req *http.Request, v any) (int, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(b, v); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s: %w", req.URL.Path, err)
		}
	}
	return resp.StatusCode, nil
}
