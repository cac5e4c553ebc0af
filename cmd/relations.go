package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// relationMaxLists bounds the LISTs in flight when a query informs on every
// type the server has: enough to overlap round trips, few enough not to queue
// behind the client's rate limiter or flood the server's fair queuing.
const relationMaxLists = 16

// RelationOptions are the flags and resolved state shared by the commands that
// follow relations between objects: tree, owners, orphans, events, selects,
// selected-by and uses.
type RelationOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	PrintFlags  *get.PrintFlags

	AllNamespaces bool
	SyncTimeout   time.Duration

	// Resolved by complete.
	namespace  string
	restConfig *rest.Config
	mapper     meta.RESTMapper
	printer    cliprinters.ResourcePrinter
	format     string
	progress   bool
	// newFactory builds informer factories; tests swap in fake clients.
	newFactory func(cfg informer.Config) (*informer.Factory, error)
	// listable lists the types the server serves; tests swap in a fixed list.
	listable func(namespacedOnly bool) ([]informer.Resource, []error)
	// warnings collects what the answer may be missing, in the order found.
	warnings []string
	// sortable is true for commands that print a List --sort-by can order.
	sortable bool

	genericiooptions.IOStreams
}

func newRelationOptions(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *RelationOptions {
	return &RelationOptions{
		ConfigFlags: configFlags,
		PrintFlags:  get.NewGetPrintFlags(),
		SyncTimeout: 60 * time.Second,
		IOStreams:   streams,
	}
}

// addFlags adds kubectl's printing flags and --sync-timeout.
func (o *RelationOptions) addFlags(cmd *cobra.Command) {
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "How long to wait for the informer caches to sync before giving up; 0 waits forever.")
}

// complete resolves the printer, namespace, clients and discovery. The printer
// comes first: an unknown -o needs no server.
func (o *RelationOptions) complete(cmd *cobra.Command) error {
	if cmd != nil {
		if all, err := cmd.Flags().GetBool("all-namespaces"); err == nil {
			o.AllNamespaces = all
		}
	}
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	o.printer = p
	o.format = *o.PrintFlags.OutputFormat
	if tmpl := o.PrintFlags.TemplateFlags.TemplateArgument; o.format == "" && tmpl != nil && *tmpl != "" {
		o.format = "go-template"
	}
	if o.SyncTimeout < 0 {
		return fmt.Errorf("--sync-timeout must not be negative, got %s", o.SyncTimeout)
	}
	if sortBy := o.sortBy(); sortBy != "" && !o.sortable {
		// Trees, chains and newest-last event lists have an order of their own.
		name := "this command"
		if cmd != nil {
			name = "kubectl idx " + cmd.Name()
		}
		return fmt.Errorf("--sort-by is not supported by %s", name)
	}
	if o.newFactory != nil {
		// Tests resolved everything else already.
		return nil
	}
	if o.namespace, o.restConfig, o.mapper, _, err = resolveClients(o.ConfigFlags, o.AllNamespaces); err != nil {
		return err
	}
	// A query over every type would repeat the server's deprecation notices
	// for types nobody asked about (v1 Endpoints, for one) on every run.
	o.restConfig.WarningHandler = rest.NoWarnings{}
	if o.restConfig.QPS == 0 {
		// client-go's default of 5 requests a second would spend seconds
		// throttling a query that lists and watches fifty types once.
		o.restConfig.QPS, o.restConfig.Burst = 50, 300
	}
	o.newFactory = func(cfg informer.Config) (*informer.Factory, error) {
		return informer.NewFactory(o.restConfig, cfg)
	}
	o.listable = func(namespacedOnly bool) ([]informer.Resource, []error) {
		dc, err := o.ConfigFlags.ToDiscoveryClient()
		if err != nil {
			return nil, []error{err}
		}
		return informer.ListableResources(dc, namespacedOnly)
	}
	if f, ok := o.ErrOut.(interface{ Fd() uintptr }); ok {
		o.progress = term.IsTerminal(int(f.Fd()))
	}
	return nil
}

// sortBy is the --sort-by value, "" when unset.
func (o *RelationOptions) sortBy() string {
	if o.PrintFlags == nil || o.PrintFlags.HumanReadableFlags == nil || o.PrintFlags.HumanReadableFlags.SortBy == nil {
		return ""
	}
	return *o.PrintFlags.HumanReadableFlags.SortBy
}

// warn records a warning for stderr and the JSON document.
func (o *RelationOptions) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(o.warnings, w) {
		o.warnings = append(o.warnings, w)
	}
}

// printWarnings writes the warnings to stderr, one line each.
func (o *RelationOptions) printWarnings() {
	for _, w := range o.warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
}

// docWarnings is the warnings for a JSON document: never null.
func (o *RelationOptions) docWarnings() []string {
	if o.warnings == nil {
		return []string{}
	}
	return o.warnings
}

// objectRef is one object named on the command line.
type objectRef struct {
	res  informer.Resource
	name string
}

// key is the object's cache key in namespace.
func (r objectRef) key(namespace string) string {
	if r.res.Namespaced {
		return namespace + "/" + r.name
	}
	return r.name
}

// notFound is kubectl's error for the object.
func (r objectRef) notFound() error {
	return apierrors.NewNotFound(r.res.GVR.GroupResource(), r.name)
}

// parseObjectArg reads TYPE/NAME, or TYPE NAME, as the relation commands
// take one object.
func (o *RelationOptions) parseObjectArg(verb string, args []string) (objectRef, error) {
	var typ, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		typ, name, _ = strings.Cut(args[0], "/")
		if typ == "" || name == "" || strings.Contains(name, "/") {
			return objectRef{}, fmt.Errorf("arguments in resource/name form must have a single resource and name, got %q", args[0])
		}
	case len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/"):
		typ, name = args[0], args[1]
	case len(args) == 0:
		return objectRef{}, fmt.Errorf("you must specify the object to %s as TYPE/NAME, e.g. deployment/web", verb)
	case len(args) == 1:
		return objectRef{}, fmt.Errorf("you must specify the object to %s as TYPE/NAME, e.g. %s/NAME; got %q", verb, args[0], args[0])
	default:
		return objectRef{}, fmt.Errorf("you must specify one object to %s as TYPE/NAME or TYPE NAME, got %q", verb, strings.Join(args, " "))
	}
	if strings.Contains(typ, ",") {
		return objectRef{}, fmt.Errorf("you must specify one object to %s, not a list of types: %q", verb, typ)
	}
	m, err := mappingFor(o.mapper, typ)
	if err != nil {
		return objectRef{}, err
	}
	return objectRef{res: informer.FromMapping(m), name: name}, nil
}

// world is a set of informers over many types, all in one factory.
type world struct {
	o       *RelationOptions
	factory *informer.Factory
	stores  []index.GraphStore
	kinds   map[schema.GroupKind]bool
	// full holds the stores of whole objects per kind, one per namespace
	// read or one for the world's scope.
	full map[schema.GroupKind][]cache.Indexer
	// namespace is the scope of the world's namespaced informers.
	namespace string
	// extra are the per-namespace factories loadFull started.
	extra []*informer.Factory
	// indexers are the indexes of the metadata informers.
	indexers cache.Indexers
}

// newWorld builds an empty world whose namespaced informers cover namespace
// ("" for all).
func (o *RelationOptions) newWorld(ctx context.Context, namespace string) (*world, error) {
	f, err := o.newFactory(informer.Config{
		Namespace:          namespace,
		SyncTimeout:        o.SyncTimeout,
		MaxConcurrentLists: relationMaxLists,
		Progress:           o.progressWriter(),
		ProgressDelay:      time.Second,
	})
	if err != nil {
		return nil, err
	}
	f.Start(reflectorContext(ctx))
	return &world{o: o, factory: f, namespace: namespace, indexers: index.GraphIndexers(),
		kinds: map[schema.GroupKind]bool{}, full: map[schema.GroupKind][]cache.Indexer{}}, nil
}

// reflectorContext keeps the reflectors' own log lines for -v=2 and above,
// as watch does: a factory shut down while a watch is reading logs "Warning:
// watch ended with error ... context canceled" at the default verbosity,
// noise on stderr once the answer is known. Failures reach the commands as
// errors and warnings of their own.
func reflectorContext(ctx context.Context) context.Context {
	return klog.NewContext(ctx, klog.FromContext(ctx).V(2))
}

// progressWriter is stderr on a terminal, nil otherwise.
func (o *RelationOptions) progressWriter() io.Writer {
	if !o.progress {
		return nil
	}
	return o.ErrOut
}

func (w *world) shutdown() {
	w.factory.Shutdown()
	for _, f := range w.extra {
		f.Shutdown()
	}
}

// add starts metadata-only informers, indexed for the graph, for the
// resources not yet in the world and waits for them. A type that cannot be
// listed is skipped with a warning naming it.
func (w *world) add(ctx context.Context, resources []informer.Resource) error {
	var added []informer.Resource
	var infs []cache.SharedIndexInformer
	for _, r := range resources {
		gk := r.GVK.GroupKind()
		if w.kinds[gk] {
			continue
		}
		w.kinds[gk] = true
		inf, err := w.factory.Informer(r, informer.MetadataOnly, w.indexers)
		if err != nil {
			return err
		}
		added = append(added, r)
		infs = append(infs, inf)
	}
	if len(added) == 0 {
		return nil
	}
	skipped, err := w.factory.WaitForSyncPartial(ctx)
	if err != nil {
		return err
	}
	failed := map[schema.GroupVersionResource]bool{}
	for _, s := range skipped {
		if s.Mode != informer.MetadataOnly {
			continue
		}
		failed[s.Resource.GVR] = true
		w.o.warn("cannot list %s, the answer may be incomplete: %s", s.Resource.Name(), warningText(s.Err))
	}
	for i, r := range added {
		if failed[r.GVR] {
			continue
		}
		w.stores = append(w.stores, index.GraphStore{GVK: r.GVK, Namespaced: r.Namespaced, Indexer: infs[i].GetIndexer()})
	}
	return nil
}

// addListable adds every listable type (namespaced ones only if asked).
func (w *world) addListable(ctx context.Context, namespacedOnly bool) error {
	resources, errs := w.o.listable(namespacedOnly)
	for _, err := range errs {
		w.o.warn("%s, the answer may be incomplete", warningText(err))
	}
	if len(resources) == 0 && len(errs) > 0 {
		return errs[0]
	}
	return w.add(ctx, resources)
}

// addOwnerKinds adds the kinds that objects of the world name as owners, level
// by level, until every referenced kind is in or known to be unavailable.
func (w *world) addOwnerKinds(ctx context.Context) error {
	tried := map[schema.GroupKind]bool{}
	for depth := 0; depth < index.MaxOwnerDepth; depth++ {
		var todo []informer.Resource
		for _, gk := range w.graph().OwnerKinds() {
			if w.kinds[gk] || tried[gk] {
				continue
			}
			tried[gk] = true
			m, err := w.o.mapper.RESTMapping(gk)
			if err != nil {
				w.o.warn("owners of kind %s cannot be looked up: the server doesn't serve it", kindName(gk))
				continue
			}
			todo = append(todo, informer.FromMapping(m))
		}
		if len(todo) == 0 {
			return nil
		}
		if err := w.add(ctx, todo); err != nil {
			return err
		}
	}
	return nil
}

// graph returns the graph over the world's synced stores.
func (w *world) graph() *index.Graph { return index.NewGraph(w.stores) }

// statusKinds are the built-in kinds whose trees show readiness and status;
// custom resources always do (their Ready condition). Other kinds would cost
// a full list for an empty column.
var statusKinds = map[schema.GroupKind]bool{
	{Kind: "Pod"}: true, {Kind: "Node"}: true, {Kind: "ReplicationController"}: true,
	{Kind: "PersistentVolumeClaim"}: true, {Kind: "PersistentVolume"}: true,
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "apps", Kind: "StatefulSet"}: true, {Group: "apps", Kind: "DaemonSet"}: true,
	{Group: "batch", Kind: "Job"}: true, {Group: "batch", Kind: "CronJob"}: true,
}

// fullNamespaceLimit is how many namespaces a cluster-wide world reads full
// objects from one namespace at a time; beyond it, one cluster-wide list per
// kind is cheaper than many small ones.
const fullNamespaceLimit = 8

// loadFull starts full informers for the kinds among nodes that have a status
// worth showing and waits for them. Failures only cost the status column. In
// a cluster-wide world, a kind whose nodes live in a few namespaces is read
// from those namespaces only: a tree of one Deployment must not cost a full
// list of every pod in the cluster.
func (w *world) loadFull(ctx context.Context, nodes []index.Node) error {
	type want struct {
		res        informer.Resource
		namespaces map[string]bool
	}
	wants := map[schema.GroupKind]*want{}
	var order []schema.GroupKind
	for _, n := range nodes {
		gk := n.GVK.GroupKind()
		if w.full[gk] != nil {
			continue
		}
		wt, ok := wants[gk]
		if !ok {
			builtin := gk.Group == "" || strings.HasSuffix(gk.Group, ".k8s.io") || !strings.Contains(gk.Group, ".")
			if builtin && !statusKinds[gk] {
				continue
			}
			r := informer.Resource{GVR: w.resourceFor(gk), GVK: n.GVK, Namespaced: n.Namespaced}
			if r.GVR.Empty() {
				continue
			}
			wt = &want{res: r, namespaces: map[string]bool{}}
			wants[gk] = wt
			order = append(order, gk)
		}
		wt.namespaces[n.Object.GetNamespace()] = true
	}
	// Group the kinds by the factory that reads them: "" is the world's own.
	scopes := map[string][]informer.Resource{}
	var scopeOrder []string
	addScope := func(ns string, r informer.Resource) {
		if _, ok := scopes[ns]; !ok {
			scopeOrder = append(scopeOrder, ns)
		}
		scopes[ns] = append(scopes[ns], r)
	}
	for _, gk := range order {
		wt := wants[gk]
		if !wt.res.Namespaced || w.namespace != metav1.NamespaceAll || len(wt.namespaces) > fullNamespaceLimit {
			addScope("", wt.res)
			continue
		}
		for ns := range wt.namespaces {
			addScope(ns, wt.res)
		}
	}
	var mu sync.Mutex
	var eg errgroup.Group
	eg.SetLimit(relationMaxLists)
	for _, ns := range scopeOrder {
		f := w.factory
		if ns != "" {
			var err error
			if f, err = w.o.newFactory(informerConfig(w.o, ns)); err != nil {
				return err
			}
			w.extra = append(w.extra, f)
		}
		infs := make([]cache.SharedIndexInformer, len(scopes[ns]))
		for i, r := range scopes[ns] {
			inf, err := f.Informer(r, informer.Full, nil)
			if err != nil {
				return err
			}
			infs[i] = inf
		}
		f.Start(ctx)
		eg.Go(func() error {
			skipped, err := f.WaitForSyncPartial(ctx)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			failed := map[schema.GroupVersionResource]bool{}
			for _, s := range skipped {
				if s.Mode != informer.Full {
					continue
				}
				failed[s.Resource.GVR] = true
				w.o.warn("cannot read the status of %s: %s", s.Resource.Name(), warningText(s.Err))
			}
			for i, r := range scopes[ns] {
				if !failed[r.GVR] {
					gk := r.GVK.GroupKind()
					w.full[gk] = append(w.full[gk], infs[i].GetIndexer())
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

// resourceFor returns the resource of a kind in the world.
func (w *world) resourceFor(gk schema.GroupKind) schema.GroupVersionResource {
	for _, r := range w.factory.Resources() {
		if r.GVK.GroupKind() == gk {
			return r.GVR
		}
	}
	return schema.GroupVersionResource{}
}

// fullObject returns the whole object behind a node, when loaded.
func (w *world) fullObject(n index.Node) runtime.Object {
	key := n.Object.GetName()
	if ns := n.Object.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	for _, idx := range w.full[n.GVK.GroupKind()] {
		obj, ok, err := idx.GetByKey(key)
		if err != nil || !ok {
			continue
		}
		ro, _ := obj.(runtime.Object)
		if a, err := meta.Accessor(ro); err != nil || a.GetUID() != n.Object.GetUID() {
			return nil
		}
		return ro
	}
	return nil
}

// item describes a node for a tree document.
func (w *world) item(n index.Node, now time.Time) *printers.TreeItem {
	return printers.TreeItemFor(n.GVK, n.Object, w.fullObject(n), now)
}

// lookupRoot finds the object named on the command line, or kubectl's
// NotFound. A type the user may not list is the error itself: there is no
// answer without the object.
func (w *world) lookupRoot(ref objectRef, namespace string) (index.Node, error) {
	gk := ref.res.GVK.GroupKind()
	g := w.graph()
	if !g.Has(gk) {
		return index.Node{}, fmt.Errorf("cannot list %s, so %s/%s cannot be found", ref.res.Name(), strings.ToLower(ref.res.GVK.Kind), ref.name)
	}
	n, ok, err := g.Get(gk, ref.key(namespace))
	if err != nil {
		return index.Node{}, err
	}
	if !ok {
		return index.Node{}, ref.notFound()
	}
	return n, nil
}

// rootNamespace is the namespace a command looks for its object in. With -A
// a namespaced object still needs one; kubectl uses the context's namespace.
func (o *RelationOptions) rootNamespace() (string, error) {
	if o.namespace != metav1.NamespaceAll {
		return o.namespace, nil
	}
	if o.ConfigFlags == nil {
		return metav1.NamespaceDefault, nil
	}
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}
