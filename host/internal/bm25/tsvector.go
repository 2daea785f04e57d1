package bm25

import (
	"fmt"
	"strings"
)

// Term is one lexeme of a passage and how often it occurs there.
type Term struct {
	Lexeme string
	Freq   int
}

// ParseTSVector reads PostgreSQL's text form of a tsvector ('lexeme':1,5A
// 'other':3) into its lexemes, each with its number of positions (1 when the
// vector carries none), and their sum, the passage's length in indexed words.
// Inside quotes, a doubled quote or backslash stands for one.
func ParseTSVector(s string) (terms []Term, length int, err error) {
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			return terms, length, nil
		}
		lexeme, next, err := quoted(s, i)
		if err != nil {
			return nil, 0, fmt.Errorf("bm25: tsvector: %w", err)
		}
		i = next
		freq := 1
		if i < len(s) && s[i] == ':' {
			freq = 0
			i++
			for i < len(s) && s[i] != ' ' {
				if s[i] == ',' {
					freq++
				}
				i++
			}
			freq++
		}
		terms = append(terms, Term{Lexeme: lexeme, Freq: freq})
		length += freq
	}
}

// quoted reads the quoted lexeme starting at s[i] and returns it with the index
// just after its closing quote.
func quoted(s string, i int) (string, int, error) {
	if i >= len(s) || s[i] != '\'' {
		return "", 0, fmt.Errorf("expected a quoted lexeme at byte %d of %q", i, s)
	}
	i++
	start := i
	var b *strings.Builder // only when the lexeme holds an escape
	for i < len(s) {
		switch c := s[i]; {
		case c == '\'' && i+1 < len(s) && s[i+1] == '\'', c == '\\' && i+1 < len(s):
			if b == nil {
				b = &strings.Builder{}
				b.WriteString(s[start:i])
			}
			b.WriteByte(s[i+1])
			i += 2
		case c == '\'':
			if b != nil {
				return b.String(), i + 1, nil
			}
			return s[start:i], i + 1, nil
		default:
			if b != nil {
				b.WriteByte(c)
			}
			i++
		}
	}
	return "", 0, fmt.Errorf("unterminated lexeme in %q", s)
}
