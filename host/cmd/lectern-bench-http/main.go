// Command lectern-bench-http is `make bench-http`: it serves a seeded host with
// bin/lectern and drives the mixed read set of signed-in users against it
// (host/internal/benchhttp). It is a tool of its own, never part of the host's
// binary.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lectern-research/lectern/host/internal/benchhttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := benchhttp.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
