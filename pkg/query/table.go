package query

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/wire"
)

// serverTable reads res's table in namespace with the session's selectors,
// narrowed to the name when names holds one, each row with the object as
// include says.
func (s *Session) serverTable(ctx context.Context, res informer.Resource, namespace string, names []string, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	client, err := s.tableClient(ctx, res.GVR.GroupVersion())
	if err != nil {
		return nil, err
	}
	fieldSelector := s.cfg.FieldSelector
	if len(names) == 1 {
		fieldSelector = NameSelector(names[0], fieldSelector)
	}
	opts := metav1.ListOptions{LabelSelector: s.cfg.LabelSelector, FieldSelector: fieldSelector}
	data, err := informer.TableRequest(client, res, namespace, opts, include).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the server's table of %s: %w", res.Name(), err)
	}
	table, err := wire.DecodeTable(data)
	if err != nil {
		return nil, fmt.Errorf("reading the server's table of %s: %w", res.Name(), err)
	}
	return table, nil
}

// tableClient returns a REST client for gv's tables: the test hook, else one
// from the REST config (JSON, one per group version), else, in tests that
// give the session a factory hook instead, the clients of its first factory.
func (s *Session) tableClient(ctx context.Context, gv schema.GroupVersion) (rest.Interface, error) {
	if s.cfg.TableClient != nil {
		return s.cfg.TableClient(gv)
	}
	if s.cfg.RESTConfig != nil {
		s.tableOnce.Do(func() { s.tableClients = informer.CachedClients(s.cfg.RESTConfig, runtime.ContentTypeJSON) })
		return s.tableClients(gv)
	}
	if s.cfg.NewFactory == nil {
		return nil, fmt.Errorf("no REST config to read %s tables with", gv)
	}
	select {
	case <-s.clientsReady:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.tableClients(gv)
}

// resourceFor maps a kind to its resource: one of known's, else through the
// session's mapper.
func (s *Session) resourceFor(gvk schema.GroupVersionKind, known []Request) (informer.Resource, error) {
	for _, r := range known {
		if r.Resource.GVK == gvk {
			return r.Resource, nil
		}
	}
	if s.cfg.Mapper == nil {
		return informer.Resource{}, fmt.Errorf("no REST mapper to find the resource of %s", gvk.Kind)
	}
	m, err := s.cfg.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return informer.Resource{}, err
	}
	return informer.FromMapping(m), nil
}

// Tables reads the API server's table of each kind among members that has
// objects, in the one namespace the kind's objects are in (or the session's
// scope), with the session's selectors, narrowed to the name when there is
// one object (see readTable). A kind whose table cannot be read is left out
// with a warning, and is printed with NAME and AGE. Kinds are mapped to
// resources through known (the question's requests), else through the
// session's REST mapper.
func (s *Session) Tables(ctx context.Context, members []v1alpha1.Members, known []Request) map[schema.GroupKind]*metav1.Table {
	return s.tables(ctx, members, known, nil)
}

// TableFetch is the server's tables of a question's kinds, read while the
// answer is listed (FetchTables), so that a table costs no wall time beyond
// the slower of the two.
type TableFetch struct {
	s     *Session
	reqs  []Request
	done  chan struct{}
	mu    sync.Mutex
	reads map[schema.GroupKind]*metav1.Table
}

// FetchTables starts reading the server's table of each kind among reqs, one
// request per kind in the session's scope with its selectors (narrowed to the
// name when the request names one object), the rows without their objects.
// Wait matches them to the answer.
func (s *Session) FetchTables(ctx context.Context, reqs []Request) *TableFetch {
	f := &TableFetch{s: s, reqs: reqs, done: make(chan struct{}), reads: map[schema.GroupKind]*metav1.Table{}}
	seen := map[schema.GroupKind]bool{}
	var todo []Request
	for _, r := range reqs {
		if gk := r.Resource.GVK.GroupKind(); !seen[gk] {
			seen[gk] = true
			todo = append(todo, r)
		}
	}
	go func() {
		defer close(f.done)
		var wg sync.WaitGroup
		for _, r := range todo {
			wg.Go(func() {
				ns := s.cfg.Namespace
				if !r.Resource.Namespaced {
					ns = metav1.NamespaceAll
				}
				// A table that cannot be read now is read again, and warned
				// about, once the answer is known.
				if t, err := s.serverTable(ctx, r.Resource, ns, r.Names, metav1.IncludeNone); err == nil {
					f.mu.Lock()
					f.reads[r.Resource.GVK.GroupKind()] = t
					f.mu.Unlock()
				}
			})
		}
		wg.Wait()
	}()
	return f
}

// Wait returns the tables of the kinds among members that have objects: the
// tables read while the answer was listed, matched to its objects, and read
// again where they lack some (see readTable).
func (f *TableFetch) Wait(ctx context.Context, members []v1alpha1.Members) map[schema.GroupKind]*metav1.Table {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.tables(ctx, members, f.reqs, f.reads)
}

// tables reads the table of each kind among members that has objects,
// starting from the table already read, if any.
func (s *Session) tables(ctx context.Context, members []v1alpha1.Members, known []Request, read map[schema.GroupKind]*metav1.Table) map[schema.GroupKind]*metav1.Table {
	var kinds []schema.GroupKind
	objects := map[schema.GroupKind][]runtime.Object{}
	versions := map[schema.GroupKind]schema.GroupVersionKind{}
	for _, m := range members {
		if len(m.Objects) == 0 {
			continue
		}
		gk := m.GVK.GroupKind()
		if _, ok := objects[gk]; !ok {
			kinds = append(kinds, gk)
			versions[gk] = m.GVK
		}
		objects[gk] = append(objects[gk], m.Objects...)
	}
	tables := make(map[schema.GroupKind]*metav1.Table, len(kinds))
	for _, gk := range kinds {
		res, err := s.resourceFor(versions[gk], known)
		if err != nil {
			s.warn("%s; showing NAME and AGE only", s.warningText(err))
			continue
		}
		t, err := s.readTable(ctx, res, objects[gk], read[gk])
		if err != nil {
			s.warn("%s; showing NAME and AGE only", s.warningText(err))
			continue
		}
		tables[gk] = t
	}
	return tables
}

// perNamespaceReads bounds the tables readTable reads again, one per namespace
// or one per name; beyond it, one table with each row's metadata costs less.
const perNamespaceReads = 32

// readTable returns the server's table of objs, all of resource res, with a
// row per object it has, each carrying the object's UID, namespace and name
// for TableFromServer to match.
//
// Rows are read without their objects (includeObject=None): on 20,000 pods
// the table with each row's metadata is 143 MB of JSON and takes 2.9 s, the
// bare table 3 MB and 0.12 s. A bare row is matched to an object by its name
// (the column of format "name"), which identifies it within a namespace, or
// across the whole table when no other object of the answer has the same
// name: by position while the table's rows and the objects go in the same
// order (matchInOrder), then through a map of the table's names. Objects
// whose name is not unique, or that have no row (created after the table was
// read), are read again: the rows of each such name across the scope, with
// their metadata, matched by UID (a StatefulSet's db-0 in twenty namespaces is
// one small read of twenty rows), or each namespace's own table when that
// takes fewer reads. When more than perNamespaceReads tables would
// be read, or the kind has no name column, one table with each row's metadata
// is read and matched by UID instead. The rows returned follow the objects'
// order, so that the printer takes them as they come (TableFromServer); read,
// when not nil, is the bare table of the session's scope already read.
func (s *Session) readTable(ctx context.Context, res informer.Resource, objs []runtime.Object, read *metav1.Table) (*metav1.Table, error) {
	metas := make([]metav1.Object, len(objs))
	scope := ""
	names := map[string]int{}
	for i, obj := range objs {
		a, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		metas[i] = a
		names[a.GetName()]++
		if i == 0 {
			scope = a.GetNamespace()
		} else if scope != a.GetNamespace() {
			scope = s.cfg.Namespace
		}
	}
	if !res.Namespaced {
		scope = metav1.NamespaceAll
	}
	var narrow []string
	if len(names) == 1 {
		narrow = []string{metas[0].GetName()}
	}
	if read == nil {
		var err error
		if read, err = s.serverTable(ctx, res, scope, narrow, metav1.IncludeNone); err != nil {
			return nil, err
		}
	}
	nameCol := slices.IndexFunc(read.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Format == "name" })
	if nameCol < 0 {
		// Rows with each object's metadata (includeObject=Metadata), matched
		// by UID.
		return s.tableByUID(ctx, res, scope, narrow, objs, metas)
	}
	// One namespace's names are unique; so are the names of a table of all
	// namespaces that occur once in it and once in the answer.
	oneNamespace := scope != metav1.NamespaceAll || !res.Namespaced
	// Each object's row, in the objects' order, so that the printer finds
	// each row beside its object (TableFromServer) whichever read found it.
	rows := make([]*metav1.TableRow, len(objs))
	aligned := matchInOrder(read, nameCol, metas, func(name string) bool { return oneNamespace || names[name] == 1 }, rows)
	againByNS := map[string][]int{}
	againByName := map[string][]int{}
	var byName map[string]*metav1.TableRow
	for i, m := range metas {
		if rows[i] != nil {
			continue
		}
		// Past the objects matched in order, a row is found by its name,
		// where the name identifies it.
		if name := m.GetName(); i >= aligned && (oneNamespace || names[name] == 1) {
			if byName == nil {
				byName = rowsByName(read, nameCol)
			}
			if row := byName[name]; row != nil {
				rows[i] = row
				continue
			}
		}
		againByNS[m.GetNamespace()] = append(againByNS[m.GetNamespace()], i)
		againByName[m.GetName()] = append(againByName[m.GetName()], i)
	}
	if len(againByNS) > 0 {
		if min(len(againByNS), len(againByName)) > perNamespaceReads {
			return s.tableByUID(ctx, res, scope, narrow, objs, metas)
		}
		if err := s.readRowsAgain(ctx, res, scope, nameCol, metas, rows, againByNS, againByName); err != nil {
			return nil, err
		}
	}
	out := &metav1.Table{ColumnDefinitions: read.ColumnDefinitions, Rows: make([]metav1.TableRow, 0, len(objs))}
	for i, row := range rows {
		if row != nil {
			out.Rows = append(out.Rows, rowFor(row, objs[i]))
		}
	}
	return out, nil
}

// tableByUID reads the server's table of scope with each row's metadata and
// returns the rows of objs (metas their metadata), in their order, each
// carrying its object, matched by UID; an object with no row has none.
func (s *Session) tableByUID(ctx context.Context, res informer.Resource, scope string, narrow []string, objs []runtime.Object, metas []metav1.Object) (*metav1.Table, error) {
	t, err := s.serverTable(ctx, res, scope, narrow, metav1.IncludeMetadata)
	if err != nil {
		return nil, err
	}
	// By UID; by namespace and name for an object without one, which only
	// tests make.
	key := func(uid types.UID, namespace, name string) string {
		if uid != "" {
			return string(uid)
		}
		return namespace + "/" + name
	}
	byKey := make(map[string]*metav1.TableRow, len(t.Rows))
	for i := range t.Rows {
		rm, err := informer.RowMeta(&t.Rows[i])
		if err != nil {
			return nil, fmt.Errorf("reading row %d of the server's table of %s: %w", i, res.Name(), err)
		}
		byKey[key(rm.UID, rm.Namespace, rm.Name)] = &t.Rows[i]
	}
	out := &metav1.Table{ColumnDefinitions: t.ColumnDefinitions, Rows: make([]metav1.TableRow, 0, len(objs))}
	for i, m := range metas {
		if row := byKey[key(m.GetUID(), m.GetNamespace(), m.GetName())]; row != nil {
			out.Rows = append(out.Rows, rowFor(row, objs[i]))
		}
	}
	return out, nil
}

// matchInOrder matches a table's rows to metas, which are sorted by
// namespace and name, by position, and returns how many objects it went
// through: the API server lists objects in the order of their keys,
// namespace/name, which is the objects' order except where a namespace's name
// is another's followed by a character that sorts before '/' ("a-b" lists
// before "a"). Once the table has exactly as many rows as there are objects,
// the row at each position is the object's while their names agree; it stops
// at the first that does not, which is where a table and an answer that
// differ (an object created or deleted between the two reads) part. A row is kept only where unique(name) says a name alone
// identifies the object, as readTable matches rows by name: a name that
// occurs in two namespaces of the answer is left for readTable to read again
// by UID. 100,000 pods: one pass instead of a map of 100,000 names.
func matchInOrder(read *metav1.Table, nameCol int, metas []metav1.Object, unique func(string) bool, rows []*metav1.TableRow) int {
	if len(read.Rows) != len(metas) {
		return 0
	}
	for i, m := range metas {
		row := &read.Rows[i]
		if nameCol >= len(row.Cells) {
			return i
		}
		if name, ok := row.Cells[nameCol].(string); !ok || name != m.GetName() {
			return i
		}
		if unique(m.GetName()) {
			rows[i] = row
		}
	}
	return len(metas)
}

// readRowsAgain finds the rows of the objects at againByNS (by namespace) and
// againByName (by name) the table read first could not match, and puts each
// in rows at its object's index: the rows of each name across the scope,
// with their metadata, matched by UID (a StatefulSet's db-0 in twenty
// namespaces is one small read of twenty rows), or each namespace's own
// table when that takes fewer reads.
func (s *Session) readRowsAgain(ctx context.Context, res informer.Resource, scope string, nameCol int, metas []metav1.Object, rows []*metav1.TableRow, againByNS, againByName map[string][]int) error {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	if len(againByName) < len(againByNS) {
		for name, at := range againByName {
			g.Go(func() error {
				t, err := s.serverTable(gctx, res, scope, []string{name}, metav1.IncludeMetadata)
				if err != nil {
					return err
				}
				byUID := make(map[types.UID]*metav1.TableRow, len(t.Rows))
				for i := range t.Rows {
					rm, err := informer.RowMeta(&t.Rows[i])
					if err != nil {
						return fmt.Errorf("reading the server's table of %s: %w", res.Name(), err)
					}
					byUID[rm.UID] = &t.Rows[i]
				}
				mu.Lock()
				defer mu.Unlock()
				for _, i := range at {
					rows[i] = byUID[metas[i].GetUID()]
				}
				return nil
			})
		}
	} else {
		for ns, at := range againByNS {
			g.Go(func() error {
				t, err := s.serverTable(gctx, res, ns, nil, metav1.IncludeNone)
				if err != nil {
					return err
				}
				byName := rowsByName(t, nameCol)
				mu.Lock()
				defer mu.Unlock()
				for _, i := range at {
					rows[i] = byName[metas[i].GetName()]
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// rowsByName indexes a table's rows by their name cell: the row of each name
// that has one, nil for a name that has several.
func rowsByName(t *metav1.Table, nameCol int) map[string]*metav1.TableRow {
	byName := make(map[string]*metav1.TableRow, len(t.Rows))
	for i := range t.Rows {
		row := &t.Rows[i]
		if nameCol < len(row.Cells) {
			if name, ok := row.Cells[nameCol].(string); ok {
				if _, twice := byName[name]; twice {
					row = nil
				}
				byName[name] = row
			}
		}
	}
	return byName
}

// rowFor is row's cells for obj, which it describes, carried in the row:
// the printer matches rows to objects by it (TableFromServer).
func rowFor(row *metav1.TableRow, obj runtime.Object) metav1.TableRow {
	return metav1.TableRow{Cells: row.Cells, Conditions: row.Conditions, Object: runtime.RawExtension{Object: obj}}
}
