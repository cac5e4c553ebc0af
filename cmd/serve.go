package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/served"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// runCacheServer reads the start payload from in, connects as the starter
// does, and serves until the server shuts down: idle for idle, asked to
// stop, replaced, its credentials rejected for good, or ctx ended.
func runCacheServer(ctx context.Context, in io.Reader, idle, dropAfter time.Duration) error {
	data, err := warm.ReadPayload(in)
	if err != nil {
		return err
	}
	var p served.Payload
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("reading the cache start payload: %w", err)
	}
	flags := genericclioptions.NewConfigFlags(true)
	fs := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	flags.AddFlags(fs)
	for name, values := range p.Flags {
		for _, v := range values {
			if err := fs.Set(name, v); err != nil {
				return fmt.Errorf("--%s from the cache start payload: %w", name, err)
			}
		}
	}
	// The starter's kubeconfig files, absolute: this process runs in "/",
	// and its environment has no KUBECONFIG.
	if p.Kubeconfig != nil {
		if err := query.ReadKubeconfigs(flags, filepath.SplitList(*p.Kubeconfig)); err != nil {
			return err
		}
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return err
	}
	if x := cfg.ExecProvider; x != nil {
		// The plugin renews the credentials here as it would have in the
		// starter: with the starter's environment, which this process does
		// not have (warm.Spec's environment), then the kubeconfig's own.
		env := make([]clientcmdapi.ExecEnvVar, 0, len(p.ExecEnv)+len(x.Env))
		for _, kv := range p.ExecEnv {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env = append(env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
			}
		}
		x.Env = append(env, x.Env...)
	}
	name, err := query.ContextName(flags)
	if err != nil {
		return err
	}
	return served.New(served.Options{
		Identity: p.Identity, Version: cacheVersion(), Context: name, IdleTimeout: idle, DropAfter: dropAfter,
		Execute: func(ctx context.Context, run *served.Run, streams genericiooptions.IOStreams) int {
			args := run.Request().Args
			return execute(ctx, streams, args, &runContext{args: args, served: run})
		},
	}).Serve(ctx, cfg)
}
