package query

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// ContextFlags are the flags that say which clusters a command asks:
// kubectl's connection flags, -A and --all-contexts. Targets reads the
// targets they name from the kubeconfig.
type ContextFlags struct {
	*genericclioptions.ConfigFlags
	// AllNamespaces is -A.
	AllNamespaces bool
	// AllContexts is --all-contexts: every context of the kubeconfig, as
	// --context a,b,c names several.
	AllContexts bool
	// Kubeconfig, when set, are the kubeconfig files the connection flags
	// read in place of the process environment's (UseKubeconfig).
	Kubeconfig []string
}

// Targets resolves the contexts the flags name, once, before any
// request: the kubeconfig's current context (or --context's one) as the
// target of a plain run, or each context of --context a,b,c or
// --all-contexts, which name their answers. A context whose clients cannot be
// built is a target that answers with that error, as one whose server cannot
// be reached does.
func (f *ContextFlags) Targets() ([]Target, error) {
	names, err := f.ContextNames()
	if err != nil {
		return nil, err
	}
	if names == nil {
		t, err := f.target("", f.ConfigFlags)
		if err != nil {
			return nil, err
		}
		return []Target{t}, nil
	}
	targets := make([]Target, len(names))
	for i, name := range names {
		targets[i], err = f.target(name, f.ForContext(name))
		if err != nil {
			targets[i] = Target{Context: name, Err: err}
		}
	}
	return targets, nil
}

// target reads the target of context (its name, "" for a plain run) from
// the connection flags: the namespace (every namespace with -A) and the
// context's own, the REST config, the REST mapper and discovery kubectl's
// cache feeds, and the category expander ("all").
func (f *ContextFlags) target(context string, flags *genericclioptions.ConfigFlags) (Target, error) {
	t := Target{Context: context}
	var err error
	if t.DefaultNamespace, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
		return t, err
	}
	if t.Namespace = t.DefaultNamespace; f.AllNamespaces {
		t.Namespace = metav1.NamespaceAll
	}
	if t.RESTConfig, err = flags.ToRESTConfig(); err != nil {
		return t, err
	}
	if t.Mapper, err = flags.ToRESTMapper(); err != nil {
		return t, err
	}
	dc, err := flags.ToDiscoveryClient()
	if err != nil {
		return t, err
	}
	t.Discovery, t.Categories = dc, restmapper.NewDiscoveryCategoryExpander(dc)
	// --where's schemas, from the OpenAPI documents discovery's cache keeps.
	t.Schemas = where.NewSchemas(dc.OpenAPIV3())
	return t, nil
}

// ContextNames returns the contexts --context and --all-contexts name when
// they name more than one (or --all-contexts is set): nil means one context
// and kubectl's behavior. Empty names, names given twice, both flags at once
// and names the kubeconfig does not have are errors before any request.
//
// A name the kubeconfig does not have is worded one way, the one or one of
// several: `context "nope" does not exist`, clientcmd's words, which kubectl
// prints when the namespace comes from -n. Without -n kubectl says `Error in
// configuration: context was not found for specified context: nope` instead
// (its namespace lookup validates the whole configuration first); the
// shorter one names the context as every other error names an object.
func (f *ContextFlags) ContextNames() ([]string, error) {
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
		if value == "" {
			return nil, nil
		}
		return nil, f.checkContexts([]string{value})
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
	if err := f.checkContexts(names); err != nil {
		return nil, err
	}
	return names, nil
}

// checkContexts returns the error of the first of names the merged
// kubeconfig does not have.
func (f *ContextFlags) checkContexts(names []string) error {
	known, err := f.kubeconfigContexts()
	if err != nil {
		return err
	}
	for _, n := range names {
		if !known[n] {
			return fmt.Errorf("context %q does not exist", n)
		}
	}
	return nil
}

// kubeconfigContexts reads the names of the merged kubeconfig's contexts.
func (f *ContextFlags) kubeconfigContexts() (map[string]bool, error) {
	raw, err := f.ForContext("").ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(raw.Contexts))
	for n := range raw.Contexts {
		known[n] = true
	}
	return known, nil
}

// ForContext returns connection flags for the one context name ("" for the
// kubeconfig's current one) with every other connection flag as given. They
// are new flags, not the root's: ConfigFlags keep the clients they build, one
// cluster's. Every exported field is carried over, so a flag cli-runtime adds
// later is not silently lost.
func (f *ContextFlags) ForContext(name string) *genericclioptions.ConfigFlags {
	c := genericclioptions.NewConfigFlags(true)
	dst, src := reflect.ValueOf(c).Elem(), reflect.ValueOf(f.ConfigFlags).Elem()
	for i := range dst.NumField() {
		if dst.Type().Field(i).IsExported() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	c.Context = &name
	// An error would be the root's too, which UseKubeconfig reported first.
	_ = f.UseKubeconfig(c)
	return c
}

// UseKubeconfig makes c read f.Kubeconfig's files, when set, in place of
// those KUBECONFIG or ~/.kube/config name in the process's environment: a
// served run reads the asker's (servedRun.prepare), and the cache server its
// starter's. clientcmd's loading rules read the environment when they are
// made; c keeps the loader it made first, whose rules are changed here
// before it loads anything. --kubeconfig still comes first, as in kubectl.
func (f *ContextFlags) UseKubeconfig(c *genericclioptions.ConfigFlags) error {
	if f.Kubeconfig == nil {
		return nil
	}
	return ReadKubeconfigs(c, f.Kubeconfig)
}

// ReadKubeconfigs makes c's loader read files in place of the environment's.
func ReadKubeconfigs(c *genericclioptions.ConfigFlags, files []string) error {
	rules, ok := c.ToRawKubeConfigLoader().ConfigAccess().(*clientcmd.ClientConfigLoadingRules)
	if !ok {
		return fmt.Errorf("reading the kubeconfig files %s: the connection flags' loader is a %T", strings.Join(files, string(filepath.ListSeparator)), c.ToRawKubeConfigLoader().ConfigAccess())
	}
	rules.Precedence = files
	// Migrating an old ~/.kube/.kubeconfig is the user's own commands' to do.
	rules.MigrationRules = nil
	return nil
}

// ContextName is the kubeconfig context the flags select: --context, or the
// kubeconfig's current context.
func ContextName(flags *genericclioptions.ConfigFlags) (string, error) {
	if flags == nil {
		// A tree built on its own (tests): no kubeconfig.
		return "", nil
	}
	if flags.Context != nil && *flags.Context != "" {
		return *flags.Context, nil
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return "", err
	}
	return raw.CurrentContext, nil
}
