package bot_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// onePagePDF is a one-page PDF whose text is title.
func onePagePDF(title string) []byte {
	content := "BT /F1 16 Tf 72 740 Td (" + title + ") Tj ET\n"
	return pdftexttest.Assemble([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		"<< /Length " + strconv.Itoa(len(content)) + " >>\nstream\n" + content + "endstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	})
}

// fileTransport is a messenger that passes files on: files by id; a missing id
// is the messenger's not-found.
type fileTransport struct {
	*chatTransport
	mu    sync.Mutex
	files map[string][]byte
	asked []messenger.DownloadRequest
}

func (f *fileTransport) Download(_ context.Context, req *messenger.DownloadRequest, w io.Writer) error {
	f.mu.Lock()
	f.asked = append(f.asked, *req)
	b, ok := f.files[req.FileID]
	f.mu.Unlock()
	if !ok {
		return protocol.NotFound("no such file")
	}
	if req.FileID == "cut" {
		// The messenger's connection breaks halfway through.
		if _, err := w.Write(b[:len(b)/2]); err != nil {
			return err
		}
		return protocol.Unavailable(nil, "the connection broke")
	}
	_, err := w.Write(b)
	return err
}

// sendFile sends a document from chat's private chat through bot and returns
// what the chat got back.
func (b *testBundle) sendFile(t *testing.T, runner interface {
	Handle(context.Context, *messenger.Update) error
}, chat string, d *messenger.Document) []sent {
	t.Helper()
	b.nextID++
	u := &messenger.Update{ID: int64(b.nextID), ChatID: chat, ChatType: messenger.ChatPrivate,
		From: messenger.User{ID: chat}, Time: b.clock.Now(), Document: d}
	require.NoError(t, runner.Handle(context.Background(), u))
	return b.tr.take(chat)
}

// TestAPDFSentToTheBotJoinsTheLibrary: a paired user's PDF is passed on by the
// messenger and uploaded as theirs; the answer says so and links the paper. It
// is in their library and nobody else's; the same PDF again is the same paper.
func TestAPDFSentToTheBotJoinsTheLibrary(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	bob := b.user(t, "bob@example.org", "UTC")
	b.pair(t, "ann-chat", ann.ID)
	b.pair(t, "bob-chat", bob.ID)
	tr := &fileTransport{chatTransport: b.tr, files: map[string][]byte{"f1": onePagePDF("Sparse attention for long documents")}}
	runner := b.withTransport(t, tr)

	got := b.sendFile(t, runner, "ann-chat", &messenger.Document{MessageID: "m1", FileID: "f1",
		FileName: "sparse-attention.pdf", MIMEType: "application/pdf", Size: int64(len(tr.files["f1"]))})
	require.Len(t, got, 1)
	require.Len(t, got[0].Buttons, 1, got[0].Text)
	link := got[0].Buttons[0][0].URL
	require.True(t, strings.HasPrefix(link, "http://lectern.test/papers/"), link)
	paperID := strings.TrimPrefix(link, "http://lectern.test/papers/")
	require.NotEmpty(t, got[0].Text)
	require.Equal(t, "bot_token", firstKey(tr.asked[0].Credentials), "the token goes with the download")

	var paper struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	require.NoError(t, b.client.Do(context.Background(), ann.ID, http.MethodGet, "/api/papers/"+paperID, nil, &paper))
	require.Equal(t, paperID, paper.ID)
	require.Equal(t, "sparse-attention", paper.Title, "titled by its file name until the PDF is read")
	var lib struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	require.NoError(t, b.client.Do(context.Background(), ann.ID, http.MethodGet, "/api/papers?scope=library&view=all_non_trash", nil, &lib))
	require.Len(t, lib.Items, 1)
	require.Equal(t, paperID, lib.Items[0].ID)

	err := b.client.Do(context.Background(), bob.ID, http.MethodGet, "/api/papers/"+paperID, nil, &paper)
	require.Error(t, err, "private to the uploader")
	require.NoError(t, b.client.Do(context.Background(), bob.ID, http.MethodGet, "/api/papers?scope=library&view=all_non_trash", nil, &lib))
	require.Empty(t, lib.Items)

	again := b.sendFile(t, runner, "ann-chat", &messenger.Document{MessageID: "m2", FileID: "f1", FileName: "copy.pdf", MIMEType: "application/pdf"})
	require.Len(t, again, 1)
	require.Equal(t, link, again[0].Buttons[0][0].URL, "the same PDF is the same paper")

	help := func(runner interface {
		Handle(context.Context, *messenger.Update) error
	}) string {
		b.nextID++
		require.NoError(t, runner.Handle(context.Background(), &messenger.Update{ID: int64(b.nextID), ChatID: "ann-chat",
			ChatType: messenger.ChatPrivate, From: messenger.User{ID: "ann-chat"}, Command: &messenger.Command{Name: "help"}}))
		got := b.tr.take("ann-chat")
		require.Len(t, got, 1)
		return got[0].Text
	}
	require.Contains(t, help(runner), "Send me a paper as a PDF file", "/help says so where the messenger passes files on")
	require.NotContains(t, help(b.bot), "PDF file", "and not where it cannot")
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// TestDocumentsTheBotCannotTake: each refusal says why and what to do, and
// nothing reaches the library.
func TestDocumentsTheBotCannotTake(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	b.pair(t, "ann-chat", ann.ID)
	tr := &fileTransport{chatTransport: b.tr, files: map[string][]byte{"notpdf": []byte("PK\x03\x04 a zip, not a PDF"),
		"cut": onePagePDF("Half a paper")}}
	runner := b.withTransport(t, tr)

	for _, tc := range []struct {
		name string
		bot  interface {
			Handle(context.Context, *messenger.Update) error
		}
		doc  messenger.Document
		says string
	}{
		{"a photo", runner, messenger.Document{FileID: "x", FileName: "figure.png", MIMEType: "image/png"}, "not one"},
		{"too large", runner, messenger.Document{FileID: "x", FileName: "big.pdf", MIMEType: "application/pdf", Size: 51 << 20}, "larger than 50 MB"},
		{"gone from the messenger", runner, messenger.Document{FileID: "gone", FileName: "a.pdf", MIMEType: "application/pdf"}, "Send it again"},
		{"cut off halfway", runner, messenger.Document{FileID: "cut", FileName: "half.pdf", MIMEType: "application/pdf"}, "did not pass the file on, so nothing was added"},
		{"named a PDF, is not one", runner, messenger.Document{FileID: "notpdf", FileName: "a.pdf"}, "not a PDF"},
		{"a messenger that cannot pass files on", b.bot, messenger.Document{FileID: "x", FileName: "a.pdf", MIMEType: "application/pdf"}, "Upload the PDF in Lectern's library instead: http://lectern.test/library"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := b.sendFile(t, tc.bot, "ann-chat", &tc.doc)
			require.Len(t, got, 1)
			require.Contains(t, got[0].Text, tc.says)
			require.Empty(t, got[0].Buttons)
		})
	}
	var lib struct {
		Items []any `json:"items"`
	}
	require.NoError(t, b.client.Do(context.Background(), ann.ID, http.MethodGet, "/api/papers?scope=library&view=all_non_trash", nil, &lib))
	require.Empty(t, lib.Items)

	unpaired := b.sendFile(t, runner, "stranger", &messenger.Document{FileID: "x", FileName: "a.pdf", MIMEType: "application/pdf"})
	require.Len(t, unpaired, 1)
	require.Contains(t, unpaired[0].Text, "not paired")
	require.Len(t, tr.asked, 3, "only the three PDFs of a paired chat were asked for")
}
