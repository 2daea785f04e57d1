//go:build benchpprof

package main

import (
	"log"
	"net/http"
	_ "net/http/pprof" // the profile endpoints, on their own loopback listener
	"os"
	"time"
)

// A binary built with -tags benchpprof (`make load-profile`) serves the runtime's
// profiles on LECTERN_PPROF_ADDR (a loopback address) for `go tool pprof` while a
// load test runs. The production binary (make build) has no such endpoint.
func init() {
	addr := os.Getenv("LECTERN_PPROF_ADDR")
	if addr == "" {
		return
	}
	go func() {
		srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second}
		log.Printf("pprof on %s: %v", addr, srv.ListenAndServe())
	}()
}
