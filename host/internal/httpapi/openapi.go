package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPIDocument describes every route of the route table. It is written by hand,
// so it carries the prose and schemas people need; TestOpenAPICoversEveryRoute keeps
// it and the router in step both ways.
//
//go:embed openapi.json
var openAPIDocument []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openAPIDocument)
}
