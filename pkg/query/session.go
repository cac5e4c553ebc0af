package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// relationMaxLists bounds the LISTs in flight when a query informs on every
// type the server has: enough to overlap round trips, few enough not to queue
// behind the client's rate limiter or flood the server's fair queuing.
const relationMaxLists = 16

// Config is what a Session needs to ask one cluster: the Target, then what
// the question is narrowed by. The command layer builds it from flags and the
// kubeconfig; nothing in it is a flag.
type Config struct {
	Target

	// LabelSelector and FieldSelector narrow List, Group and Watch on the
	// server. They are not applied to owners, nodes or related objects.
	LabelSelector string
	FieldSelector string
	// KeepManagedFields keeps metadata.managedFields (--show-managed-fields).
	KeepManagedFields bool
	// SyncTimeout bounds every wait for caches; zero waits for ctx only.
	SyncTimeout time.Duration
	// Progress, when not nil, receives a sync progress line (a terminal).
	Progress io.Writer
	// WarningText words an error inside a warning line; nil means Error().
	WarningText func(error) string
	// ObjectStatus gives the READY and STATUS of an object in a tree, as the
	// tables print them; nil leaves them empty.
	ObjectStatus func(obj runtime.Object, now time.Time) (ready, status string)
	// Where are the --where expressions every object of an answer must match
	// (where.go); nil for none.
	Where *where.Conditions
}

// Hooks stand in for the clients a Session builds from a target's REST
// config: tests hand each target its fakes. Each nil hook means the real
// client.
type Hooks struct {
	// NewFactory builds informer factories; nil means informer.NewFactory
	// over RESTConfig.
	NewFactory func(informer.Config) (*informer.Factory, error)
	// Listable lists the types that support list and watch; nil means
	// informer.ListableResources over Discovery.
	Listable func(namespacedOnly bool) ([]informer.Resource, []error)
	// TableClient returns the REST client the server's tables of a group
	// version are read with; nil means one over RESTConfig.
	TableClient func(gv schema.GroupVersion) (rest.Interface, error)
	// GetMetadata reads one object's metadata; nil means a metadata client
	// over RESTConfig.
	GetMetadata func(ctx context.Context, res informer.Resource, namespace, name string) (metav1.Object, error)
}

// Session answers questions about one cluster. It owns what every question
// needs once: the configuration, the factories it starts (each question shuts
// its own down before it returns, the watch when it ends) and the warnings of a
// partial answer. A Session answers one question at a time.
type Session struct {
	cfg Config
	// wideConfig is RESTConfig for questions over every type.
	wideConfig *rest.Config

	mu       sync.Mutex
	warnings []string
	// tableClients builds the REST clients tables are read with; without a
	// REST config (tests), those of the session's first factory, ready once
	// clientsReady is closed.
	tableOnce    sync.Once
	tableClients func(schema.GroupVersion) (rest.Interface, error)
	clientsReady chan struct{}
	// where is the session's --where, nil without one.
	where *whereState
	// rediscover refreshes a cached discovery once, when a type it listed
	// answers NotFound (stillServed).
	rediscover sync.Once
}

// NewSession returns a Session for cfg.
func NewSession(cfg Config) *Session {
	if cfg.RESTConfig != nil && cfg.RESTConfig.QPS == 0 && cfg.RESTConfig.RateLimiter == nil {
		// client-go's default of 5 requests a second, in bursts of 10, would
		// spend seconds throttling a query that lists and watches fifty types
		// once, or one big list read in pages: the eleventh page of 100,000
		// pods waited 200 ms for nothing, and so did every page after it.
		cfg.RESTConfig = rest.CopyConfig(cfg.RESTConfig)
		cfg.RESTConfig.QPS, cfg.RESTConfig.Burst = 50, 300
	}
	s := &Session{cfg: cfg, clientsReady: make(chan struct{}), where: newWhereState(cfg.Where, cfg.Target)}
	if cfg.RESTConfig != nil {
		wide := rest.CopyConfig(cfg.RESTConfig)
		// A query over every type would repeat the server's deprecation
		// notices for types nobody asked about (v1 Endpoints) on every run.
		wide.WarningHandler = rest.NoWarnings{}
		s.wideConfig = wide
	}
	return s
}

// Config returns the session's configuration.
func (s *Session) Config() Config { return s.cfg }

// Warnings returns what the answers so far may be missing, in the order found,
// each once, then --where's run-time errors. It is never nil.
func (s *Session) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(append([]string{}, s.warnings...), s.whereWarnings()...)
}

// warn records a warning once.
func (s *Session) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.warnings, w) {
		s.warnings = append(s.warnings, w)
	}
}

// warningText words err for a warning line.
func (s *Session) warningText(err error) string {
	if s.cfg.WarningText != nil {
		return s.cfg.WarningText(err)
	}
	return err.Error()
}

// newFactory builds a factory over the user's REST config.
func (s *Session) newFactory(cfg informer.Config) (*informer.Factory, error) {
	return s.factoryOver(s.cfg.RESTConfig, cfg)
}

// factoryOver builds a factory over restConfig (Config.NewFactory's, when
// set), which tells its warnings to the session's.
func (s *Session) factoryOver(restConfig *rest.Config, cfg informer.Config) (*informer.Factory, error) {
	if cfg.OnWarning == nil {
		cfg.OnWarning = func(_ informer.Resource, w string) { s.warn("%s", w) }
	}
	var f *informer.Factory
	var err error
	if s.cfg.NewFactory != nil {
		f, err = s.cfg.NewFactory(cfg)
	} else {
		f, err = s.source().NewFactory(restConfig, cfg)
	}
	if err == nil {
		s.keepClients(f)
	}
	return f, err
}

// keepClients remembers the clients of the session's first factory: without
// a REST config, tables are read with them.
func (s *Session) keepClients(f *informer.Factory) {
	if s.cfg.RESTConfig != nil {
		return
	}
	s.tableOnce.Do(func() {
		s.tableClients = f.Clients().Typed
		close(s.clientsReady)
	})
}

// newWideFactory builds a factory for a question that informs on many types:
// a higher client-side rate and bounded concurrent LISTs. cfg names the
// namespace and anything else the question narrows by.
func (s *Session) newWideFactory(cfg informer.Config) (*informer.Factory, error) {
	cfg.SyncTimeout = s.cfg.SyncTimeout
	cfg.MaxConcurrentLists = relationMaxLists
	return s.factoryOver(s.wideConfig, cfg)
}

// listable lists the types a question over every type reads.
func (s *Session) listable(namespacedOnly bool) ([]informer.Resource, []error) {
	if s.cfg.Listable != nil {
		return s.cfg.Listable(namespacedOnly)
	}
	if s.cfg.Discovery == nil {
		return nil, []error{fmt.Errorf("no discovery client to list the server's types")}
	}
	return informer.ListableResources(s.cfg.Discovery, namespacedOnly)
}

// syncPartial starts f and waits for its informers. Informers of mode whose
// list failed for good are reported through warnf (with the resource's name
// and the cause) and returned; the others are synced. An error is returned
// only when waiting itself failed (timeout, ctx).
func (s *Session) syncPartial(ctx context.Context, f *informer.Factory, mode informer.Mode, warnf string) (map[schema.GroupVersionResource]bool, error) {
	f.Start(reflectorContext(ctx))
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		return nil, err
	}
	failed := map[schema.GroupVersionResource]bool{}
	for _, sk := range skipped {
		if sk.Mode != mode {
			continue
		}
		failed[sk.Resource.GVR] = true
		if apierrors.IsNotFound(sk.Err) && !s.stillServed(sk.Resource) {
			// Listed from a stale discovery cache (a CRD deleted since):
			// the type is gone, and so is everything of it.
			continue
		}
		s.warn(warnf, sk.Resource.Name(), s.warningText(sk.Err))
	}
	return failed, nil
}

// stillServed reports whether the server still serves res, whose LIST
// answered NotFound. The types of a question over every type come from
// discovery, which kubectl caches on disk for hours: a CustomResourceDefinition
// deleted since is still in the cache, and its LIST answers NotFound. The
// cache is refreshed once per session, as kubectl refreshes it when a type is
// not found, and the type's group version is asked again. Without a cached
// discovery, or when the server cannot say, the type counts as served.
func (s *Session) stillServed(res informer.Resource) bool {
	cd, ok := s.cfg.Discovery.(discovery.CachedDiscoveryInterface)
	if !ok {
		return true
	}
	s.rediscover.Do(cd.Invalidate)
	list, err := cd.ServerResourcesForGroupVersion(res.GVR.GroupVersion().String())
	if err != nil {
		return !apierrors.IsNotFound(err) && !errors.Is(err, memory.ErrCacheNotFound)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == res.GVR.Resource })
}

// reflectorContext keeps the reflectors' own log lines for -v=2 and above: a
// factory shut down while a watch is reading logs "Warning: watch ended with
// error ... context canceled" at the default verbosity, noise on stderr once
// the answer is known. Failures reach the caller as errors and warnings.
func reflectorContext(ctx context.Context) context.Context {
	return klog.NewContext(ctx, klog.FromContext(ctx).V(2))
}

// rootNamespace is the namespace an object named on the command line is
// looked for in: the session's, or under -A the context's.
func (s *Session) rootNamespace() string {
	if s.cfg.Namespace != metav1.NamespaceAll {
		return s.cfg.Namespace
	}
	if s.cfg.DefaultNamespace == "" {
		return metav1.NamespaceDefault
	}
	return s.cfg.DefaultNamespace
}

// Request is one resource type asked for and, optionally, the names of the
// objects wanted.
type Request struct {
	Resource informer.Resource
	Names    []string
	// Mode is how much of each object the answer reads; the printer decides.
	Mode informer.Mode
}

// ObjectRef is one object named on the command line of a relation question.
type ObjectRef struct {
	Resource informer.Resource
	Name     string
}

// key is the object's cache key in namespace.
func (r ObjectRef) key(namespace string) string {
	if r.Resource.Namespaced {
		return namespace + "/" + r.Name
	}
	return r.Name
}

// NotFound is kubectl's error for the object.
func (r ObjectRef) NotFound() error {
	return apierrors.NewNotFound(r.Resource.GVR.GroupResource(), r.Name)
}

// String is the object as kubectl names it in messages: deployment/web.
func (r ObjectRef) String() string {
	return strings.ToLower(r.Resource.GVK.Kind) + "/" + r.Name
}

// NameSelector is a field selector for the one object named, joined with the
// user's own: a name is an argument, so it is escaped, else a ',' or '=' in
// it would turn into selector syntax the server rejects or reads as another
// term.
func NameSelector(name, fieldSelector string) string {
	byName := "metadata.name=" + fields.EscapeValue(name)
	if fieldSelector == "" {
		return byName
	}
	return byName + "," + fieldSelector
}

// kindName names a kind with its group, as kubectl does: ReplicaSet.apps.
func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// OwnerResolver returns the owner lookup of the session's namespace (owners
// of cluster-scoped kinds are looked up everywhere); the caller shuts it down.
func (s *Session) OwnerResolver() *informer.OwnerResolver {
	return s.newOwnerResolver(s.cfg.Namespace)
}

// newOwnerResolver returns an owner lookup over namespace ("" for all).
func (s *Session) newOwnerResolver(namespace string) *informer.OwnerResolver {
	return informer.NewOwnerResolver(func() (*informer.Factory, error) {
		return s.newWideFactory(informer.Config{Namespace: namespace})
	}, s.cfg.Mapper)
}
