package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/buildinfo"
	"github.com/lectern-research/lectern/host/internal/config"
)

// workerHealth is all a worker host (lectern serve --role worker) serves on its
// listener, so that an orchestrator can watch it: GET /healthz answers 200 while
// the process runs; GET /readyz answers 200 while the database answers, else
// 503. Everything else is 404: a worker serves no API.
func workerHealth(pool *pgxpool.Pool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeHealth(w, http.StatusOK, map[string]string{"status": "ok", "role": config.RoleWorker, "version": buildinfo.Version()})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := pool.Ping(ctx); err != nil {
			writeHealth(w, http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "role": config.RoleWorker,
				"detail": "The database does not answer; jobs wait until it does."})
			return
		}
		writeHealth(w, http.StatusOK, map[string]string{"status": "ready", "role": config.RoleWorker})
	})
	return mux
}

func writeHealth(w http.ResponseWriter, status int, body map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
