package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// uploadResult is what POST /api/papers/upload answers.
type uploadResult struct {
	PaperID string `json:"paper_id"`
	Message string `json:"message"`
}

// document adds a PDF sent to a paired chat to its user's library, as an upload
// through the API would: the messenger passes the file on, the API checks it is a
// PDF, keeps it and starts reading it.
func (b *Bot) document(ctx context.Context, c *chat, d *messenger.Document) error {
	if !looksLikePDF(d) {
		return b.send(ctx, c.id, "I can add PDFs to your library, and this file is not one. Send the paper as a PDF.", nil)
	}
	if d.Size > ingest.MaxUploadBytes {
		return b.send(ctx, c.id, fmt.Sprintf("That PDF is larger than %d MB, the most Lectern takes.", ingest.MaxUploadBytes>>20), nil)
	}
	dl, ok := b.cfg.Transport.(messenger.WithDownloads)
	if !ok {
		return b.send(ctx, c.id, b.uploadInstead("This messenger does not pass files on to Lectern."), nil)
	}
	if allowed, wait := b.limits.allow(c.id, "document", limitDefault); !allowed {
		return b.send(ctx, c.id, fmt.Sprintf("Too many files at once. Send it again in %d seconds.", int(wait.Seconds())+1), nil)
	}
	creds, err := b.cfg.CredentialsFunc(ctx)
	if err != nil {
		b.cfg.Logger.ErrorContext(ctx, "bot: messenger credentials", "error", err)
		return b.send(ctx, c.id, failedText, nil)
	}
	// The file streams from the messenger into the upload, so a chat's PDF is
	// never held whole in the bot's memory.
	fetch := func(w io.Writer) error {
		return dl.Download(ctx, &messenger.DownloadRequest{Credentials: creds, FileID: d.FileID, MaxBytes: ingest.MaxUploadBytes}, w)
	}
	var res uploadResult
	err = b.cfg.API.Upload(ctx, c.pairing.UserID, uploadName(d.FileName), fetch, &res)
	var source *SourceError
	switch {
	case errors.As(err, &source):
		return b.send(ctx, c.id, b.downloadFailure(ctx, source.Err), nil)
	case err != nil:
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	text := res.Message
	if text == "" {
		text = "The PDF is in your library."
	}
	var buttons [][]messenger.Button
	if b.cfg.DashboardURL != "" && res.PaperID != "" {
		buttons = [][]messenger.Button{{{Text: "Open in Lectern", URL: b.cfg.DashboardURL + "/papers/" + url.PathEscape(res.PaperID)}}}
	}
	return b.send(ctx, c.id, text, buttons)
}

// downloadFailure words why the messenger did not pass a file on.
func (b *Bot) downloadFailure(ctx context.Context, err error) string {
	switch protocol.CodeOf(err) {
	case protocol.CodeBadRequest:
		// Too large for the messenger's bots (Telegram: 20 MB), or a file id it
		// does not know.
		return b.uploadInstead("The messenger would not pass this file on (bots may take files of at most 20 MB).")
	case protocol.CodeNotFound:
		return "The messenger no longer has that file. Send it again."
	case protocol.CodeUnsupported:
		return b.uploadInstead("This messenger does not pass files on to Lectern.")
	}
	if ctx.Err() == nil {
		b.cfg.Logger.WarnContext(ctx, "bot: fetch a document from the messenger", "error", err)
	}
	return "The messenger did not pass the file on, so nothing was added. Send it again in a few minutes."
}

// uploadInstead ends why with where to upload the PDF instead.
func (b *Bot) uploadInstead(why string) string {
	if b.cfg.DashboardURL == "" {
		return why + " Upload the PDF in Lectern's library instead."
	}
	return why + " Upload the PDF in Lectern's library instead: " + b.cfg.DashboardURL + "/library"
}

// looksLikePDF says whether the messenger calls d a PDF, by its type or, when
// it names none or a generic one, by its name. The API checks the bytes.
func looksLikePDF(d *messenger.Document) bool {
	switch strings.ToLower(strings.TrimSpace(d.MIMEType)) {
	case "application/pdf", "application/x-pdf":
		return true
	case "", "application/octet-stream", "binary/octet-stream":
		return strings.EqualFold(path.Ext(d.FileName), ".pdf")
	}
	return false
}

// uploadName is the file name the upload carries (the paper's title until the
// PDF says better): the messenger's, else a plain one.
func uploadName(name string) string {
	name = strings.TrimSpace(path.Base(strings.ReplaceAll(name, `\`, "/")))
	if name == "" || name == "." || name == "/" {
		return "paper.pdf"
	}
	return name
}
