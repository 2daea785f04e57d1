package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxJSONBody is the body limit most JSON requests pass to DecodeJSON: 64 KB.
const MaxJSONBody = 64 << 10

// DecodeJSON reads one JSON object of at most maxBytes into v, refusing unknown
// fields, NUL characters and invalid UTF-8. On failure it answers for the caller
// (415, 413, 400 or 422, naming the field where there is one) and returns false.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any, maxBytes int64) bool {
	if err := ReadJSON(w, r, v, maxBytes); err != nil {
		Err(w, r, err)
		return false
	}
	return true
}

// ReadJSON is DecodeJSON without the answer, for a handler that words its own
// refusal: it returns the *Error DecodeJSON would have written, or nil.
func ReadJSON(w http.ResponseWriter, r *http.Request, v any, maxBytes int64) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
				Detail: "Send the body as application/json."}
		}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large",
				Detail: fmt.Sprintf("The body is larger than the %s this request accepts.", size(maxBytes))}
		}
		return BadRequest("The body could not be read; send it again.")
	}
	if apiErr := CheckJSON(raw); apiErr != nil {
		return apiErr
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return DecodeError(err, v)
	}
	if _, err := dec.Token(); err != io.EOF {
		return BadRequest("The body must hold one JSON object and nothing after it.")
	}
	return nil
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MB"
	}
	return strconv.FormatInt(n>>10, 10) + " KB"
}

// DecodeError turns an error of encoding/json decoding into v into an API error
// that says, in words, what is wrong and where. The decoder's own text reaches the
// client only with DEV_ERROR_DETAIL (as the exception).
func DecodeError(err error, v any) *Error {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return BadRequest("The body is empty; send a JSON object.")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return withCause(BadRequest("The body is not valid JSON: it ends too early."), err)
	case errors.As(err, &syntax):
		return withCause(BadRequest(fmt.Sprintf("The body is not valid JSON (at byte %d).", syntax.Offset)), err)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return withCause(BadRequest("The body must be a JSON object."), err)
		}
		msg := "must be " + kindOf(typeErr.Type)
		return withCause(Invalid("The "+field+" field "+msg+".", FieldError{Field: field, Message: msg}), err)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, uerr := strconv.Unquote(name)
		if uerr != nil {
			field = name
		}
		return withCause(Invalid("The body has a field this request does not take: "+field+".",
			FieldError{Field: field, Message: "is not a field of this request"}), err)
	}
	// A value's own parser refused it (a malformed id or time, say); the decoder
	// does not say which field held it.
	return withCause(Invalid("A value in the body is not in the form this request expects"+
		fieldsHint(v)+".", FieldError{Field: "body", Message: "holds a value of the wrong form"}), err)
}

func withCause(e *Error, cause error) *Error {
	e.Cause = cause
	return e
}

// fieldsHint names the fields v takes, so the sentence says where to look.
func fieldsHint(v any) string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (check " + strings.Join(names, ", ") + ")"
}

// kindOf says in words what JSON value fits a Go type.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of another type"
}

// CheckJSON finds the first string in the JSON document raw, key or value, that
// holds a NUL character or bytes that are not UTF-8, and answers a 422 naming its
// path ("reviews[2].client_id"). It returns nil when there is none, and also when
// raw is not valid JSON, which decoding then reports.
func CheckJSON(raw []byte) *Error {
	bad := invalidAt(raw)
	if bad < 0 && !bytes.Contains(raw, []byte(`\u0000`)) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		end := dec.InputOffset()
		top := len(stack) - 1
		isKey := top >= 0 && stack[top].object && stack[top].wantKey
		if s, ok := tok.(string); ok {
			path := pathOf(stack, isKey, s)
			if bad >= 0 && end > int64(bad) {
				return notUTF8(path, isKey)
			}
			if strings.ContainsRune(s, 0) {
				return hasNUL(path, isKey)
			}
		}
		switch {
		case tok == json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true})
			continue
		case tok == json.Delim('['):
			stack = append(stack, frame{})
			continue
		case tok == json.Delim('}'), tok == json.Delim(']'):
			stack = stack[:top]
			top--
		case isKey:
			stack[top].key, stack[top].wantKey = tok.(string), false
			continue
		}
		// A whole value has been read: step the enclosing container on.
		if top >= 0 {
			if stack[top].object {
				stack[top].wantKey = true
			} else {
				stack[top].index++
			}
		}
	}
}

// frame is one open object or array while CheckJSON walks a document.
type frame struct {
	object  bool
	wantKey bool   // object: the next string is a key
	key     string // object: the key of the value being read
	index   int    // array: the index of the value being read
}

// pathOf is the path of the value being read, or of the key s itself.
func pathOf(stack []frame, isKey bool, s string) string {
	var b strings.Builder
	for i, f := range stack {
		last := i == len(stack)-1
		switch {
		case f.object && last && isKey:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(printable(s))
		case f.object:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(printable(f.key))
		default:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// printable makes a field name safe to echo: no NUL, valid UTF-8.
func printable(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", `\u0000`)
}

func hasNUL(path string, isKey bool) *Error {
	if isKey {
		return Invalid("A field name in the body holds a NUL character (\\u0000); remove it.",
			FieldError{Field: path, Message: "field names cannot hold a NUL character"})
	}
	return Invalid("The "+path+" field holds a NUL character (\\u0000), which text cannot hold; remove it.",
		FieldError{Field: path, Message: "must not contain a NUL character"})
}

func notUTF8(path string, isKey bool) *Error {
	if isKey {
		return Invalid("A field name in the body is not valid UTF-8; send text as UTF-8.",
			FieldError{Field: path, Message: "field names must be valid UTF-8"})
	}
	return Invalid("The "+path+" field is not valid UTF-8; send text as UTF-8.",
		FieldError{Field: path, Message: "must be valid UTF-8"})
}

// invalidAt is the offset of the first byte of raw that is not UTF-8, or -1.
func invalidAt(raw []byte) int {
	for i := 0; i < len(raw); {
		if raw[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// CheckText answers a 422 naming field when s holds a NUL or is not UTF-8, for a
// body that is text (an import file) rather than JSON.
func CheckText(field, s string) *Error {
	switch {
	case !utf8.ValidString(s):
		return Invalid("The "+field+" is not valid UTF-8; save the file as UTF-8 and send it again.",
			FieldError{Field: field, Message: "must be valid UTF-8"})
	case strings.ContainsRune(s, 0):
		return Invalid("The "+field+" holds a NUL character, which text cannot hold; remove it.",
			FieldError{Field: field, Message: "must not contain a NUL character"})
	}
	return nil
}

// CheckRequest answers a 400 when the request's path or a query parameter (name or
// value) holds a NUL or is not UTF-8, naming the parameter. Form bodies are checked
// by their handlers, which read them.
func CheckRequest(r *http.Request) *Error {
	if p := r.URL.Path; !utf8.ValidString(p) || strings.ContainsRune(p, 0) {
		return BadRequest("The address holds a NUL character or bytes that are not UTF-8; check the path.")
	}
	if plainASCII(r.URL.RawQuery) {
		return nil // the common case, checked without parsing the query
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return BadRequest("The query string is not well formed; check its %-escapes.")
	}
	return CheckValues("query parameter", q)
}

// plainASCII reports whether a raw query string can only decode to ASCII text
// without NUL: no byte and no %-escape outside 0x01-0x7F.
func plainASCII(raw string) bool {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == 0 || c >= 0x80:
			return false
		case c == '%':
			// Only %01-%7F pass here; NUL, bytes of 0x80 or more and malformed
			// escapes go to the full parse, which names them.
			if i+2 >= len(raw) || raw[i+1] < '0' || raw[i+1] > '7' || !isHex(raw[i+2]) || raw[i+1:i+3] == "00" {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// CheckValues answers a 400 naming the first of the values (query or form) whose
// name or value holds a NUL or is not UTF-8. what says what they are ("query
// parameter", "form field").
func CheckValues(what string, values url.Values) *Error {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
			return BadRequest("A " + what + " name holds a NUL character or bytes that are not UTF-8.")
		}
		for _, v := range values[name] {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				e := BadRequest("The " + what + " " + name + " holds a NUL character or bytes that are not UTF-8; send text as UTF-8 without NUL.")
				e.Fields = []FieldError{{Field: name, Message: "must be UTF-8 text without NUL"}}
				return e
			}
		}
	}
	return nil
}
