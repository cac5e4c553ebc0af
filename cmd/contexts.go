package cmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// maxConcurrentContexts bounds the clusters asked at once: enough that N
// healthy clusters answer in about the time of the slowest, few enough that a
// kubeconfig of a hundred contexts does not open a hundred sets of informers.
const maxConcurrentContexts = 8

// Exit codes. A complete answer exits 0 and an error 1, as kubectl does. With
// several contexts, an answer some contexts could not give exits
// ExitPartial, after a warning line per failed context; when every context
// failed the command exits 1.
const (
	ExitError   = 1
	ExitPartial = 2
)

// exitError ends the command with its code, once what it has to say is
// printed.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// contextNames returns the contexts --context and --all-contexts name when
// they name more than one (or --all-contexts is set): nil means one context
// and today's behavior. Empty names, names given twice, both flags at once and
// names the kubeconfig does not have are errors before any request.
func (f *Flags) contextNames() ([]string, error) {
	if f == nil || f.ConfigFlags == nil {
		return nil, nil
	}
	value := ""
	if f.Context != nil {
		value = *f.Context
	}
	if f.AllContexts {
		if value != "" {
			return nil, errors.New("--all-contexts and --context cannot be used together")
		}
		known, err := f.kubeconfigContexts()
		if err != nil {
			return nil, err
		}
		if len(known) == 0 {
			return nil, errors.New("--all-contexts: the kubeconfig has no contexts")
		}
		return slices.Sorted(maps.Keys(known)), nil
	}
	if !strings.Contains(value, ",") {
		return nil, nil
	}
	names := strings.Split(value, ",")
	seen := map[string]bool{}
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return nil, fmt.Errorf("invalid --context %q: empty context name", value)
		}
		if seen[n] {
			return nil, fmt.Errorf("invalid --context %q: context %q is named twice", value, n)
		}
		seen[n] = true
	}
	known, err := f.kubeconfigContexts()
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if !known[n] {
			// kubectl's words for a --context the kubeconfig lacks.
			return nil, fmt.Errorf("context was not found for specified context: %s", n)
		}
	}
	return names, nil
}

// kubeconfigContexts reads the names of the merged kubeconfig's contexts.
func (f *Flags) kubeconfigContexts() (map[string]bool, error) {
	raw, err := f.forContext("").ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(raw.Contexts))
	for n := range raw.Contexts {
		known[n] = true
	}
	return known, nil
}

// forContext returns flags that connect to the one context name ("" for the
// kubeconfig's current one) with every other connection flag as given.
func (f *Flags) forContext(name string) *Flags {
	src := f.ConfigFlags
	c := genericclioptions.NewConfigFlags(true)
	c.CacheDir, c.KubeConfig = src.CacheDir, src.KubeConfig
	c.ClusterName, c.AuthInfoName, c.Namespace, c.APIServer = src.ClusterName, src.AuthInfoName, src.Namespace, src.APIServer
	c.TLSServerName, c.Insecure, c.CertFile, c.KeyFile, c.CAFile = src.TLSServerName, src.Insecure, src.CertFile, src.KeyFile, src.CAFile
	c.BearerToken, c.Username, c.Password = src.BearerToken, src.Username, src.Password
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup, c.ImpersonateUserExtra = src.Impersonate, src.ImpersonateUID, src.ImpersonateGroup, src.ImpersonateUserExtra
	c.Timeout, c.DisableCompression, c.WrapConfigFn = src.Timeout, src.DisableCompression, src.WrapConfigFn
	c.Context = &name
	return &Flags{ConfigFlags: c, AllNamespaces: f.AllNamespaces}
}

// contextResult is one context's answer: what it could answer and, when it
// failed or answered in part, why.
type contextResult[T any] struct {
	Context string
	Answer  T
	Err     error
}

// fanOut asks every context concurrently, at most maxConcurrentContexts at
// once, and returns the results in the order of names. One context's failure
// never stops the others.
func fanOut[T any](ctx context.Context, names []string, ask func(ctx context.Context, name string) (T, error)) []contextResult[T] {
	results := make([]contextResult[T], len(names))
	sem := make(chan struct{}, maxConcurrentContexts)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ans, err := ask(ctx, name)
			results[i] = contextResult[T]{Context: name, Answer: ans, Err: err}
		}()
	}
	wg.Wait()
	return results
}

// contextWarnings words a context's failure as warning lines, each naming
// the context: one per error of an aggregate (objects not found).
func contextWarnings(name string, err error) []string {
	if err == nil {
		return nil
	}
	errs := []error{err}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		errs = agg.Errors()
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, prefixContext(name, warningText(e)))
	}
	return out
}

// prefixContext names the context a warning is about.
func prefixContext(name, warning string) string {
	return fmt.Sprintf("context %q: %s", name, warning)
}

// contextsOutcome is the exit of a command over several contexts: nil when
// every context answered, ExitPartial when some did, an error when none did.
// Each failed context's warning lines are printed by then.
func contextsOutcome(failed, total int) error {
	switch {
	case failed == 0:
		return nil
	case failed < total:
		return &exitError{code: ExitPartial, msg: fmt.Sprintf("%d of %d contexts failed", failed, total)}
	}
	return fmt.Errorf("no context could answer: all %d failed", total)
}
