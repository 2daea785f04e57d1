package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// healthz says the process is alive. It touches nothing else, so a slow database
// never gets a healthy host restarted.
func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, map[string]string{"status": "ok", "version": h.Version})
}

type readiness struct {
	Status        string `json:"status"` // ready or not_ready
	Database      string `json:"database"`
	SchemaVersion int    `json:"schema_version"`
	SchemaLatest  int    `json:"schema_latest"`
	Detail        string `json:"detail,omitempty"`
}

// readyz says whether the host can serve: the database answers and every migration
// of this binary is applied. 503 otherwise, with the same body.
func (h *handler) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	out := readiness{Status: "ready", Database: "ok", SchemaLatest: h.Migrator.Latest()}
	if err := h.Pool.Ping(ctx); err != nil {
		out.Status, out.Database, out.Detail = "not_ready", "unreachable", "database unreachable"
		httpx.JSON(w, http.StatusServiceUnavailable, out)
		return
	}
	st, err := h.Migrator.Status(ctx)
	if err != nil {
		out.Status, out.Database, out.Detail = "not_ready", "error", "cannot read the schema version"
		httpx.JSON(w, http.StatusServiceUnavailable, out)
		return
	}
	out.SchemaVersion = st.Current
	if !st.UpToDate() {
		out.Status, out.Detail = "not_ready", "migrations pending"
		httpx.JSON(w, http.StatusServiceUnavailable, out)
		return
	}
	httpx.JSON(w, http.StatusOK, out)
}
