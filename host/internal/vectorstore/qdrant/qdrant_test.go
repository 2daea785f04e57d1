package qdrant

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// validName is what this package promises of a collection name, well inside what
// Qdrant accepts (no / \ : * ? " < > | or NUL, at most 255 bytes).
var validName = regexp.MustCompile(`^[a-z0-9_]{1,255}$`)

func TestCollectionName(t *testing.T) {
	a := collectionName(DefaultPrefix, "text-embedding-3-small")
	b := collectionName(DefaultPrefix, "text_embedding_3_small")
	c := collectionName(DefaultPrefix, "Text-Embedding-3-Small")
	require.NotEqual(t, a, b, "models differing only in punctuation get different collections")
	require.NotEqual(t, a, c, "models differing only in case get different collections")
	require.Equal(t, a, collectionName(DefaultPrefix, "text-embedding-3-small"), "the name is stable")
	require.True(t, strings.HasPrefix(a, "lectern_text_embedding_3_small_"), a)
	require.NotEqual(t, a, collectionName("other_", "text-embedding-3-small"))

	for _, model := range []string{
		"text-embedding-3-small",
		"nomic-ai/nomic-embed-text-v1.5",
		"BAAI/bge-m3:latest",
		`we"ird<>|?*\ model`,
		"модель-эмбеддинга",
		"x",
		strings.Repeat("long-model-name/", 13), // 208 characters, past vectorstore's 200
	} {
		name := collectionName(DefaultPrefix, model)
		require.Regexp(t, validName, name, "model %q", model)
		require.LessOrEqual(t, len(name), len(DefaultPrefix)+maxModelPart+9, "model %q", model)
	}
}

func TestWithCollectionPrefix(t *testing.T) {
	for _, bad := range []string{"", "Lectern_", "lectern-", "a/b", strings.Repeat("a", 65)} {
		_, err := New("http://localhost:6334", "", WithCollectionPrefix(bad))
		require.Error(t, err, "prefix %q", bad)
	}
	s, err := New("http://localhost:6334", "", WithCollectionPrefix("lectern_x_"))
	require.NoError(t, err, "New makes no connection")
	require.Equal(t, "lectern_x_", s.prefix)
	require.NoError(t, s.Close())
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		host string
		port int
		tls  bool
	}{
		{"http://h:6334", "h", 6334, false},
		{"http://localhost:7000/", "localhost", 7000, false},
		{"https://h", "h", DefaultPort, true},
		{"HTTPS://qdrant.example.com:443", "qdrant.example.com", 443, true},
		{"http://127.0.0.1", "127.0.0.1", DefaultPort, false},
		{"http://[::1]:6334", "[::1]", 6334, false},
		{" http://h:6334 ", "h", 6334, false},
	} {
		host, port, useTLS, err := parseURL(tc.raw)
		require.NoError(t, err, tc.raw)
		require.Equal(t, tc.host, host, tc.raw)
		require.Equal(t, tc.port, port, tc.raw)
		require.Equal(t, tc.tls, useTLS, tc.raw)
	}
	for _, bad := range []string{
		"",
		"localhost:6334",
		"h:6334",
		"grpc://h:6334",
		"http://",
		"http://:6334",
		"http://h:notaport",
		"http://h:0",
		"http://h:70000",
		"http://h:6334/some/path",
		"http://user:pw@h:6334",
		"http://h:6334?api-key=x",
		"://bad",
		"http://h%zz",
	} {
		_, _, _, err := parseURL(bad)
		require.Error(t, err, "%q", bad)
	}
}
