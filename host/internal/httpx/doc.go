// Package httpx is the HTTP edge of the host's API: it reads what clients send and
// writes what they get back. Only HTTP code imports it: the handler files of each
// area (api.go, handlers.go, *_http.go), the server (httpapi), the dashboard (web)
// and the auth resolvers. Stores, services and jobs return domain errors, which the
// handlers map to the errors made here (docs/api-errors.md, docs/architecture.md).
//
// # Answers
//
// JSON writes a body; Err writes the one error body every API error uses:
//
//	{"code": "not_found", "detail": "paper not found", "request_id": "…"}
//
// plus "fields" for validation errors and, only when DEV_ERROR_DETAIL is true, an
// "exception" with the raw cause.
//
// # Input
//
// DecodeJSON is the one reader of JSON request bodies. It and the Check functions
// refuse, before anything reaches the database, text that PostgreSQL cannot store: a
// NUL character or bytes that are not UTF-8. Each refusal is an API error that names
// the field or parameter, in a sentence.
//
// The package is internal to the host; its API is not stable.
package httpx
