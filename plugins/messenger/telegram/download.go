package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

const (
	// maxDownload is the largest file the Bot API lets a bot download (getFile:
	// "up to 20 MB").
	maxDownload = 20 << 20
	// downloadTimeout bounds reading one file.
	downloadTimeout = 2 * time.Minute
	// maxFileID bounds the file id passed on; Telegram's are under 200 characters.
	maxFileID = 512
)

// tgFile is getFile's result.
type tgFile struct {
	FileID   string `json:"file_id"`
	FileSize int64  `json:"file_size"`
	FilePath string `json:"file_path"`
}

// Download asks getFile where the file is, then reads it from
// <base>/file/bot<token>/<file_path>, at most req.MaxBytes (at most 20 MB, the
// Bot API's limit). That URL carries the token, so no error quotes it.
func (t *Telegram) Download(ctx context.Context, req *messenger.DownloadRequest, w io.Writer) error {
	id := strings.TrimSpace(req.FileID)
	if id == "" || len(id) > maxFileID {
		return protocol.BadRequest("telegram getFile: a file id of at most %d characters is required", maxFileID)
	}
	c, err := t.call(req.Credentials)
	if err != nil {
		return err
	}
	limit := int64(maxDownload)
	if req.MaxBytes > 0 && req.MaxBytes < limit {
		limit = req.MaxBytes
	}
	var f tgFile
	if err := t.do(ctx, c, &request{method: "getFile", params: map[string]string{"file_id": id}}, &f); err != nil {
		return err
	}
	if f.FileSize > limit {
		return tooLarge(limit)
	}
	path, err := filePath(f.FilePath)
	if err != nil {
		return err
	}
	return t.fetchFile(ctx, c, path, limit, w)
}

// filePath checks getFile's file_path ("documents/file_12.pdf") and escapes it
// for the URL: relative, no "." or ".." segment, no query or fragment.
func filePath(p string) (string, error) {
	if p == "" || len(p) > 1024 || strings.HasPrefix(p, "/") {
		return "", protocol.Unavailable(nil, "telegram getFile: the answer has no usable file path")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", protocol.Unavailable(nil, "telegram getFile: the answer has no usable file path")
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), nil
}

// fetchFile reads the file at path into w, refusing more than limit bytes.
func (t *Telegram) fetchFile(ctx context.Context, c *call, path string, limit int64, w io.Writer) error {
	fctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, c.s.baseURL+"/file/bot"+c.token+"/"+path, nil)
	if err != nil {
		return protocol.Unavailable(nil, "telegram: cannot build the file's request: %s", scrub(stripURL(err), c.token))
	}
	req.Header.Set("User-Agent", "lectern-telegram/"+version)
	res, err := t.http.Do(req)
	if err != nil {
		return t.fileError(ctx, fctx, c, err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		return protocol.NotFound("telegram: the file is no longer available (download links last an hour); send it again")
	case res.StatusCode >= 300:
		return protocol.Unavailable(nil, "telegram: the file could not be read (HTTP %d)", res.StatusCode)
	case res.ContentLength > limit:
		return tooLarge(limit)
	}
	dst := &keptWriter{w: w}
	n, err := io.Copy(dst, io.LimitReader(res.Body, limit+1))
	switch {
	case dst.err != nil:
		return dst.err
	case err != nil:
		return t.fileError(ctx, fctx, c, err)
	}
	if n > limit {
		return tooLarge(limit)
	}
	return nil
}

// fileError words a failure to reach or read the file, without the URL.
func (t *Telegram) fileError(ctx, fctx context.Context, c *call, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if fctx.Err() != nil {
		return protocol.Unavailable(nil, "telegram: the file was not read within %s", downloadTimeout)
	}
	return protocol.Unavailable(nil, "telegram: reading the file failed: %s", scrub(stripURL(err), c.token))
}

func tooLarge(limit int64) error {
	return protocol.BadRequest("telegram: the file is larger than %s, the most that can be taken", mib(limit))
}

// mib words a size in MB.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// keptWriter keeps its writer's error, which is the caller's and is passed on
// as it is, apart from the connection's.
type keptWriter struct {
	w   io.Writer
	err error
}

func (k *keptWriter) Write(p []byte) (int, error) {
	n, err := k.w.Write(p)
	k.err = err
	return n, err
}
