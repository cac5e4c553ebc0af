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
// make demo runs it through hack/demo.sh, which builds what it needs first. Each step says how
// long it took in the last run, from the file -timings names (hack/demo.sh passes
// ~/.cache/kubectl-idx/demo-timings).
//
// With -exit it stops right after the commands (CI and the e2e smoke test) and exits 1 if any
// command failed. Ctrl-C, SIGINT or SIGTERM stop the control plane at any point and exit 0:
// an interrupt is how the demo ends, not a failure, so make reports no error for it.
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
	timings := flag.String("timings", "", "File that keeps how long each step took, to say so in the next run; empty keeps nothing.")
	flag.Parse()

	os.Exit(demo(os.Stdout, os.Stderr, *binary, *dir, *timings, *exit))
}

// demo runs the demo until it is done (-exit) or interrupted and returns the exit code: 0
// after an interrupt whatever the demo was doing, once the control plane is stopped.
func demo(out, errOut io.Writer, binary, dir, timings string, exitAfter bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, out, errOut, newSteps(errOut, timings), binary, dir, exitAfter)
	var stopErr *stopError
	if ctx.Err() != nil && !errors.As(err, &stopErr) {
		// Whatever the interrupt cut short (a rollout, a command) failed because of it.
		fmt.Fprintln(errOut, "demo: interrupted; nothing of the demo is left running")
		return 0
	}
	if err != nil {
		fmt.Fprintf(errOut, "error: %v\n", err)
		return 1
	}
	return 0
}

// stopError is a control plane that did not stop cleanly: a failure even after an interrupt,
// since something may be left running.
type stopError struct{ err error }

func (e *stopError) Error() string { return "stopping the control plane: " + e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

func run(ctx context.Context, out, errOut io.Writer, steps *steps, binary, dir string, exitAfter bool) (err error) {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("-binary: %w (run `make build` first)", err)
	}
	// A directory reused across runs may hold the logs and certificates of the last one.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	start := time.Now()
	done := steps.begin("control-plane", "starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler and 3 fake nodes")
	env, err := testenv.Start(ctx, testenv.Options{CRDs: fixtures.CRDs(), Dir: dir, Controllers: &testenv.ControllerOptions{Nodes: 3}})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(errOut, "demo: stopping the control plane")
		if stopErr := env.Stop(); stopErr != nil {
			err = errors.Join(err, &stopError{stopErr})
		}
	}()
	done()
	pathDir, err := env.PluginPath(binary)
	if err != nil {
		return err
	}
	manifest := filepath.Join(dir, "workload.yaml")
	if err := os.WriteFile(manifest, []byte(workload), 0o644); err != nil {
		return err
	}
	environ := env.Environ(env.Kubeconfig, pathDir)
	done = steps.begin("workload", "applying the workload and waiting for the controllers to roll it out")
	for _, c := range fixtures.DemoSetup(manifest) {
		res, err := testenv.Shell(ctx, environ, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || res.ExitCode != 0 {
			return fmt.Errorf("setting up the demo workload: %s: exit code %d: %v\n%s", c, res.ExitCode, err, res.Stderr)
		}
	}
	done()
	fmt.Fprintf(errOut, "demo: control plane up and workload rolled out in %s\n\n", human(time.Since(start).Seconds()))

	_, jqErr := exec.LookPath("jq")
	var failed []string
	done = steps.begin("commands", "running kubectl idx against it")
	for _, c := range commands {
		fmt.Fprintf(out, "$ %s\n", c)
		if strings.Contains(c, "| jq") && jqErr != nil {
			fmt.Fprint(out, "(skipped: jq is not installed)\n\n")
			continue
		}
		res, err := testenv.Shell(ctx, environ, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprint(out, res.Stdout)
		fmt.Fprint(errOut, res.Stderr)
		if err != nil || res.ExitCode != 0 {
			failed = append(failed, c)
			fmt.Fprintf(out, "(exit code %d)\n", res.ExitCode)
		}
		fmt.Fprintln(out)
	}
	done()

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
	fmt.Fprintln(errOut, "\nThe control plane keeps running; press Ctrl-C to stop it.")
	<-ctx.Done()
	return nil
}
