package served

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// PathFlags are the flags that name files, of every command: a relative
// path is the asker's, resolved against their working directory in a served
// run (the server runs in "/"), and against the starter's in the start
// payload. -o *-file=PATH, and --template with such an -o, are resolved
// too (ResolvePaths). TestPathFlagsAreResolved keeps the list whole.
var PathFlags = map[string]bool{
	"kubeconfig": true, "cache-dir": true, "certificate-authority": true, "client-certificate": true, "client-key": true,
	"checkpoint": true, "from-checkpoint": true, "profile-output": true,
}

// connectionFlags names kubectl's connection flags.
func connectionFlags() []string {
	fs := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// NewPayload is the start payload of a cache server of identity id for a
// command of flags over cfg: its connection flags, their paths absolute,
// KUBECONFIG, and the environment an exec plugin of cfg's runs with.
func NewPayload(flags *pflag.FlagSet, id warm.Identity, cfg *rest.Config) (*Payload, error) {
	p := &Payload{Identity: id, Flags: map[string][]string{}}
	if cfg.ExecProvider != nil {
		p.ExecEnv = os.Environ()
	}
	if v, ok := os.LookupEnv(clientcmd.RecommendedConfigPathEnvVar); ok {
		abs, err := absList(v, "")
		if err != nil {
			return nil, err
		}
		p.Kubeconfig = &abs
	}
	for _, name := range connectionFlags() {
		f := flags.Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		values := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		if PathFlags[name] {
			for i, v := range values {
				abs, err := absPath(v, "")
				if err != nil {
					return nil, err
				}
				values[i] = abs
			}
		}
		p.Flags[name] = values
	}
	return p, nil
}

// absPath makes path absolute against dir, or the working directory when
// dir is empty; "" stays "".
func absPath(path, dir string) (string, error) {
	if path == "" || filepath.IsAbs(path) {
		return path, nil
	}
	if dir == "" {
		return filepath.Abs(path)
	}
	return filepath.Join(dir, path), nil
}

// absList makes each path of a KUBECONFIG-style list absolute.
func absList(list, dir string) (string, error) {
	parts := filepath.SplitList(list)
	for i, p := range parts {
		abs, err := absPath(p, dir)
		if err != nil {
			return "", err
		}
		parts[i] = abs
	}
	return strings.Join(parts, string(os.PathListSeparator)), nil
}

// ResolvePaths makes the relative paths of the flags that name files
// (PathFlags, -o *-file=PATH, --template with such an -o) absolute against
// dir, the asker's working directory.
func ResolvePaths(flags *pflag.FlagSet, dir string) error {
	set := func(fl *pflag.Flag, value string) error {
		abs, err := absPath(value, dir)
		if err != nil || abs == value {
			return err
		}
		return fl.Value.Set(abs)
	}
	var err error
	flags.Visit(func(fl *pflag.Flag) {
		if err == nil && PathFlags[fl.Name] {
			err = set(fl, fl.Value.String())
		}
	})
	if err != nil {
		return err
	}
	out := flags.Lookup("output")
	if out == nil || !out.Changed {
		return nil
	}
	format, path, hasPath := strings.Cut(out.Value.String(), "=")
	if !strings.HasSuffix(format, "-file") {
		return nil
	}
	if hasPath {
		abs, err := absPath(path, dir)
		if err != nil {
			return err
		}
		if err := out.Value.Set(format + "=" + abs); err != nil {
			return err
		}
	}
	if tmpl := flags.Lookup("template"); tmpl != nil && tmpl.Changed {
		return set(tmpl, tmpl.Value.String())
	}
	return nil
}

// Kubeconfig are the kubeconfig files a direct run of the asker reads: its
// KUBECONFIG, each path absolute against its working directory, else
// ~/.kube/config of its HOME; nil when it has neither.
func (r *Run) Kubeconfig() ([]string, error) {
	req := r.Request()
	if kubeconfig, ok := req.Env[clientcmd.RecommendedConfigPathEnvVar]; ok {
		list, err := absList(kubeconfig, req.Dir)
		if err != nil {
			return nil, err
		}
		return filepath.SplitList(list), nil
	}
	if home := req.Env["HOME"]; home != "" {
		return []string{filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}, nil
	}
	return nil, nil
}

// WrapConfig is the WrapConfigFn of the run's own requests: the asker's
// credential (warm.Credential.Apply), then outer, an earlier WrapConfigFn
// such as the root's compression rule, which it must not drop (nil for none).
func (r *Run) WrapConfig(outer func(*rest.Config) *rest.Config) func(*rest.Config) *rest.Config {
	first := r.Request().Credential.Apply
	return func(cfg *rest.Config) *rest.Config {
		if first != nil {
			cfg = first(cfg)
		}
		if outer != nil {
			cfg = outer(cfg)
		}
		return cfg
	}
}

// CacheDir is the discovery cache a direct run of the asker reads: its
// KUBECACHEDIR, else ~/.kube/cache of its HOME; "" when it has neither.
func (r *Run) CacheDir() string {
	env := r.Request().Env
	switch {
	case env["KUBECACHEDIR"] != "":
		return env["KUBECACHEDIR"]
	case env["HOME"] != "":
		return filepath.Join(env["HOME"], ".kube", "cache")
	}
	return ""
}

// Connection reads the start payload's connection as the starter does: its
// connection flags, its kubeconfig files (absolute: the process runs in "/",
// and its environment has no KUBECONFIG), and the environment its exec
// plugin renews credentials with. It returns the context they select and
// its REST config.
func (p *Payload) Connection() (string, *rest.Config, error) {
	flags := genericclioptions.NewConfigFlags(true)
	fs := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	flags.AddFlags(fs)
	for name, values := range p.Flags {
		for _, v := range values {
			if err := fs.Set(name, v); err != nil {
				return "", nil, fmt.Errorf("--%s from the cache start payload: %w", name, err)
			}
		}
	}
	if p.Kubeconfig != nil {
		if err := query.ReadKubeconfigs(flags, filepath.SplitList(*p.Kubeconfig)); err != nil {
			return "", nil, err
		}
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return "", nil, err
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
		return "", nil, err
	}
	return name, cfg, nil
}

// The variables a cache server's start reads: how long it waits with nothing
// to answer, and how long it keeps an informer nobody uses.
const (
	IdleTimeoutEnv = "KUBECTL_IDX_CACHE_IDLE_TIMEOUT"
	DropAfterEnv   = "KUBECTL_IDX_CACHE_DROP_AFTER"
)

// ServeArgs are the arguments that start a cache server: cache serve, with
// --idle-timeout and --drop-after as IdleTimeoutEnv and DropAfterEnv say.
func ServeArgs() ([]string, error) {
	args := []string{"cache", "serve"}
	for env, flag := range map[string]string{IdleTimeoutEnv: "idle-timeout", DropAfterEnv: "drop-after"} {
		if v := os.Getenv(env); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("%s=%s: want a positive duration such as 30m", env, v)
			}
			args = append(args, "--"+flag+"="+d.String())
		}
	}
	return args, nil
}

// Problem words why the cache could not answer, for a warning line.
func Problem(err error) string {
	if errors.Is(err, warm.ErrUnsupported) {
		return warm.ErrUnsupported.Error()
	}
	return strings.TrimPrefix(err.Error(), ErrNoCache.Error()+": ")
}

// ReadPayload reads the start payload a starter wrote to in (warm.ReadPayload).
func ReadPayload(in io.Reader) (*Payload, error) {
	data, err := warm.ReadPayload(in)
	if err != nil {
		return nil, err
	}
	var p Payload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("reading the cache start payload: %w", err)
	}
	return &p, nil
}
