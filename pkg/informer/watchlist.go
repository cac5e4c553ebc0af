package informer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/pkg/wire"
)

// A list too large to hold whole in one answer (Config.UnpagedBudget) is read
// as a watch-list where the server serves one: a watch that starts with the
// type's objects, as ADDED events, and ends them with a bookmark annotated
// k8s.io/initial-events-end (KEP-3157, on by default from Kubernetes 1.34).
// The API server answers it from its watch cache, as it does an unpaged LIST,
// whether or not the type changed lately, and sends it object by object: the
// client decodes each while the next arrives and never holds the whole answer.
// Later pages of a paged LIST of a type nobody wrote since etcd's last
// compaction are read from etcd instead (see Factory.firstList).
//
// client-go's reflector can list this way itself (WatchListClient), but then
// the objects reach the store only once all have arrived, untransformed, and
// the factory's pipeline (transforms as objects arrive, progress, streamed
// output) does not see them; the factory reads the stream itself and hands the
// reflector the list it makes of it.

// DefaultWatchListStall is how long a watch-list may deliver nothing before
// its initial events end (Config.WatchListStall). A watch-list is quiet only
// while the API server waits for its cache to catch up with etcd, about a
// second at most; a server that never ends one (aggregated APIs that do not
// implement it stall client-go's reflector for good, kubernetes/kubernetes
// issue 140890) is given up on after this, and the type listed in pages.
const DefaultWatchListStall = 10 * time.Second

// errWatchListStalled is a watch-list's failure to end its initial events in
// time.
var errWatchListStalled = errors.New("watch-list stalled")

// watchListUnsupported reports whether err is a server's refusal of a
// watch-list (sendInitialEvents), rather than a failure of this one: an API
// server without the WatchList feature rejects the parameter as invalid, an
// aggregated API as a bad request, and a server that cannot watch at all says
// so.
func watchListUnsupported(err error) bool {
	return errors.Is(err, errWatchListStalled) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err) || apierrors.IsUnsupportedMediaType(err)
}

// watchListMode reports whether informers of mode m may list by watch-list:
// modes that keep objects, whose watch events are objects. A table's watch
// events are rows, listed in pages.
func watchListMode(m Mode) bool { return m != Rows && m != FullRows }

// watchList reads e's list by a watch-list with options o (label and field
// selectors, resourceVersion), prepared as its objects arrive, into template, a page of the
// same list, whose items it replaces. It fails
// with errWatchListStalled when nothing arrives for Config.WatchListStall
// before the initial events end.
func (f *Factory) watchList(ctx context.Context, e *entry, o metav1.ListOptions, watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), template runtime.Object) (list runtime.Object, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wo := metav1.ListOptions{
		LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector,
		// Unset, with NotOlderThan: the latest state, as a consistent LIST
		// reads it; a reflector's relist names the version it had.
		ResourceVersion: o.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks: true, SendInitialEvents: ptr.To(true),
	}
	if wo.ResourceVersion == "0" {
		wo.ResourceVersion = ""
	}
	w, err := watchFn(wire.WithRequest(ctx, &e.bodyBytes), wo)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	transform, sharer := f.transform(e.mode), f.sharer(e)
	stall := f.cfg.WatchListStall
	timer := time.NewTimer(stall)
	defer timer.Stop()
	var items []runtime.Object
	defer func() {
		if list == nil {
			// The objects delivered are listed again, in pages.
			e.received.Add(-int64(len(items)))
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, errWatchListStalled
		case ev, ok := <-w.ResultChan():
			if !ok {
				// A watch the server ended before the initial events did:
				// one more that cannot be told from a stall.
				return nil, errWatchListStalled
			}
			timer.Reset(stall)
			switch ev.Type {
			case watch.Added:
				if transform != nil {
					if _, err := transform(ev.Object); err != nil {
						return nil, err
					}
				}
				if sharer != nil {
					sharer.Share(ev.Object)
				}
				items = append(items, ev.Object)
				e.received.Add(1)
			case watch.Bookmark:
				m, err := meta.Accessor(ev.Object)
				if err != nil {
					return nil, err
				}
				if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
				return listOf(template, items, m.GetResourceVersion())
			case watch.Error:
				return nil, apierrors.FromObject(ev.Object)
			default:
				// Initial events are additions; anything else means the
				// server does not stream a list.
				return nil, fmt.Errorf("%w: a %s event among the initial events", errWatchListStalled, ev.Type)
			}
		}
	}
}

// listOf returns list, a page of a list, holding items at resourceVersion rv
// instead, whole.
func listOf(list runtime.Object, items []runtime.Object, rv string) (runtime.Object, error) {
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	lm.SetResourceVersion(rv)
	lm.SetContinue("")
	lm.SetRemainingItemCount(nil)
	return list, nil
}

// watchListRefused remembers that gr's server refused or stalled a watch-list,
// so that the factory's later lists of it go in pages at once.
func (f *Factory) watchListRefused(gr schema.GroupResource) {
	f.noWatchList.Store(gr, true)
}

// watchListAllowed reports whether e may be listed by a watch-list.
func (f *Factory) watchListAllowed(e *entry) bool {
	if f.cfg.WatchListStall < 0 || !watchListMode(e.mode) {
		return false
	}
	_, refused := f.noWatchList.Load(e.res.GVR.GroupResource())
	return !refused
}

// Environment variables that tune how informers list, for a server or a
// machine the defaults do not suit; Config fields win over them.
const (
	// UnpagedLimitEnv is the largest answer asked for unpaged, counted as
	// Config.UnpagedBudget counts it (a quantity of bytes: 64Mi; 0 never), in
	// place of DefaultUnpagedBudget.
	UnpagedLimitEnv = "KUBECTL_IDX_UNPAGED_LIMIT"
	// WatchListEnv, off, never lists by watch-list.
	WatchListEnv = "KUBECTL_IDX_WATCH_LIST"
	// ByNamespaceEnv says when a list of every namespace too large for one
	// answer is read namespace by namespace (nsslice.go): auto, where the
	// namespaces hold enough objects on average; always; or never.
	ByNamespaceEnv = "KUBECTL_IDX_LIST_BY_NAMESPACE"
)

// ListTuning is how the environment asks informers to list; zero values for
// what it does not set.
type ListTuning struct {
	// Budget is UnpagedLimitEnv's size in bytes, negative for 0.
	Budget int64
	// Stall is negative when WatchListEnv is off.
	Stall time.Duration
	// ByNamespace is ByNamespaceEnv's value, "" for auto.
	ByNamespace ByNamespace
}

// ByNamespace says when a list of every namespace is read namespace by
// namespace: "" (auto), ByNamespaceAlways or ByNamespaceNever.
type ByNamespace string

const (
	ByNamespaceAlways ByNamespace = "always"
	ByNamespaceNever  ByNamespace = "never"
)

// ListTuningFromEnv returns what UnpagedLimitEnv, WatchListEnv and
// ByNamespaceEnv ask for, or an error naming the variable whose value is not
// understood. Commands check it once as they start; NewFactoryWithClients
// reads what it returns.
func ListTuningFromEnv() (ListTuning, error) {
	var t ListTuning
	if v, ok := os.LookupEnv(UnpagedLimitEnv); ok && v != "" {
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			return ListTuning{}, fmt.Errorf("%s=%s: want a size in bytes, such as 64Mi, or 0 to always page", UnpagedLimitEnv, v)
		}
		if t.Budget = q.Value(); t.Budget == 0 {
			t.Budget = -1
		}
	}
	switch v := os.Getenv(WatchListEnv); v {
	case "", "auto":
	case "off":
		t.Stall = -1
	default:
		return ListTuning{}, fmt.Errorf("%s=%s: want auto or off", WatchListEnv, v)
	}
	switch v := ByNamespace(os.Getenv(ByNamespaceEnv)); v {
	case "", "auto":
	case ByNamespaceAlways, ByNamespaceNever:
		t.ByNamespace = v
	default:
		return ListTuning{}, fmt.Errorf("%s=%s: want auto, always or never", ByNamespaceEnv, v)
	}
	return t, nil
}
