package query

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// Listing is one cluster's answer in objects: the objects of `kubectl idx
// TYPE`, or their groups, the pods `selects` finds, an object's events, with
// what human output prints them with.
type Listing struct {
	// SingleItem is set when the arguments name exactly one object
	// (TYPE/NAME), which kubectl prints by itself rather than in a List.
	SingleItem bool
	// Members are the objects, one Members per type. A grouping has none,
	// nor has a listing streamed to GetQuery.Stream.
	Members []v1alpha1.Members
	// Groups is a grouping's document.
	Groups *v1alpha1.GroupList
	// Tables are the API server's tables of the members' kinds, for human
	// output; a kind without one prints NAME and AGE.
	Tables map[schema.GroupKind]*metav1.Table
	// Owner names an object's top-level controller (--show-owner); nil
	// without the column. Close stops its informers.
	Owner func(runtime.Object) string
	// Scope is the one namespace the answer is of, for kubectl's notice of an
	// empty answer ("No resources found in shop namespace."): "" when it
	// spans namespaces or its kinds have none.
	Scope string
	// Subject is the object a selection is about, for its graph.
	Subject *v1alpha1.RelationItem
	// AsOf says what an answer from the warm cache is current as of, per
	// type (Session.AsOf); nil for a direct run's.
	AsOf []v1alpha1.AsOf

	close func()
}

// Close releases what the listing holds until it is printed: the informers
// behind Owner.
func (l *Listing) Close() {
	if l != nil && l.close != nil {
		l.close()
	}
}

// CloseListings releases what the listings hold until they are printed.
func CloseListings(answers []Answer[*Listing]) {
	for _, a := range answers {
		a.Value.Close()
	}
}

// IgnoreNotFound drops the NotFound errors of the answers, the objects named
// that do not exist, as kubectl get --ignore-not-found does: an answer with
// none left has none.
func IgnoreNotFound(answers []Answer[*Listing]) {
	for i := range answers {
		answers[i].Err = utilerrors.FilterOut(answers[i].Err, apierrors.IsNotFound)
	}
}

// Found reports whether any answer holds an object, or a group.
func Found(answers []Answer[*Listing]) bool {
	for _, a := range answers {
		if l := a.Value; l != nil {
			if l.Groups != nil && len(l.Groups.Groups) > 0 {
				return true
			}
			for _, m := range l.Members {
				if len(m.Objects) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// GetQuery is the question of `kubectl idx TYPE[,TYPE] [NAME...]`.
type GetQuery struct {
	// Args are TYPE[,TYPE] [NAME...] or TYPE/NAME..., as kubectl get takes
	// them, mapped through the cluster's discovery.
	Args []string
	// GroupBy, when set, groups the objects instead of listing them.
	GroupBy *GroupBy
	// Tables reads the server's table of each kind, while the objects are
	// listed: human output prints its columns.
	Tables bool
	// Owners names each object's top-level controller (--show-owner).
	Owners bool
	// Mode is how much of each object of a request the answer reads; the
	// printer decides. Nil reads whole objects.
	Mode func(Request) informer.Mode
	// Stream, when set, is asked where the objects of a request go when the
	// question allows them to go as the server sends them (one whole type,
	// neither grouped nor with owners: see Streamable): a page at a time,
	// never held together. Quiet leaves out the sync progress line of a
	// stream, for a terminal that shows the objects as they arrive.
	Stream func(Request) func([]runtime.Object) error
	Quiet  bool
}

// Get answers `kubectl idx TYPE`: the types of q.Args as the cluster maps
// them, listed or grouped, with the server's tables read while they are
// listed. Names that do not exist are returned as kubectl's NotFound errors,
// aggregated, beside the answer, so the objects found still print. The
// caller closes the listing once it is printed.
func (s *Session) Get(ctx context.Context, q GetQuery) (*Listing, error) {
	reqs, single, err := ParseResourceArgs(s.cfg.Mapper, s.cfg.Categories, q.Args)
	if err != nil {
		return nil, err
	}
	if q.GroupBy != nil {
		if err := q.GroupBy.Check(reqs); err != nil {
			return nil, err
		}
	}
	l := &Listing{SingleItem: single}
	if anyNamespaced(reqs) {
		l.Scope = s.cfg.Namespace
	}
	asked := make([]Request, len(reqs))
	for i, r := range reqs {
		asked[i] = r
		if q.Mode != nil {
			asked[i].Mode = q.Mode(r)
		}
		asked[i].Mode = s.readMode(r.Resource.GVK.GroupKind(), asked[i].Mode)
	}
	if err := s.compileWhere(requestKinds(asked)); err != nil {
		return nil, err
	}
	if q.Stream != nil && q.GroupBy == nil && !q.Owners && len(asked) == 1 && Streamable(asked[0]) {
		if q.Quiet {
			// The session is this question's alone.
			s.cfg.Progress = nil
		}
		if err := s.Stream(ctx, asked[0], q.Stream(asked[0])); err != nil {
			return nil, err
		}
		l.AsOf = s.AsOf()
		return l, nil
	}
	var fetch *TableFetch
	if q.Tables {
		fetch = s.FetchTables(ctx, asked)
	}
	var missing []error
	if q.GroupBy != nil {
		if l.Groups, missing, err = s.Group(ctx, asked, *q.GroupBy); err != nil {
			return nil, err
		}
		if q.Tables {
			var members []v1alpha1.Members
			for _, g := range l.Groups.Groups {
				members = append(members, g.Members...)
			}
			l.Tables = fetch.Wait(ctx, members)
			// A table that could not be read is said in the document too.
			l.Groups.Warnings = s.Warnings()
		}
		l.AsOf = l.Groups.AsOf
		return l, utilerrors.NewAggregate(missing)
	}
	if l.Members, missing, err = s.List(ctx, asked); err != nil {
		return nil, err
	}
	if q.Tables {
		l.Tables = fetch.Wait(ctx, l.Members)
	}
	if q.Owners {
		owners, stop := s.TopOwners(ctx)
		l.Owner, l.close = owners.Of, stop
	}
	l.AsOf = s.AsOf()
	return l, utilerrors.NewAggregate(missing)
}

// Check refuses a grouping the kinds of reqs cannot be grouped by: only pods
// run on a node.
func (g GroupBy) Check(reqs []Request) error {
	if g.Mode != GroupByNode {
		return nil
	}
	for _, r := range reqs {
		if !index.HasNode(r.Resource.GVK.GroupKind()) {
			return fmt.Errorf("--by-node groups objects by the node they run on; %s have no node (use it with pods)", r.Resource.Name())
		}
	}
	return nil
}

// Object resolves an object named on the command line, TYPE and NAME,
// through the cluster's discovery.
func (s *Session) Object(typ, name string) (ObjectRef, error) {
	m, err := MappingFor(s.cfg.Mapper, typ)
	if err != nil {
		return ObjectRef{}, err
	}
	return ObjectRef{Resource: informer.FromMapping(m), Name: name}, nil
}

// Kinds resolves types named on the command line (pods, replicasets.apps)
// through the cluster's discovery, each kind once.
func (s *Session) Kinds(types []string) ([]schema.GroupKind, error) {
	var kinds []schema.GroupKind
	for _, t := range types {
		m, err := MappingFor(s.cfg.Mapper, t)
		if err != nil {
			return nil, err
		}
		if gk := m.GroupVersionKind.GroupKind(); !slices.Contains(kinds, gk) {
			kinds = append(kinds, gk)
		}
	}
	return kinds, nil
}

// Selection answers `kubectl idx selects` (or, inverse, `selected-by`) as a
// Listing, with the server's tables of its kinds when tables is set. Its
// scope is the namespace the object is looked for in.
func (s *Session) Selection(ctx context.Context, obj ObjectRef, inverse, tables bool) (*Listing, error) {
	kinds := []schema.GroupVersionKind{podGVK}
	if inverse {
		kinds = s.mappedKinds(index.SelectorKinds())
	}
	m, err := s.whereMatcher(ctx, kinds, false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	var members []v1alpha1.Members
	if inverse {
		members, err = s.SelectedBy(ctx, obj)
	} else {
		members, err = s.Selects(ctx, obj)
	}
	if err != nil {
		return nil, err
	}
	if err := m.ready(ctx); err != nil {
		return nil, err
	}
	members = filterMembers(m, members)
	l := &Listing{Members: members, Scope: s.rootNamespace()}
	l.Subject = &v1alpha1.RelationItem{APIVersion: obj.Resource.GVK.GroupVersion().String(), Kind: obj.Resource.GVK.Kind, Name: obj.Name}
	if obj.Resource.Namespaced {
		l.Subject.Namespace = l.Scope
	}
	if tables {
		l.Tables = s.Tables(ctx, members, nil)
	}
	l.AsOf = s.AsOf()
	return l, nil
}

// EventList answers `kubectl idx events TYPE/NAME` (Events) as a Listing of
// the core Event kind, oldest first. Its scope is the object's namespace
// when the object is namespaced and one namespace is asked.
func (s *Session) EventList(ctx context.Context, obj ObjectRef, opts EventsOptions) (*Listing, error) {
	m, err := s.whereMatcher(ctx, []schema.GroupVersionKind{EventsGVK}, false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	evs, err := s.Events(ctx, obj, opts)
	if err != nil {
		return nil, err
	}
	objs := make([]runtime.Object, 0, len(evs))
	for _, e := range evs {
		if m.match(EventsGVK, e) {
			objs = append(objs, e)
		}
	}
	l := &Listing{Members: []v1alpha1.Members{{GVK: EventsGVK, Namespaced: true, Objects: objs}}, AsOf: s.AsOf()}
	if obj.Resource.Namespaced {
		l.Scope = s.cfg.Namespace
	}
	return l, nil
}
