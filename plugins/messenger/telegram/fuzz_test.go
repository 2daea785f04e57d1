package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// addTestdataSeeds adds every recorded answer of testdata/ as a seed.
func addTestdataSeeds(f *testing.F) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeUpdates reads arbitrary bytes as a getUpdates result and as one
// update, seeded with the recorded updates: no panic, and every update handed to
// the host carries valid UTF-8 and a chat.
func FuzzDecodeUpdates(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "telegram", ".json")
	addTestdataSeeds(f)
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > plugintest.MaxFuzzInput {
			return
		}
		raws := []json.RawMessage{body}
		var env apiResponse
		if json.Unmarshal(body, &env) == nil && len(env.Result) > 0 {
			var batch []json.RawMessage
			if json.Unmarshal(env.Result, &batch) == nil {
				raws = append(raws, batch...)
			}
		}
		for _, raw := range raws {
			_, u := mapUpdate(raw, "lectern_bot", now)
			if u == nil {
				continue
			}
			if u.ChatID == "" {
				t.Fatalf("an update without a chat: %+v", u)
			}
			plugintest.CheckStrings(t, "an update", u)
		}
	})
}

// FuzzAPIError reads arbitrary bytes as the Bot API's error envelope, seeded with
// the recorded errors: no panic, the bot token never appears in the error, the
// description quoted is bounded, and a retry_after is never read as a shorter (or
// negative) wait than the one Telegram asked for.
func FuzzAPIError(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "telegram", ".json")
	addTestdataSeeds(f)
	const token = "123456:AAE-secret_token"
	f.Fuzz(func(t *testing.T, body []byte) {
		var env apiResponse
		if json.Unmarshal(body, &env) != nil {
			return
		}
		out := apiError("sendMessage", &env, token)
		if out.err == nil {
			t.Fatal("a refused call without an error")
		}
		msg := out.err.Error()
		if strings.Contains(msg, token) {
			t.Fatalf("the error quotes the token: %s", msg)
		}
		if n := utf8.RuneCountInString(msg); n > maxDescription+200 {
			t.Fatalf("an error of %d characters", n)
		}
		if out.wait < 0 {
			t.Fatalf("a negative wait %s from retry_after %d", out.wait, env.Parameters.RetryAfter)
		}
		if p := env.Parameters; p != nil && p.RetryAfter > 0 && env.ErrorCode == 429 && out.wait < time.Second {
			t.Fatalf("retry_after %d read as a wait of %s", p.RetryAfter, out.wait)
		}
	})
}

// FuzzRenderParts renders arbitrary text in each format as Telegram HTML parts:
// no panic, no part over Telegram's limit, and valid UTF-8 out of valid UTF-8 in.
func FuzzRenderParts(f *testing.F) {
	for _, s := range []string{
		"*bold* _it_ `code` [link](https://example.org)", "```go\nx := 1\n```", "<b>a<i>b</b>c</i>",
		`<a href="https://x.org/?a=1&amp;b=2">x</a>`, "a\\*b", "<pre><code class=\"language-go\">x</code></pre>",
		strings.Repeat("word ", 1000), strings.Repeat("😀", 3000),
	} {
		for format := range 3 {
			f.Add(s, uint8(format))
		}
	}
	f.Fuzz(func(t *testing.T, text string, format uint8) {
		if len(text) > plugintest.MaxFuzzInput || !utf8.ValidString(text) {
			return // text arrives over gRPC, whose strings are valid UTF-8
		}
		rt, err := readText(text, messenger.Format(format%3))
		if err != nil {
			return
		}
		parts := splitRich(rt, maxMessageLen)
		if len(parts) > len(text)+1 {
			t.Fatalf("%d parts from %d bytes", len(parts), len(text))
		}
		for i, part := range parts {
			if n := utf16Len(part.plainText()); n > maxMessageLen {
				t.Fatalf("part %d has %d UTF-16 units, over the limit %d", i+1, n, maxMessageLen)
			}
			plugintest.CheckText(t, "a rendered part", render(part))
		}
	})
}
