package cmd

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

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
	// verdict marks a code that carries a full answer's verdict (why's),
	// not a failure.
	verdict bool
}

// Error returns what the exit code says, which the command has printed.
func (e *exitError) Error() string { return e.msg }

// resolveTargets resolves the contexts the flags name, once, before any
// request: the kubeconfig's current context (or --context's one) as the
// target of a plain run, or each context of --context a,b,c or
// --all-contexts, which name their answers. A context whose clients cannot be
// built is a target that answers with that error, as one whose server cannot
// be reached does.
func (f *Flags) resolveTargets() ([]query.Target, error) {
	if f.resolved != nil {
		return f.resolved, nil
	}
	names, err := f.contextNames()
	if err != nil {
		return nil, err
	}
	if names == nil {
		t, err := f.target("", f.ConfigFlags)
		if err != nil {
			return nil, err
		}
		return []query.Target{t}, nil
	}
	targets := make([]query.Target, len(names))
	for i, name := range names {
		targets[i], err = f.target(name, f.forContext(name))
		if err != nil {
			targets[i] = query.Target{Context: name, Err: err}
		}
	}
	return targets, nil
}

// target reads the target of context (its name, "" for a plain run) from
// the connection flags: the namespace (every namespace with -A) and the
// context's own, the REST config, the REST mapper and discovery kubectl's
// cache feeds, and the category expander ("all").
func (f *Flags) target(context string, flags *genericclioptions.ConfigFlags) (query.Target, error) {
	t := query.Target{Context: context}
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

// contextNames returns the contexts --context and --all-contexts name when
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
func (f *Flags) checkContexts(names []string) error {
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

// forContext returns connection flags for the one context name ("" for the
// kubeconfig's current one) with every other connection flag as given. They
// are new flags, not the root's: ConfigFlags keep the clients they build, one
// cluster's. Every exported field is carried over, so a flag cli-runtime adds
// later is not silently lost.
func (f *Flags) forContext(name string) *genericclioptions.ConfigFlags {
	c := genericclioptions.NewConfigFlags(true)
	dst, src := reflect.ValueOf(c).Elem(), reflect.ValueOf(f.ConfigFlags).Elem()
	for i := range dst.NumField() {
		if dst.Type().Field(i).IsExported() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	c.Context = &name
	// An error would be the root's too, which useKubeconfig reported first.
	_ = f.useKubeconfig(c)
	return c
}

// useKubeconfig makes c read f.kubeconfig's files, when set, in place of
// those KUBECONFIG or ~/.kube/config name in the process's environment: a
// served run reads the asker's (servedRun.prepare), and the cache server its
// starter's. clientcmd's loading rules read the environment when they are
// made; c keeps the loader it made first, whose rules are changed here
// before it loads anything. --kubeconfig still comes first, as in kubectl.
func (f *Flags) useKubeconfig(c *genericclioptions.ConfigFlags) error {
	if f.kubeconfig == nil {
		return nil
	}
	return readKubeconfigs(c, f.kubeconfig)
}

// readKubeconfigs makes c's loader read files in place of the environment's.
func readKubeconfigs(c *genericclioptions.ConfigFlags, files []string) error {
	rules, ok := c.ToRawKubeConfigLoader().ConfigAccess().(*clientcmd.ClientConfigLoadingRules)
	if !ok {
		return fmt.Errorf("reading the kubeconfig files %s: the connection flags' loader is a %T", strings.Join(files, string(filepath.ListSeparator)), c.ToRawKubeConfigLoader().ConfigAccess())
	}
	rules.Precedence = files
	// Migrating an old ~/.kube/.kubeconfig is the user's own commands' to do.
	rules.MigrationRules = nil
	return nil
}

// report turns what the targets answered into what the user sees, the same
// way for every command and for one context or several:
//
//   - warnings on stderr, each naming its context when several were asked,
//     a failed context's error among them;
//   - the answer on stdout (print, handed every answer and those warnings;
//     it returns how much it printed);
//   - nothing, kubectl's notice of an empty answer ("No resources found"), on
//     stderr when a table printed nothing and every context answered in full;
//   - the exit code: 0; 1 with the one context's error, or when no context
//     could answer; ExitPartial when some could not.
//
// One context's error comes after what it answered in part (the objects
// found when some named do not exist), as kubectl prints it.
func report[T any](o *QueryOptions, answers []query.Answer[T], nothing string, print func(answers []query.Answer[T], warnings []string) (int, error)) error {
	// What an answer may be missing is said with the answer: a context that
	// gave none has its error to say.
	var warnings []string
	failed := 0
	for _, a := range answers {
		if !o.several() {
			if answered(a.Value) {
				warnings = a.Warnings
			}
			break
		}
		if a.Err != nil {
			failed++
			warnings = append(warnings, contextWarnings(a.Context, a.Err)...)
		}
		if answered(a.Value) {
			for _, w := range a.Warnings {
				warnings = append(warnings, prefixContext(a.Context, w))
			}
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	var err error
	if !o.several() {
		if err = answers[0].Err; err != nil {
			failed = 1
			if !answered(answers[0].Value) {
				return err
			}
		}
	} else if err = contextsOutcome(failed, len(answers)); failed == len(answers) {
		return err
	}
	n, printErr := print(answers, warnings)
	if printErr != nil {
		return printErr
	}
	if n == 0 && failed == 0 && nothing != "" && o.human() {
		fmt.Fprintln(o.ErrOut, nothing)
	}
	return err
}

// answered reports whether v holds an answer: not nil.
func answered(v any) bool {
	r := reflect.ValueOf(v)
	return r.IsValid() && !(r.Kind() == reflect.Pointer && r.IsNil())
}

// notice is kubectl's notice of an empty answer: in, a format naming the
// namespace, when every context's answer is of the same one (scopes), else
// none.
func notice(scopes []string, none, in string) string {
	if len(scopes) == 0 || scopes[0] == metav1.NamespaceAll || slices.ContainsFunc(scopes, func(s string) bool { return s != scopes[0] }) {
		return none
	}
	return fmt.Sprintf(in, scopes[0])
}

// listingScopes are the scopes of the listings answered.
func listingScopes(answers []query.Answer[*query.Listing]) []string {
	var scopes []string
	for _, a := range answers {
		if a.Value != nil {
			scopes = append(scopes, a.Value.Scope)
		}
	}
	return scopes
}

// noResources is kubectl's notice of a listing with nothing in it.
func noResources(answers []query.Answer[*query.Listing]) string {
	return notice(listingScopes(answers), "No resources found", "No resources found in %s namespace.")
}

// closeListings releases what the listings hold until they are printed.
func closeListings(answers []query.Answer[*query.Listing]) {
	for _, a := range answers {
		a.Value.Close()
	}
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
		out = append(out, prefixContext(name, errtext.Warning(e)))
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
