package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Access says who may call a route. Every route declares one; the router applies it
// before the handler runs.
type Access int

const (
	// AccessPublic routes answer anyone: liveness, readiness, the API description.
	AccessPublic Access = iota + 1
	// AccessOps routes need the ops key (SERVICE_API_KEY in X-API-Key).
	AccessOps
)

func (a Access) String() string {
	switch a {
	case AccessPublic:
		return "public"
	case AccessOps:
		return "ops"
	}
	return "undeclared"
}

// Route is one entry of the route table.
type Route struct {
	Method  string
	Pattern string
	Access  Access
	Handler http.Handler
}

// routes is the whole route table of the host. Every route added here must also be
// described in openapi.json; TestOpenAPICoversEveryRoute fails otherwise.
func (h *handler) routes(reg *prometheus.Registry) []Route {
	return []Route{
		{http.MethodGet, "/healthz", AccessPublic, http.HandlerFunc(h.healthz)},
		{http.MethodGet, "/readyz", AccessPublic, http.HandlerFunc(h.readyz)},
		{http.MethodGet, "/api/openapi.json", AccessPublic, http.HandlerFunc(serveOpenAPI)},
		{http.MethodGet, "/metrics", AccessOps, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})},
	}
}
