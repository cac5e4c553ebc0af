// Command demo starts a local kube-apiserver and etcd with the demo cluster of test/fixtures,
// runs a few `kubectl idx` commands against it, prints how to point a shell at it, and keeps
// it running until interrupted.
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./test/demo -binary bin/kubectl-idx
//
// With -exit it stops right after the commands (CI and the e2e smoke test) and exits 1 if any
// command failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// commands are run in order through `kubectl idx` plugin discovery and bash, as a user
// would type them.
var commands = []string{
	"kubectl idx pods -A",
	"kubectl idx deploy -n shop -o wide",
	"kubectl idx crontabs -A",
	"kubectl idx po,svc -n shop -l app=web",
	`kubectl idx pods -A -o json | jq -r '.items[] | select(.status.phase != "Running") | "\(.metadata.namespace)/\(.metadata.name)\t\(.status.phase)"'`,
}

func main() {
	binary := flag.String("binary", "bin/kubectl-idx", "Path of the kubectl-idx binary to demo.")
	exit := flag.Bool("exit", false, "Stop the API server right after the commands instead of waiting for Ctrl-C.")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "kubectl-idx-demo"), "Directory for the kubeconfig and the plugin PATH entry; reused across runs.")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *binary, *dir, *exit); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, binary, dir string, exitAfter bool) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("-binary: %w (run `make build` first)", err)
	}
	fmt.Fprintln(os.Stderr, "starting kube-apiserver and etcd ...")
	env, err := testenv.Start(ctx, testenv.Options{CRDs: fixtures.CRDs(), Dir: dir})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(os.Stderr, "stopping kube-apiserver and etcd ...")
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
		}
	}()
	start := time.Now()
	if _, err := fixtures.Load(ctx, env.Clientset, env.Dynamic); err != nil {
		return fmt.Errorf("loading the demo cluster: %w", err)
	}
	fmt.Fprintf(os.Stderr, "demo cluster loaded in %s\n\n", time.Since(start).Round(time.Millisecond))
	pathDir, err := env.PluginPath(binary)
	if err != nil {
		return err
	}

	var failed []string
	for _, c := range commands {
		fmt.Fprintf(out, "$ %s\n", c)
		res, err := testenv.Shell(ctx, env.Environ(env.Kubeconfig, pathDir), c)
		fmt.Fprint(out, res.Stdout)
		fmt.Fprint(os.Stderr, res.Stderr)
		if err != nil || res.ExitCode != 0 {
			failed = append(failed, c)
			fmt.Fprintf(out, "(exit code %d)\n", res.ExitCode)
		}
		fmt.Fprintln(out)
	}

	fmt.Fprintln(out, "# Point a shell at the demo cluster:")
	fmt.Fprintf(out, "export KUBECONFIG=%s\n", env.Kubeconfig)
	fmt.Fprintf(out, "export PATH=%s:$PATH\n", pathDir)
	if len(failed) > 0 {
		return fmt.Errorf("%d demo command(s) failed: %q", len(failed), failed)
	}
	if exitAfter {
		return nil
	}
	fmt.Fprintln(os.Stderr, "\nThe API server keeps running; press Ctrl-C to stop it.")
	<-ctx.Done()
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return nil
	}
	return context.Cause(ctx)
}
