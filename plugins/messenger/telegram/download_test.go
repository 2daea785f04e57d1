package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// getFileReply is getFile's answer (the Bot API's File object) for a file of
// size bytes at path; size 0 leaves file_size out, as Telegram may.
func getFileReply(path string, size int) reply {
	sz := ""
	if size > 0 {
		sz = fmt.Sprintf(`"file_size":%d,`, size)
	}
	return reply{200, fmt.Appendf(nil, `{"ok":true,"result":{"file_id":"BQACAgIAAxkBAAIBY2Zxc3R1dnd4eXo","file_unique_id":"AgADxyz",%s"file_path":%q}}`, sz, path)}
}

// pdfBytes is a file of n bytes that starts like a PDF.
func pdfBytes(n int) []byte {
	b := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
	copy(b, "%PDF-1.7\n")
	return b
}

func download(t *testing.T, tg *Telegram, maxBytes int64) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	err := tg.Download(context.Background(), &messenger.DownloadRequest{Credentials: creds, FileID: "BQACAgIAAxkBAAIBY2Zxc3R1dnd4eXo", MaxBytes: maxBytes}, &buf)
	return buf.Bytes(), err
}

// TestDownloadReadsTheFile: getFile names the path, and the file is read from
// /file/bot<token>/<path>, every byte.
func TestDownloadReadsTheFile(t *testing.T) {
	f := newFakeBot(t)
	body := pdfBytes(3<<20 + 17)
	f.push("getFile", getFileReply("documents/file_7.pdf", len(body)))
	f.putFile("documents/file_7.pdf", 200, body)
	got, err := download(t, newTransport(t, f, nil), 0)
	require.NoError(t, err)
	require.Equal(t, body, got)
	calls := f.callsOf("getFile")
	require.Len(t, calls, 1)
	require.Equal(t, "BQACAgIAAxkBAAIBY2Zxc3R1dnd4eXo", calls[0].params["file_id"])
	require.Equal(t, []string{testToken}, f.fileTokens)
}

// TestDownloadRefusesALargeFile: a file over MaxBytes is refused before it is
// read when getFile tells its size, and while it is read when it does not.
func TestDownloadRefusesALargeFile(t *testing.T) {
	f := newFakeBot(t)
	body := pdfBytes(2 << 20)
	f.putFile("documents/file_8.pdf", 200, body)
	tg := newTransport(t, f, nil)

	f.push("getFile", getFileReply("documents/file_8.pdf", len(body)))
	_, err := download(t, tg, 1<<20)
	require.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	require.Contains(t, err.Error(), "larger than 1 MB")
	require.Empty(t, f.fileTokens, "not read at all")

	f.push("getFile", getFileReply("documents/file_8.pdf", 0))
	got, err := download(t, tg, 1<<20)
	require.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	require.LessOrEqual(t, len(got), 1<<20+1, "reading stopped at the limit")

	f.push("getFile", reply{400, testdata(t, "error_400_file_too_big.json")})
	_, err = download(t, tg, 0)
	require.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err), "Telegram's own 20 MB limit")
	require.Contains(t, err.Error(), "file is too big")
}

// TestDownloadErrorsSayWhatHappened: an unknown file id, a file gone, a path
// that would leave the file root and a broken connection each get a typed error
// that never quotes the token.
func TestDownloadErrorsSayWhatHappened(t *testing.T) {
	f := newFakeBot(t)
	tg := newTransport(t, f, map[string]any{"max_retries": float64(0)})
	for _, tc := range []struct {
		name    string
		getFile reply
		path    string // where file is served
		file    *reply
		code    protocol.Code
		says    string
	}{
		{"unknown id", reply{400, testdata(t, "error_400_invalid_file_id.json")}, "", nil, protocol.CodeBadRequest, "invalid file_id"},
		{"gone", getFileReply("documents/file_9.pdf", 0), "documents/file_9.pdf", &reply{404, []byte("Not Found")}, protocol.CodeNotFound, "send it again"},
		{"server error", getFileReply("documents/file_10.pdf", 0), "documents/file_10.pdf", &reply{502, []byte("Bad Gateway")}, protocol.CodeUnavailable, "HTTP 502"},
		{"parent path", getFileReply("documents/../../etc/passwd", 0), "", nil, protocol.CodeUnavailable, "no usable file path"},
		{"absolute path", getFileReply("/etc/passwd", 0), "", nil, protocol.CodeUnavailable, "no usable file path"},
		{"no path", reply{200, []byte(`{"ok":true,"result":{"file_id":"x","file_unique_id":"y"}}`)}, "", nil, protocol.CodeUnavailable, "no usable file path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.push("getFile", tc.getFile)
			if tc.file != nil {
				f.putFile(tc.path, tc.file.status, tc.file.body)
			}
			_, err := download(t, tg, 0)
			require.Error(t, err)
			require.Equal(t, tc.code, protocol.CodeOf(err))
			require.Contains(t, err.Error(), tc.says)
			require.NotContains(t, err.Error(), testToken)
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		dead := newFakeBot(t)
		tg := newTransport(t, dead, map[string]any{"max_retries": float64(0)})
		dead.srv.Close()
		_, err := download(t, tg, 0)
		require.Equal(t, protocol.CodeUnavailable, protocol.CodeOf(err))
		require.NotContains(t, err.Error(), testToken)
		require.NotContains(t, err.Error(), "AAF-test_token")
	})
	t.Run("no file id", func(t *testing.T) {
		err := tg.Download(context.Background(), &messenger.DownloadRequest{Credentials: creds}, &bytes.Buffer{})
		require.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	})
}

// failingWriter refuses every write.
type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// TestDownloadPassesTheWritersError: the caller's own failure comes back as it
// is, not as the messenger's.
func TestDownloadPassesTheWritersError(t *testing.T) {
	f := newFakeBot(t)
	f.push("getFile", getFileReply("documents/file_11.pdf", 0))
	f.putFile("documents/file_11.pdf", 200, pdfBytes(4096))
	err := newTransport(t, f, nil).Download(context.Background(), &messenger.DownloadRequest{Credentials: creds, FileID: "x"}, failingWriter{})
	require.ErrorIs(t, err, errDiskFull)
}
