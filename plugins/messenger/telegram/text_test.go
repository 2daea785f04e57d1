package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
)

func TestRenderFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		format messenger.Format
		in     string
		want   string
	}{
		{"plain is escaped", messenger.FormatPlain, `if a<b && c>d then *x* "q"`, `if a&lt;b &amp;&amp; c&gt;d then *x* "q"`},
		{"markdown bold and italic", messenger.FormatMarkdown, "*Attention* is _all_ you need", "<b>Attention</b> is <i>all</i> you need"},
		{"markdown nested", messenger.FormatMarkdown, "*bold _and italic_*", "<b>bold <i>and italic</i></b>"},
		{"markdown code keeps markup characters", messenger.FormatMarkdown, "run `a*b_c <x>`", "run <code>a*b_c &lt;x&gt;</code>"},
		{"markdown fenced block with language", messenger.FormatMarkdown, "```go\nfmt.Println(1 < 2)\n```", `<pre><code class="language-go">fmt.Println(1 &lt; 2)` + "\n</code></pre>"},
		{"markdown link", messenger.FormatMarkdown, "[the *paper*](https://arxiv.org/abs/1706.03762?a=1&b=2)", `<a href="https://arxiv.org/abs/1706.03762?a=1&amp;b=2">the <b>paper</b></a>`},
		{"markdown link to javascript stays text", messenger.FormatMarkdown, "[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"markdown snake_case and products stay", messenger.FormatMarkdown, "snake_case_name and 2*3*4", "snake_case_name and 2*3*4"},
		{"markdown unclosed stays", messenger.FormatMarkdown, "a * b and _c", "a * b and _c"},
		{"markdown escapes", messenger.FormatMarkdown, `\*not bold\* and a\_b`, "*not bold* and a_b"},
		{"markdown does not cross lines", messenger.FormatMarkdown, "*a\nb*", "*a\nb*"},
		{"html kept", messenger.FormatHTML, `<b>Bold</b> <a href="https://x.org/?a=1&amp;b=2">link</a> &lt;3`, `<b>Bold</b> <a href="https://x.org/?a=1&amp;b=2">link</a> &lt;3`},
		{"html br becomes a line break", messenger.FormatHTML, "a<br>b<br/>c", "a\nb\nc"},
		{"html stray less-than is text", messenger.FormatHTML, "1 < 2 and 3 <= 4", "1 &lt; 2 and 3 &lt;= 4"},
		{"html drops unknown attributes", messenger.FormatHTML, `<a href="https://x.org" onclick="evil()">x</a>`, `<a href="https://x.org">x</a>`},
		{"html closes what is left open", messenger.FormatHTML, "<b>open", "<b>open</b>"},
		{"html named entities become characters", messenger.FormatHTML, "caf&eacute;&nbsp;&quot;x&quot;", "café\u00a0\"x\""},
		{"escaped helpers round-trip", messenger.FormatHTML, "<b>" + messenger.EscapeHTML("a<b>&c") + "</b>", "<b>a&lt;b&gt;&amp;c</b>"},
		{"escaped markdown round-trips", messenger.FormatMarkdown, "*" + messenger.EscapeMarkdown("f(x)_[1]*") + "*", "<b>f(x)_[1]*</b>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt, err := readText(tc.in, tc.format)
			require.NoError(t, err)
			require.Equal(t, tc.want, render(rt))
		})
	}
}

func TestSplitPrefersLinesThenSpaces(t *testing.T) {
	t.Parallel()
	split := func(s string, limit int) []string {
		var rt richText
		rt.add(s, nil)
		var out []string
		for _, p := range splitRich(rt, limit) {
			out = append(out, p.plainText())
		}
		return out
	}
	require.Equal(t, []string{"aaa bbb", "ccc"}, split("aaa bbb\nccc", 9))
	require.Equal(t, []string{"aaa bbb", "ccc"}, split("aaa bbb ccc", 8))
	require.Equal(t, []string{"aaa", "bbb"}, split("aaa bbb", 3), "a space just past the limit is the cut")
	require.Equal(t, []string{"abcd", "efgh", "ij"}, split("abcdefghij", 4), "a word longer than the limit is cut")
	require.Equal(t, []string{"one", "two"}, split("one\n\n\n\ntwo", 3), "parts of white space only are dropped")
	require.Equal(t, []string{"😀😀", "😀"}, split("😀😀😀", 4), "an emoji is two UTF-16 units and never cut in half")
}

func TestSplitKeepsEveryCharacterAndTheLimit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab cd\nef😀é<&>")
	for range 200 {
		n := r.IntN(3000)
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		text := b.String()
		rt, err := parseHTML("<b>" + messenger.EscapeHTML(text) + "</b>")
		require.NoError(t, err)
		limit := 5 + r.IntN(400)
		parts := splitRich(rt, limit)
		var joined strings.Builder
		for _, p := range parts {
			plain := p.plainText()
			require.LessOrEqual(t, utf16Len(plain), limit)
			require.NotEmpty(t, strings.TrimSpace(plain))
			joined.WriteString(plain)
			back, err := parseHTML(render(p))
			require.NoError(t, err, "every part renders to valid HTML")
			require.Equal(t, plain, back.plainText())
		}
		strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
		require.Equal(t, strip(text), strip(joined.String()), "only the spaces and line breaks at cuts are dropped")
	}
}

// BenchmarkRenderParts reads, splits and renders a 100,000-character Markdown
// message (about 60,000 visible characters: 15 parts), the heaviest text work a
// send does.
func BenchmarkRenderParts(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 100_000 {
		sb.WriteString("*Attention Is All You Need* (_Vaswani et al._) [arXiv](https://arxiv.org/abs/1706.03762) a<b & c\n")
	}
	text := sb.String()
	b.ReportAllocs()
	for b.Loop() {
		parts, err := renderParts(text, messenger.FormatMarkdown)
		if err != nil || len(parts) != 15 {
			b.Fatalf("%d parts, %v", len(parts), err)
		}
	}
}
