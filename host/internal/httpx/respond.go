package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/lectern-research/lectern/host/internal/store"
)

// Error is an API error: the status, a stable machine code and a sentence for people.
// Cause is the internal error behind it; it is logged, and shown to the client only
// when DEV_ERROR_DETAIL is true.
type Error struct {
	Status int
	Code   string
	Detail string
	Fields []FieldError
	Cause  error
}

// FieldError says what is wrong with one input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Detail, e.Cause)
	}
	return e.Code + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Cause }

// BadRequest is a 400 for a request that cannot be read.
func BadRequest(detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "bad_request", Detail: detail}
}

// Unauthorized is a 401: no identity, or a credential that does not verify.
func Unauthorized(code, detail string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: code, Detail: detail}
}

// Forbidden is a 403: the caller is known and may not do this.
func Forbidden(code, detail string) *Error {
	return &Error{Status: http.StatusForbidden, Code: code, Detail: detail}
}

// NotFound is a 404. Rows owned by someone else are reported as not found too.
func NotFound(detail string) *Error {
	return &Error{Status: http.StatusNotFound, Code: "not_found", Detail: detail}
}

// Invalid is a 422 naming each field that failed validation.
func Invalid(detail string, fields ...FieldError) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "validation_error", Detail: detail, Fields: fields}
}

// Internal is a 500 whose cause is logged, never shown outside development. A
// cause that is the database going away (store.Unavailable: a restart, a
// failover) is not a bug but a dependency down: a 503 saying so (errDatabaseDown).
func Internal(cause error) *Error {
	if store.Unavailable(cause) {
		return Unavailable(errDatabaseDown, cause)
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error", Detail: "An internal error occurred.", Cause: cause}
}

// errDatabaseDown is the detail of a request the database went away under; its
// transaction was rolled back.
const errDatabaseDown = "The database could not be reached, so nothing was changed; try again in a moment."

// Unavailable is a 503 for a dependency that is down.
func Unavailable(detail string, cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Detail: detail, Cause: cause}
}

// BadGateway is a 502 for an upstream (a model provider, the LLM gateway) that
// failed or refused.
func BadGateway(detail string, cause error) *Error {
	return &Error{Status: http.StatusBadGateway, Code: "bad_gateway", Detail: detail, Cause: cause}
}

// GatewayTimeout is a 504 for an upstream that did not answer in time.
func GatewayTimeout(detail string, cause error) *Error {
	return &Error{Status: http.StatusGatewayTimeout, Code: "gateway_timeout", Detail: detail, Cause: cause}
}

type errorBody struct {
	Code      string       `json:"code"`
	Detail    string       `json:"detail"`
	RequestID string       `json:"request_id,omitempty"`
	Fields    []FieldError `json:"fields,omitempty"`
	Exception string       `json:"exception,omitempty"`
}

// Err writes err as the error body. An *Error keeps its status and code; any other
// error becomes a 500. Server-side failures are logged with the request id.
func Err(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		apiErr = Internal(err)
	}
	if apiErr.Status >= 500 && ClientGone(r) {
		// What failed, failed because the client left (its query was canceled
		// with it): nobody reads this answer, and it is not the server's fault.
		// A client error (a body cut short, say) keeps its own status.
		slog.InfoContext(ctx, "client closed the request", "request_id", RequestID(ctx), "error", err)
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	if apiErr.Status >= 500 {
		slog.ErrorContext(ctx, "request failed",
			"request_id", RequestID(ctx), "status", apiErr.Status, "code", apiErr.Code, "error", err)
	}
	body := errorBody{Code: apiErr.Code, Detail: apiErr.Detail, RequestID: RequestID(ctx), Fields: apiErr.Fields}
	if Debug(ctx) && apiErr.Cause != nil {
		body.Exception = apiErr.Cause.Error()
	}
	JSON(w, apiErr.Status, body)
}

// StatusClientClosedRequest is the status logged and counted for a request whose
// client went away before the answer was written (nginx's 499). It is never a
// server error.
const StatusClientClosedRequest = 499

// ClientGone reports whether r's client closed the connection (or canceled the
// request) while it was served. A deadline the server set is not the client
// leaving.
func ClientGone(r *http.Request) bool {
	return errors.Is(r.Context().Err(), context.Canceled)
}

// JSON writes v with the given status.
func JSON(w http.ResponseWriter, status int, v any) {
	b := bodies.Get().(*bytes.Buffer)
	defer putBody(b)
	enc := gojson.NewEncoder(b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	if checkEncoding {
		sameAsEncodingJSON(v, b.Bytes(), err)
	}
	if err != nil {
		b.Reset() // as with encoding/json: the status is sent, the body is empty
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	// The whole body is known: its length goes with it, and the response is not
	// sent in chunked encoding.
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// bodies holds response bodies between responses: a new buffer for each answer
// was allocated and cleared anew every time, 49 kB for the due queue's 50 cards
// (BenchmarkJSON; docs/benchmarks.md, "Eleventh session").
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBody returns b to bodies, unless it grew past what a page needs: a rare
// export of megabytes is not held for the next small answer.
func putBody(b *bytes.Buffer) {
	if b.Cap() > 1<<20 {
		return
	}
	b.Reset()
	bodies.Put(b)
}

// checkEncoding is whether JSON compares each body with encoding/json's: in every
// test binary, but for the benchmarks of JSON itself.
var checkEncoding = testing.Testing()

// sameAsEncodingJSON panics when body (or err) is not what encoding/json writes
// for v. Responses are encoded by goccy/go-json, three times faster than
// encoding/json on the due queue's 50 cards (0.24 against 0.75 ms) and promised
// to write the same bytes; every response of every test binary is checked here.
func sameAsEncodingJSON(v any, body []byte, err error) {
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	wantErr := enc.Encode(v)
	switch {
	case wantErr != nil && err != nil:
		return
	case wantErr != nil:
		panic(fmt.Sprintf("httpx: goccy/go-json encoded a %T that encoding/json refuses: %v", v, wantErr))
	case err != nil:
		panic(fmt.Sprintf("httpx: goccy/go-json refused a %T that encoding/json encodes: %v", v, err))
	}
	if !bytes.Equal(want.Bytes(), body) {
		panic(fmt.Sprintf("httpx: goccy/go-json and encoding/json disagree on a %T:\n%s\n%s", v, body, want.Bytes()))
	}
}

type ctxKey int

const (
	requestIDKey ctxKey = iota
	debugKey
)

// WithRequestID returns ctx carrying the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestID is the id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// WithDebug returns ctx saying whether raw error detail may reach the client
// (DEV_ERROR_DETAIL).
func WithDebug(ctx context.Context, on bool) context.Context {
	return context.WithValue(ctx, debugKey, on)
}

// Debug reports whether raw error detail may reach the client.
func Debug(ctx context.Context) bool {
	on, _ := ctx.Value(debugKey).(bool)
	return on
}
