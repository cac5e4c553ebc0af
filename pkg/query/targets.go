package query

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// Target is one kubeconfig context, resolved: the clients and the scope a
// Session asks its cluster with. The command layer resolves one per context
// from its flags, once, before any question; one context is the list of one.
type Target struct {
	// Context names the kubeconfig context in an answer over several
	// contexts, whose objects, warnings and documents each say which context
	// they came from. It is "" for the one context of a plain run, which
	// answers exactly as kubectl would.
	Context string
	// RESTConfig connects to the server. Not needed when the Hooks a question
	// uses are all given (tests).
	RESTConfig *rest.Config
	// Source is where the target's informers come from: nil is
	// informer.OneShot, a direct run's; the cache server's is a Pool's.
	Source informer.Source
	// PodResources keeps the requests and limits of the target's pods
	// across answers (a cache server's, with its Pool); nil computes them
	// for each answer.
	PodResources *index.PodResourcesCache
	// Mapper resolves kinds to resources, as kubectl's discovery-backed
	// mapper; Categories expands "all" and the other categories.
	Mapper     meta.RESTMapper
	Categories restmapper.CategoryExpander
	// Discovery lists the types the server serves, for the questions that read
	// every type (tree, orphans, events). Nil with Hooks.Listable set is fine.
	Discovery discovery.DiscoveryInterface
	// Schemas types --where expressions by the server's OpenAPI schemas, read
	// through Discovery's cache; nil types them dynamically.
	Schemas *where.Schemas
	// Namespace is the scope of namespaced types: "" for all namespaces (-A).
	Namespace string
	// DefaultNamespace is the context's namespace: where an object named on
	// the command line of a relation question is looked for under -A.
	DefaultNamespace string
	// Err is why the context could not be resolved (a kubeconfig context
	// whose cluster is missing, say). Ask answers such a target with it, as it
	// answers one whose server cannot be reached.
	Err error

	Hooks
}

// MaxConcurrentTargets bounds the clusters asked at once: enough that N
// healthy clusters answer in about the time of the slowest, few enough that a
// kubeconfig of a hundred contexts does not open a hundred sets of informers.
const MaxConcurrentTargets = 8

// Answer is what one target answered.
type Answer[T any] struct {
	// Context is the target's (Target.Context).
	Context string
	// Value is the answer. A question may return it beside Err, for an
	// answer in part: the objects found when some of those named do not
	// exist.
	Value T
	// Warnings say what Value may be missing (a type the user may not list),
	// each once, in the order found: the session's (Session.Warnings).
	Warnings []string
	// Err is why the target could not answer, or not in full.
	Err error
}

// Ask asks question of every target concurrently, at most
// MaxConcurrentTargets at once, each through a Session of its own over cfg
// and that target, and returns their answers in the targets' order. One
// target's failure never stops the others. Sync progress lines are drawn for
// one cluster: over several contexts they are left out, since the lines of
// several clusters would overwrite each other.
func Ask[T any](ctx context.Context, targets []Target, cfg Config, question func(context.Context, *Session) (T, error)) []Answer[T] {
	answers := make([]Answer[T], len(targets))
	var g errgroup.Group
	g.SetLimit(MaxConcurrentTargets)
	for i, t := range targets {
		g.Go(func() error {
			answers[i].Context = t.Context
			if t.Err != nil {
				answers[i].Err = t.Err
				return nil
			}
			s := NewSession(cfg.For(t))
			answers[i].Value, answers[i].Err = question(ctx, s)
			answers[i].Warnings = s.Warnings()
			return nil
		})
	}
	// Answers carry their errors; the group's is always nil.
	_ = g.Wait()
	return answers
}

// For returns cfg for asking target t.
func (cfg Config) For(t Target) Config {
	cfg.Target = t
	if t.Context != "" {
		cfg.Progress = nil
	}
	return cfg
}

// feedFunc runs one target's change feed through s (Session.Watch,
// Session.WatchEvents), handing its events to emit and calling flush when it
// has caught up. i is the target's index among followFeeds' targets.
type feedFunc func(ctx context.Context, i int, s *Session, emit func(*feed.Event) error, flush func() error) error

// followFeeds runs the feed of every target at once and merges them into one
// stream: emit and flush are called from one goroutine at a time, each event
// names its target's context (feed.Event.Context), and each target's feed
// reconnects on its own. A target whose feed cannot start, or fails for good
// while ctx lives, is handed to ended, from its own goroutine, while the
// others go on. followFeeds returns once every feed has ended: nil, or the error
// emit or flush returned, which ends every feed.
func followFeeds(ctx context.Context, targets []Target, cfg Config, run feedFunc, emit func(*feed.Event) error, flush func() error, ended func(Answer[struct{}])) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var printErr error
	// locked calls f under the lock; its error, the printer's, ends every
	// feed and is what Follow returns.
	locked := func(f func() error) error {
		mu.Lock()
		defer mu.Unlock()
		if printErr != nil {
			return printErr
		}
		if err := f(); err != nil {
			printErr = err
			cancel()
			return err
		}
		return nil
	}
	// Every feed runs at once, unlike Ask's questions: a feed does not end,
	// so a bound would leave the contexts beyond it unheard.
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			err := t.Err
			if err == nil {
				err = run(ctx, i, NewSession(cfg.For(t)),
					func(ev *feed.Event) error {
						ev.Context = t.Context
						return locked(func() error { return emit(ev) })
					},
					func() error { return locked(flush) })
			}
			// A printer's error cancelled ctx: the feeds' errors that follow
			// are its consequence.
			if err != nil && ctx.Err() == nil {
				ended(Answer[struct{}]{Context: t.Context, Err: err})
			}
		})
	}
	wg.Wait()
	return printErr
}
