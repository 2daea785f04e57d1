package backup

import (
	"net/http"
	"strings"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// maintenanceOpen are the paths served during maintenance: health, sign-in (an
// admin must reach the panel), the caller's own identity (the dashboard asks it
// on every page) and the backups panel. A path ending in "/" opens everything
// under it.
var maintenanceOpen = []string{
	"/healthz", "/readyz", "/api/openapi.json",
	"/api/auth/", "/api/me",
	"/api/admin/backups", "/api/admin/backups/",
}

// MaintenanceOpen reports whether path is served while the host is in
// maintenance.
func MaintenanceOpen(path string) bool {
	for _, p := range maintenanceOpen {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}

// MaintenanceGate answers 503 with one sentence on every path but the open ones
// while the view says the host is in maintenance. A nil view never gates.
func MaintenanceGate(v *View, open func(path string) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if msg := v.Maintenance(); msg != "" && !open(r.URL.Path) {
				w.Header().Set("Retry-After", "60")
				httpx.Err(w, r, &httpx.Error{Status: http.StatusServiceUnavailable, Code: "maintenance", Detail: msg})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
