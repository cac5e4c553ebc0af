package testenv

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main runs run, the work of a command under test/ (a bench, the demo's tools), with a context
// that SIGINT and SIGTERM cancel. An error is printed as kubectl-idx prints one, "error: <msg>"
// on stderr, and the program exits 1.
func Main(run func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		stop()
		os.Exit(1)
	}
}
