package quote

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize folds a paper's text, or a quote from it, to the form Verify
// compares: see "Normalisation" in the package doc. It is idempotent.
func Normalize(s string) string {
	return string(normalize(s).runes)
}

// normalized is a normalised text with, for each of its runes, the byte range
// of the original text it came from.
type normalized struct {
	runes []rune
	// start[i], end[i] is the original byte range of runes[i]. Runes from one
	// NFKC segment (a ligature's "f" and "i") share it; a collapsed run of
	// whitespace has the range of the whole run.
	start, end []int32
}

// origSpan is [start, end) of runes[i:j] in the original text.
func (n *normalized) origSpan(i, j int) (int, int) {
	return int(n.start[i]), int(n.end[j-1])
}

// item is a rune on its way through normalisation, with its original range.
type item struct {
	r          rune
	start, end int32
}

func normalize(s string) normalized {
	// Stage 1: drop ignorables, fold quotes and dashes, lower-case, and undo a
	// soft hyphen at a line end, before NFKC sees the text (so that a prime
	// pair is not decomposed into two primes and a lower-cased letter composes
	// with its accent).
	pre := make([]byte, 0, len(s))
	preStart := make([]int32, 0, len(s))
	preEnd := make([]int32, 0, len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			switch {
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			case c == '`':
				c = '\''
			}
			pre = append(pre, c)
			preStart = append(preStart, int32(i))
			preEnd = append(preEnd, int32(i+1))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		next := i + size
		switch {
		case r == '\u00AD':
			// A soft hyphen is invisible. Before a line break and a letter it
			// marks hyphenation: the break goes too.
			if j, ok := lineBreakRun(s, next); ok && j < len(s) {
				if r2, _ := utf8.DecodeRuneInString(s[j:]); unicode.IsLetter(r2) {
					next = j
				}
			}
			i = next
			continue
		case ignorable(r):
			i = next
			continue
		case r == 'ı':
			// LaTeX writes í, ï as a dotless i with a combining accent.
			if r2, _ := utf8.DecodeRuneInString(s[next:]); unicode.Is(unicode.Mn, r2) {
				r = 'i'
			}
		}
		r = unicode.ToLower(foldPunct(r))
		n := len(pre)
		pre = utf8.AppendRune(pre, r)
		for range len(pre) - n {
			preStart = append(preStart, int32(i))
			preEnd = append(preEnd, int32(i+size))
		}
		i = next
	}

	// Stage 2: NFKC, one segment (a starter and its combining marks) at a
	// time, so each output rune knows the original range of its segment. An
	// ASCII character followed by another is its own segment and unchanged;
	// the runs between go through norm.Iter. A long expansion may come out
	// over several calls of Next before the position moves on; it is held
	// until then.
	items := make([]item, 0, len(pre))
	asciiSegment := func(p int) bool {
		return pre[p] < utf8.RuneSelf && (p+1 == len(pre) || pre[p+1] < utf8.RuneSelf)
	}
	var pending []rune
	var it norm.Iter
	for p := 0; p < len(pre); {
		if asciiSegment(p) {
			items = append(items, item{rune(pre[p]), preStart[p], preEnd[p]})
			p++
			continue
		}
		q := p + 1
		for q < len(pre) && !asciiSegment(q) {
			q++
		}
		it.Init(norm.NFKC, pre[p:q])
		for p0 := p; !it.Done(); {
			seg := it.Next()
			for len(seg) > 0 {
				r, size := utf8.DecodeRune(seg)
				seg = seg[size:]
				// NFKC can yield capitals ("ℌ" -> "H") and curly or prime
				// characters again; fold them too.
				r = unicode.ToLower(foldPunct(r))
				if !ignorable(r) && r != '\u00AD' {
					pending = append(pending, r)
				}
			}
			p1 := p + it.Pos()
			if p1 == p0 {
				continue
			}
			st, en := preStart[p0], preEnd[p1-1]
			for _, r := range pending {
				items = append(items, item{r, st, en})
			}
			pending, p0 = pending[:0], p1
		}
		p = q
	}

	// Stage 3: join words hyphenated at a line end and collapse whitespace.
	out := normalized{
		runes: make([]rune, 0, len(items)),
		start: make([]int32, 0, len(items)),
		end:   make([]int32, 0, len(items)),
	}
	emit := func(r rune, st, en int32) {
		out.runes = append(out.runes, r)
		out.start = append(out.start, st)
		out.end = append(out.end, en)
	}
	for i := 0; i < len(items); {
		if !unicode.IsSpace(items[i].r) {
			emit(items[i].r, items[i].start, items[i].end)
			i++
			continue
		}
		j, brk := i, false
		for j < len(items) && unicode.IsSpace(items[j].r) {
			brk = brk || isLineBreak(items[j].r)
			j++
		}
		n := len(out.runes)
		switch {
		case n == 0 || j == len(items):
			// Trim both ends.
		case brk && n >= 2 && out.runes[n-1] == '-' && origIsLower(s, out.start[n-2]) && origIsLower(s, items[j].start):
			// "verifi-\ncation" -> "verification"; "state-of-\nthe-art" keeps
			// its hyphen, for a word that already has one is a compound.
			if !compound(out.runes[:n-1], items[j:]) {
				out.runes, out.start, out.end = out.runes[:n-1], out.start[:n-1], out.end[:n-1]
			}
		default:
			emit(' ', items[i].start, items[j-1].end)
		}
		i = j
	}
	return out
}

// lineBreakRun reports whether s[i:] starts with whitespace holding a line
// break, and where that whitespace ends.
func lineBreakRun(s string, i int) (int, bool) {
	brk := false
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		brk = brk || isLineBreak(r)
		i += size
	}
	return i, brk
}

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// origIsLower reports whether the original rune at byte offset off is a
// lower-case letter (hyphenation is only undone between lower-case letters,
// as pdftext does: "Trace-\nMonkey" keeps its hyphen).
func origIsLower(s string, off int32) bool {
	r, _ := utf8.DecodeRuneInString(s[off:])
	return unicode.IsLower(r)
}

// compound reports whether the word before a line-end hyphen (the tail of
// before) or the word after it (the head of after) holds another hyphen. It
// looks at most maxWord runes each way, so that a text of hyphens and line
// breaks without spaces is not quadratic.
func compound(before []rune, after []item) bool {
	const maxWord = 64
	for i := len(before) - 1; i >= max(len(before)-maxWord, 0) && before[i] != ' '; i-- {
		if before[i] == '-' {
			return true
		}
	}
	for _, it := range after[:min(len(after), maxWord)] {
		if unicode.IsSpace(it.r) {
			break
		}
		if it.r == '-' {
			return true
		}
	}
	return false
}

// ignorable reports the invisible characters that are dropped: zero-width
// space, joiners, word joiner, byte-order mark, combining grapheme joiner
// (which NFKC may insert into long runs of combining marks) and the
// Mongolian vowel separator. The soft hyphen is handled on its own.
func ignorable(r rune) bool {
	switch r {
	case '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u034F', '\u180E':
		return true
	}
	return false
}

// foldPunct maps curly quotes, primes and guillemets to straight quotes and
// every dash and the minus sign to "-".
func foldPunct(r rune) rune {
	if r < 0x80 {
		if r == '`' {
			return '\''
		}
		return r
	}
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032', '\u2035', '\u00B4', '\u02B9', '\u02BC', '\u2039', '\u203A':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\u2036', '\u00AB', '\u00BB':
		return '"'
	case '\u2212', '\u2043':
		return '-'
	}
	if unicode.Is(unicode.Pd, r) {
		return '-'
	}
	return r
}
