// Package completion answers the shell's TAB for kubectl idx: resource types
// from discovery, object names from the server, and --namespace, --context,
// --cluster and --user values, for the command line being completed.
package completion

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	// Resource, from a REST mapping; no informer starts here.
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Completer answers dynamic completion from the cluster that the command line
// being completed points at: cobra parses its flags (--kubeconfig, --context, -n,
// -A) into the ConfigFlags behind getter before calling in.
//
// It follows kubectl's own completion (k8s.io/kubectl/pkg/util/completion) in
// what it offers, but that package is not used: it needs two modules this one
// does not (for pod and container completions kubectl idx has no use for), and it
// runs a whole kubectl get per TAB where one metadata-only list is enough. Types
// are offered only if they can be listed and watched, since every kubectl idx
// command does both. Errors mean no completions, never output: the shell would
// show it as candidates.
type Completer struct {
	getter genericclioptions.RESTClientGetter
	// flags holds -A as cobra parsed it; nil means the current namespace.
	flags *query.ContextFlags
	// requestTimeout is --request-timeout; when it is not given, timeout bounds
	// server calls instead, so a TAB against an unreachable cluster gives up rather
	// than hang the shell.
	requestTimeout *string
	timeout        time.Duration
}

// New returns the completer of the command lines f parses.
func New(f *query.ContextFlags) *Completer {
	return &Completer{getter: f.ConfigFlags, flags: f, requestTimeout: f.ConfigFlags.Timeout, timeout: 5 * time.Second}
}

// TypeAndName completes the root command's arguments the way kubectl get's are:
// "TYPE[,TYPE...] NAME..." or "TYPE/NAME...".
func (c *Completer) TypeAndName(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	directive := cobra.ShellCompDirectiveNoFileComp
	switch {
	case len(args) > 0 && !strings.Contains(args[0], "/"):
		// "TYPE NAME...": names of that type, less those already given. A list of
		// types has no single set of names.
		if strings.Contains(args[0], ",") {
			return nil, directive
		}
		return without(c.names(cmd, args[0], toComplete), args[1:]), directive
	case strings.Contains(toComplete, "/"):
		// "TYPE/NA": names of TYPE, prefixed back with "TYPE/".
		typ, prefix, _ := strings.Cut(toComplete, "/")
		var comps []string
		for _, n := range c.names(cmd, typ, prefix) {
			comps = append(comps, typ+"/"+n)
		}
		return without(comps, args), directive
	case len(args) == 0:
		// The first argument: a type, or the last of a comma-separated list.
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		var comps []string
		for _, t := range c.resourceTypes(last) {
			comps = append(comps, done+t)
		}
		return comps, directive
	default:
		// After "TYPE/NAME" every argument has that form: offer "TYPE/" and let
		// the next TAB complete the name.
		var comps []string
		for _, t := range c.resourceTypes(toComplete) {
			comps = append(comps, t+"/")
		}
		return comps, directive | cobra.ShellCompDirectiveNoSpace
	}
}

// Object completes the one object of tree, owners, uses, selects,
// selected-by and events, "(TYPE/NAME | TYPE NAME)": first a type with its
// slash and no space after it, so that the next TAB completes the name; once
// one object is given, nothing.
func (c *Completer) Object(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	directive := cobra.ShellCompDirectiveNoFileComp
	switch {
	case len(args) == 0 && strings.Contains(toComplete, "/"):
		typ, prefix, _ := strings.Cut(toComplete, "/")
		var comps []string
		for _, n := range c.names(cmd, typ, prefix) {
			comps = append(comps, typ+"/"+n)
		}
		return comps, directive
	case len(args) == 0:
		var comps []string
		for _, t := range c.resourceTypes(toComplete) {
			comps = append(comps, t+"/")
		}
		return comps, directive | cobra.ShellCompDirectiveNoSpace
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		// "TYPE NAME", typed with a space.
		return c.names(cmd, args[0], toComplete), directive
	}
	return nil, directive
}

// resourceTypes returns the types starting with prefix (query.TypeNames).
func (c *Completer) resourceTypes(prefix string) []string {
	c.defaultTimeout()
	dc, err := c.cluster().ToDiscoveryClient()
	if err != nil {
		return nil
	}
	return query.TypeNames(dc, prefix)
}

// names returns the names of the objects of type typ starting with prefix, in
// the namespace of the command line, or in all namespaces with -A.
func (c *Completer) names(cmd *cobra.Command, typ, prefix string) []string {
	c.defaultTimeout()
	mapper, err := c.cluster().ToRESTMapper()
	if err != nil {
		return nil
	}
	mapping, err := query.MappingFor(mapper, typ)
	if err != nil {
		return nil
	}
	cfg, err := c.cluster().ToRESTConfig()
	if err != nil {
		return nil
	}
	ns := metav1.NamespaceAll
	if c.flags == nil || !c.flags.AllNamespaces {
		if ns, _, err = c.cluster().ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil
		}
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	names, _ := query.ObjectNames(ctx, cfg, informer.FromMapping(mapping), ns, prefix)
	return names
}

// kubeconfigNames returns a flag completion listing the names that pick returns
// from the merged kubeconfig, such as its clusters.
func (c *Completer) kubeconfigNames(pick func(*clientcmdapi.Config) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var comps []string
		for _, n := range c.kubeconfigValues(pick) {
			if strings.HasPrefix(n, toComplete) {
				comps = append(comps, n)
			}
		}
		return comps, cobra.ShellCompDirectiveNoFileComp
	}
}

// kubeconfigList is kubeconfigNames for a flag that takes a comma-separated
// list, as --context does: it completes the last name, keeps what is typed
// before it ("alpha,be" offers "alpha,beta") and leaves out names already
// listed. Once a comma shows a list is being typed, the shell adds no space
// after a completion while names remain to add, so another comma can follow. A
// first name still gets its space, as before lists: one context is the usual
// case (kubectl adds a space even within its `get pods,sec` lists).
func (c *Completer) kubeconfigList(pick func(*clientcmdapi.Config) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		directive := cobra.ShellCompDirectiveNoFileComp
		// With no comma, done is "" and last the whole word.
		i := strings.LastIndex(toComplete, ",")
		done, last := toComplete[:i+1], toComplete[i+1:]
		left := without(c.kubeconfigValues(pick), strings.Split(done, ","))
		var comps []string
		for _, n := range left {
			if strings.HasPrefix(n, last) {
				comps = append(comps, done+n)
			}
		}
		if done != "" && len(left) > 1 {
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		return comps, directive
	}
}

// kubeconfigValues returns the names pick returns from the merged kubeconfig,
// sorted, or none if it cannot be read.
func (c *Completer) kubeconfigValues(pick func(*clientcmdapi.Config) []string) []string {
	cfg, err := c.getter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil
	}
	names := pick(&cfg)
	slices.Sort(names)
	return names
}

// defaultTimeout sets --request-timeout to c.timeout unless the user gave one.
// Completion runs in a process of its own (kubectl-idx __complete), so nothing
// else sees the change.
func (c *Completer) defaultTimeout() {
	if t := c.requestTimeout; t != nil && (*t == "" || *t == "0") {
		*t = c.timeout.String()
	}
}

// without returns comps less the values in given, which are already on the
// command line.
func without(comps, given []string) []string {
	return slices.DeleteFunc(comps, func(s string) bool { return slices.Contains(given, s) })
}

// cluster is what completions that ask a server connect with: after
// --context a,b the first context named (a list is no context kubectl
// knows), otherwise the flags as given.
func (c *Completer) cluster() genericclioptions.RESTClientGetter {
	if c.flags == nil || c.flags.ConfigFlags == nil || c.flags.Context == nil {
		return c.getter
	}
	if first, _, ok := strings.Cut(*c.flags.Context, ","); ok {
		return c.flags.ForContext(first)
	}
	return c.getter
}

// Register registers dynamic completion on root: resource types, then object
// names, for its arguments, and values for --namespace, --context, --cluster
// and --user. --output already completes through kubectl's PrintFlags.
func (c *Completer) Register(root *cobra.Command) {
	root.ValidArgsFunction = c.TypeAndName

	flagValues := map[string]cobra.CompletionFunc{
		"namespace": func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return c.names(cmd, "namespaces", toComplete), cobra.ShellCompDirectiveNoFileComp
		},
		"context": c.kubeconfigList(func(cfg *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(cfg.Contexts)) }),
		"cluster": c.kubeconfigNames(func(cfg *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(cfg.Clusters)) }),
		"user":    c.kubeconfigNames(func(cfg *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(cfg.AuthInfos)) }),
	}
	for name, fn := range flagValues {
		// Registration fails only for a flag that does not exist or is registered
		// twice: programming errors, which the completion tests catch.
		cmdutil.CheckErr(root.RegisterFlagCompletionFunc(name, fn))
	}
}
