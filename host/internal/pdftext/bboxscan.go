package pdftext

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// The XHTML that `pdftotext -bbox-layout` writes has a small fixed vocabulary:
// a head (<title>, <meta name content>), then <doc>, and in it <page width
// height>, <flow>, <block>, <line> and <word> with their boxes as "%f" numbers,
// the words' text escaped with the five XML entities. bboxScanner reads it
// tag by tag straight out of the subprocess' stdout, holding one token at a
// time, instead of encoding/xml's general decoder, which spent more than half
// of extraction's Go time on it (docs/benchmarks.md, "Issue 18 item 3").
//
// It decodes what it hands on as encoding/xml did with Strict off and HTML
// entities known: the C0 control bytes that pdftotext copies from some fonts
// are dropped, "\r\n" and "\r" read "\n", entities are replaced (unknown ones
// stay as written), and text that is not UTF-8, or holds a character XML
// forbids, fails as a syntax error, so every Document is as it was.

// tokenKind is what bboxScanner.next found.
type tokenKind int

const (
	tokEOF   tokenKind = iota
	tokStart           // a start tag; bboxScanner.selfClosing says whether it ends at once
	tokEnd             // an end tag
	tokText            // the text between two tags
	tokOther           // a directive, comment or processing instruction
)

// errSyntax is pdftotext output that is not the XHTML it writes.
var errSyntax = errors.New("XML syntax error")

// bboxScanner splits pdftotext's XHTML into tokens as it is read, under caps: more
// than maxBytes read, or one token (a tag, or the text between two tags) longer
// than maxToken, stops it with a *TextLimitError.
type bboxScanner struct {
	r        io.Reader
	buf      []byte
	pos, end int   // buf[pos:end] is read and not yet scanned
	read     int64 // bytes read from r
	maxBytes int64
	maxToken int
	eof      bool
	rerr     error // the reader's error, other than io.EOF

	// The current token: the tag's bytes between '<' and '>' (name and
	// attributes), or the text.
	tok         []byte
	name        []byte
	selfClosing bool
}

// scanChunk is how much is read from the stream at once.
const scanChunk = 64 << 10

func newBBoxScanner(r io.Reader, maxBytes int64, maxToken int) *bboxScanner {
	return &bboxScanner{r: r, buf: make([]byte, 2*scanChunk), maxBytes: maxBytes, maxToken: maxToken}
}

// fill reads more of the stream after buf[end], first moving the unscanned
// bytes from keep on to the front (so a token being read stays whole), and
// returns how far they moved. It reports false at the end of the stream or on
// an error (s.rerr, or a *TextLimitError).
func (s *bboxScanner) fill(keep int) (int, bool, error) {
	if s.eof {
		return 0, false, s.rerr
	}
	shift := 0
	if keep > 0 {
		shift = keep
		s.end = copy(s.buf, s.buf[keep:s.end])
		s.pos -= keep
	}
	if len(s.buf)-s.end < scanChunk {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if s.read += int64(n); s.read > s.maxBytes {
		return shift, false, &TextLimitError{What: "bytes of pdftotext output", Limit: s.maxBytes}
	}
	if err != nil {
		s.eof = true
		if err != io.EOF {
			s.rerr = err
		}
		if n == 0 {
			return shift, false, s.rerr
		}
	}
	return shift, true, nil
}

// tokenTooLong is the error of a token past the cap.
func (s *bboxScanner) tokenTooLong() error {
	return &TextLimitError{What: "bytes in one XML token", Limit: int64(s.maxToken)}
}

// next scans the next token. Its bytes stay valid until the next call.
func (s *bboxScanner) next() (tokenKind, error) {
	if s.pos == s.end {
		s.pos, s.end = 0, 0
		if _, ok, err := s.fill(0); !ok {
			return tokEOF, err
		}
	}
	if s.buf[s.pos] == '<' {
		return s.tag()
	}
	return s.text()
}

// text scans the text up to the next '<' or the end of the stream.
func (s *bboxScanner) text() (tokenKind, error) {
	start, i := s.pos, s.pos
	for {
		if j := bytes.IndexByte(s.buf[i:s.end], '<'); j >= 0 {
			i += j
			break
		}
		i = s.end
		if i-start > s.maxToken {
			return tokEOF, s.tokenTooLong()
		}
		shift, ok, err := s.fill(start)
		if err != nil {
			return tokEOF, err
		}
		start, i = start-shift, i-shift
		if !ok {
			break
		}
	}
	if i-start > s.maxToken {
		return tokEOF, s.tokenTooLong()
	}
	s.tok, s.pos = s.buf[start:i], i
	return tokText, nil
}

// tag scans a tag from its '<' to the '>' that closes it outside quotes.
func (s *bboxScanner) tag() (tokenKind, error) {
	start, i := s.pos, s.pos+1
	var quote byte
	// The common case, found without looking at every byte: a '>' with no
	// quote before it, or an even number of double quotes and no single one.
	if j := bytes.IndexByte(s.buf[i:s.end], '>'); j >= 0 {
		seg := s.buf[i : i+j]
		if bytes.Count(seg, []byte{'"'})%2 == 0 && bytes.IndexByte(seg, '\'') < 0 {
			i += j
			goto closed
		}
	}
	for {
		for ; i < s.end; i++ {
			switch b := s.buf[i]; {
			case quote != 0:
				if b == quote {
					quote = 0
				}
			case b == '"' || b == '\'':
				quote = b
			case b == '>':
				goto closed
			}
		}
		if i-start > s.maxToken {
			return tokEOF, s.tokenTooLong()
		}
		shift, ok, err := s.fill(start)
		if err != nil {
			return tokEOF, err
		}
		if !ok {
			return tokEOF, fmt.Errorf("%w: unexpected EOF in a tag", errSyntax)
		}
		start, i = start-shift, i-shift
	}
closed:
	if i-start > s.maxToken {
		return tokEOF, s.tokenTooLong()
	}
	body := s.buf[start+1 : i]
	s.pos = i + 1
	s.tok, s.selfClosing = body, false
	switch {
	case len(body) > 0 && (body[0] == '!' || body[0] == '?'):
		return tokOther, nil
	case len(body) > 0 && body[0] == '/':
		s.name = tagName(body[1:])
		return tokEnd, nil
	}
	if len(body) > 0 && body[len(body)-1] == '/' {
		s.selfClosing = true
		body = body[:len(body)-1]
		s.tok = body
	}
	s.name = tagName(body)
	if len(s.name) == 0 {
		return tokEOF, fmt.Errorf("%w: a tag without a name", errSyntax)
	}
	return tokStart, nil
}

// tagName is the name a tag's body starts with: up to a space or the end.
func tagName(body []byte) []byte {
	for i, b := range body {
		if b == ' ' || b == '\t' || b == '\n' || b == '\r' {
			return body[:i]
		}
	}
	return body
}

// attr returns the raw value of the current tag's first attribute called
// name, and whether it has one; each call reads the attributes from the
// start, which for pdftotext's four or five is cheaper than collecting them.
func (s *bboxScanner) attr(name string) ([]byte, bool) {
	rest := s.tok[len(s.name):]
	for {
		k, v, r, ok := nextAttr(rest)
		if !ok {
			return nil, false
		}
		if string(k) == name {
			return v, true
		}
		rest = r
	}
}

// attrFloat returns the first attribute called name that reads as a number, 0
// when none does (pdftotext writes them with "%f").
func (s *bboxScanner) attrFloat(name string) float64 {
	rest := s.tok[len(s.name):]
	for {
		k, v, r, ok := nextAttr(rest)
		if !ok {
			return 0
		}
		rest = r
		if string(k) != name {
			continue
		}
		if f, ok := parseFixed(v); ok {
			return f
		}
		if bytes.IndexByte(v, '&') >= 0 {
			dv, err := decodeText(nil, v)
			if err != nil {
				continue
			}
			v = dv
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return f
		}
	}
}

// attrBox reads the tag's xMin, yMin, xMax and yMax in one pass over its
// attributes, each as attrFloat would.
func (s *bboxScanner) attrBox() box {
	var v [4]float64
	var set [4]bool
	rest := s.tok[len(s.name):]
	for {
		k, val, r, ok := nextAttr(rest)
		if !ok {
			break
		}
		rest = r
		i := boxAttr(k)
		if i < 0 || set[i] {
			continue
		}
		if f, ok := parseFixed(val); ok {
			v[i], set[i] = f, true
		}
	}
	for i, ok := range set {
		if !ok {
			v[i] = s.attrFloat(boxAttrs[i]) // another notation, or none
		}
	}
	return box{v[0], v[1], v[2], v[3]}
}

// boxAttrs are the attributes of a box, in the order of box's fields.
var boxAttrs = [4]string{"xMin", "yMin", "xMax", "yMax"}

// boxAttr is the index of the box attribute called k, -1 for another.
func boxAttr(k []byte) int {
	if len(k) != 4 || k[1] != 'M' {
		return -1
	}
	switch string(k) {
	case "xMin":
		return 0
	case "yMin":
		return 1
	case "xMax":
		return 2
	case "yMax":
		return 3
	}
	return -1
}

// nextAttr reads one name="value" (or 'value', or an unquoted value) from b.
func nextAttr(b []byte) (name, value, rest []byte, ok bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	start := i
	for i < len(b) && b[i] != '=' && !isSpace(b[i]) {
		i++
	}
	if i == start {
		return nil, nil, nil, false
	}
	name = b[start:i]
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) || b[i] != '=' {
		return name, nil, b[i:], true // an attribute without a value
	}
	i++
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '"' || b[i] == '\'') {
		q := b[i]
		j := bytes.IndexByte(b[i+1:], q)
		if j < 0 {
			return name, b[i+1:], nil, true
		}
		return name, b[i+1 : i+1+j], b[i+2+j:], true
	}
	start = i
	for i < len(b) && !isSpace(b[i]) {
		i++
	}
	return name, b[start:i], b[i:], true
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFixed reads a decimal like "-123.456000", as "%f" writes them, and
// returns the float64 strconv.ParseFloat would: the digits make an integer
// below 2^53, held exactly, divided by an exact power of ten, one correctly
// rounded operation (strconv's own exact path). Anything else reports false.
func parseFixed(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 17 {
		return 0, false
	}
	var mant uint64
	frac, dot, digits := 0, false, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || mant >= 1<<53 || frac >= len(pow10) {
		return 0, false
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// decodeText appends to dst the text of raw as encoding/xml reads it (see the
// top of this file): control bytes dropped, line ends folded, entities
// replaced, and an error for text that is not UTF-8 or holds a character XML
// forbids. Raw text holding none of these comes back as it is.
func decodeText(dst, raw []byte) ([]byte, error) {
	plain := true
	for _, c := range raw {
		if c < 0x20 || c == '&' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return append(dst, raw...), nil
	}
	start := len(dst)
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\r':
			dst = append(dst, '\n')
			if next := skipControls(raw, i+1); next < len(raw) && raw[next] == '\n' {
				i = next
			}
		case c < 0x20 && c != '\t' && c != '\n':
			// a control byte pdftotext copied from a font: dropped
		case c == '&':
			text, n := entity(raw[i:])
			if n == 0 {
				dst = append(dst, '&')
				continue
			}
			dst = append(dst, text...)
			i += n - 1
		default:
			dst = append(dst, c)
		}
	}
	if err := checkChars(dst[start:]); err != nil {
		return dst, err
	}
	return dst, nil
}

// skipControls returns the index of the first byte at or after i that is not a
// dropped control byte.
func skipControls(b []byte, i int) int {
	for i < len(b) && b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// entity reads the entity at the start of b ("&amp;", "&#233;", "&#xE9;",
// "&nbsp;") and returns its text and length; length 0 when b starts with none
// that is known, which then stands as written.
func entity(b []byte) (string, int) {
	end := bytes.IndexByte(b, ';')
	if end < 2 || end > 40 {
		return "", 0
	}
	name := b[1:end]
	if name[0] == '#' {
		base, digits := 10, name[1:]
		if len(digits) > 0 && digits[0] == 'x' {
			base, digits = 16, digits[1:]
		}
		n, err := strconv.ParseUint(string(digits), base, 64)
		if err != nil || n > utf8.MaxRune {
			return "", 0
		}
		return string(rune(n)), end + 1
	}
	switch string(name) {
	case "amp":
		return "&", end + 1
	case "lt":
		return "<", end + 1
	case "gt":
		return ">", end + 1
	case "apos":
		return "'", end + 1
	case "quot":
		return `"`, end + 1
	}
	if t, ok := xml.HTMLEntity[string(name)]; ok {
		return t, end + 1
	}
	return "", 0
}

// checkChars fails for text that is not UTF-8 or holds a character outside
// XML's Char production, as encoding/xml does.
func checkChars(b []byte) error {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("%w: invalid UTF-8", errSyntax)
		}
		b = b[size:]
		if !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
			r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return fmt.Errorf("%w: illegal character code %U", errSyntax, r)
		}
	}
	return nil
}
