// Command demo starts a local control plane run by the real controllers
// (kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok's fake
// nodes), applies a small workload with kubectl as a user would, runs the main
// `kubectl idx` questions against it (pods by owner and by node, a tree, a change
// feed across a rollout), prints how to point a shell at it, and keeps it running
// until interrupted, so a newcomer can `kubectl scale`, `kubectl rollout restart`
// and `kubectl delete` and watch kubectl idx follow what the controllers do.
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./test/demo -binary bin/kubectl-idx
//
// With -exit it stops right after the commands (CI and the e2e smoke test) and exits 1 if any
// command failed.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// workload is what the demo applies: Deployments with a Service, a PodDisruptionBudget and
// the ConfigMap and Secret their pods use, a DaemonSet, a StatefulSet, a CronJob and a Job,
// and a custom resource.
//
//go:embed workload.yaml
var workload string

// setup runs before the commands, as a user would prepare a cluster: apply the workload in
// manifest, then wait for the controllers to roll everything out.
func setup(manifest string) []string {
	return []string{
		"kubectl apply -f " + manifest + " >/dev/null",
		"kubectl -n shop rollout status deployment/web --timeout=2m >/dev/null",
		"kubectl -n shop rollout status deployment/api --timeout=2m >/dev/null",
		"kubectl -n shop rollout status statefulset/cache --timeout=2m >/dev/null",
		"kubectl -n ops rollout status daemonset/node-agent --timeout=2m >/dev/null",
		"kubectl -n ops wait --for=condition=complete job/report-now --timeout=2m >/dev/null",
	}
}

// commands are run in order through `kubectl idx` plugin discovery and bash, as a user would
// type them: the questions kubectl get cannot answer first.
var commands = []string{
	"kubectl idx pods -A --by-owner",
	"kubectl idx pods -A --by-node",
	"kubectl idx pods -n shop --show-owner",
	"kubectl idx tree deployment/web -n shop",
	"kubectl idx selects service/web -n shop",
	"kubectl idx uses configmap/web-config -n shop",
	// A feed across a rollout: the current state, then the new ReplicaSet and its pods as
	// the Deployment controller brings them up and scales the old ones down.
	"(sleep 2; kubectl -n shop set image deployment/web web=registry.example/web:1.1 >/dev/null) & " +
		"timeout --preserve-status 10 kubectl idx watch deploy,rs,pods -n shop --owner deployment/web",
	`kubectl idx pods -A --by-owner -o json | jq -r '.groups[] | "\(.name)\t\(.summary.pods.ready // 0)/\(.summary.pods.total // 0) ready"'`,
}

func main() {
	binary := flag.String("binary", "bin/kubectl-idx", "Path of the kubectl-idx binary to demo.")
	exit := flag.Bool("exit", false, "Stop the control plane right after the commands instead of waiting for Ctrl-C.")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "kubectl-idx-demo"), "Directory for the kubeconfig, the logs and the plugin PATH entry; reused across runs.")
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
	// A directory reused across runs may hold the logs and certificates of the last one.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler and 3 fake nodes ...")
	start := time.Now()
	env, err := testenv.Start(ctx, testenv.Options{CRDs: fixtures.CRDs(), Dir: dir, Controllers: &testenv.ControllerOptions{Nodes: 3}})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(os.Stderr, "stopping the control plane ...")
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
		}
	}()
	pathDir, err := env.PluginPath(binary)
	if err != nil {
		return err
	}
	manifest := filepath.Join(dir, "workload.yaml")
	if err := os.WriteFile(manifest, []byte(workload), 0o644); err != nil {
		return err
	}
	environ := env.Environ(env.Kubeconfig, pathDir)
	for _, c := range setup(manifest) {
		res, err := testenv.Shell(ctx, environ, c)
		if err != nil || res.ExitCode != 0 {
			return fmt.Errorf("setting up the demo workload: %s: exit code %d: %v\n%s", c, res.ExitCode, err, res.Stderr)
		}
	}
	fmt.Fprintf(os.Stderr, "control plane up and workload rolled out in %s\n\n", time.Since(start).Round(100*time.Millisecond))

	_, jqErr := exec.LookPath("jq")
	var failed []string
	for _, c := range commands {
		fmt.Fprintf(out, "$ %s\n", c)
		if strings.Contains(c, "| jq") && jqErr != nil {
			fmt.Fprint(out, "(skipped: jq is not installed)\n\n")
			continue
		}
		res, err := testenv.Shell(ctx, environ, c)
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
	fmt.Fprintln(out, "# then change it and watch kubectl idx follow the controllers, for example:")
	fmt.Fprintln(out, "#   kubectl idx watch deploy,rs,pods -n shop --owner deployment/web   # in one terminal")
	fmt.Fprintln(out, "#   kubectl -n shop scale deployment/web --replicas=5                 # in another")
	fmt.Fprintln(out, "#   kubectl -n shop rollout restart deployment/web")
	fmt.Fprintln(out, "#   kubectl -n shop delete deployment/web")
	fmt.Fprintf(out, "# Component logs: %s\n", filepath.Join(dir, "logs"))
	if len(failed) > 0 {
		return fmt.Errorf("%d demo command(s) failed: %q", len(failed), failed)
	}
	if exitAfter {
		return nil
	}
	fmt.Fprintln(os.Stderr, "\nThe control plane keeps running; press Ctrl-C to stop it.")
	<-ctx.Done()
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return nil
	}
	return context.Cause(ctx)
}
