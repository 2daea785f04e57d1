// Command lectern is the Lectern host: see `lectern help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lectern-research/lectern/host/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
