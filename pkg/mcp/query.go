package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Common are the arguments every tool that reads objects takes.
type Common struct {
	// Context narrows the answer to one of the contexts the server answers.
	Context string `json:"context,omitempty" jsonschema:"one kubeconfig context of those the server answers (see the contexts tool); empty asks every one"`
	// MaxStalenessSeconds accepts informers shown current at most that long
	// before the call, without asking the server again.
	MaxStalenessSeconds float64 `json:"maxStalenessSeconds,omitempty" jsonschema:"accept an answer up to this many seconds older than the call, for speed; 0 (the default) holds every write acknowledged before the call"`
}

// QueryArgs are the query tool's arguments.
type QueryArgs struct {
	Resources     string   `json:"resources" jsonschema:"resource types as kubectl names them, comma-separated: pods, deploy,svc, deployments.apps, crontabs.stable.example.com; TYPE/NAME names objects"`
	Namespace     string   `json:"namespace,omitempty" jsonschema:"the namespace; default: the context's"`
	AllNamespaces bool     `json:"allNamespaces,omitempty" jsonschema:"every namespace"`
	LabelSelector string   `json:"labelSelector,omitempty" jsonschema:"label selector, as kubectl -l: app=web,tier in (a,b)"`
	FieldSelector string   `json:"fieldSelector,omitempty" jsonschema:"field selector, as kubectl --field-selector: spec.nodeName=node-1"`
	Where         []string `json:"where,omitempty" jsonschema:"CEL expressions that must all hold, as kubectl idx --where: variables object, owner (top-level controller, null when none), node (a pod's Node), now; e.g. object.status.phase != \"Running\""`
	GroupBy       string   `json:"groupBy,omitempty" jsonschema:"group the objects: owner (top-level controller), node, namespace, or label:KEY"`
	Fields        []string `json:"fields,omitempty" jsonschema:"JSONPath projections added to each object, as custom-columns reads them: {.spec.nodeName}, .status.podIP"`
	Limit         int      `json:"limit,omitempty" jsonschema:"most objects in this answer (default 100, at most 5000)"`
	Cursor        string   `json:"cursor,omitempty" jsonschema:"nextCursor of the previous answer to the same arguments"`
	Common
}

// question is what names the question of the arguments: all but the
// cursor, the limit and the staleness bound, which page the answer or bound
// its wait.
func (in QueryArgs) question() QueryArgs {
	in.Cursor, in.Limit, in.MaxStalenessSeconds = "", 0, 0
	return in
}

func (s *Server) addTools() {
	addTool(s, &sdk.Tool{
		Name:        "query",
		Title:       "Query objects",
		Description: "Objects of one or more types, narrowed by namespace, selectors and CEL (where), listed or grouped by owner, node, namespace or label:KEY. Each object: kind, namespace, name, ready, status, top-level owner, node, and the JSONPath fields asked for. Paged: count, total, truncated, nextCursor.",
	}, s.query, func(a *v1alpha1.QueryAnswer) string {
		if a.GroupBy != "" {
			return fmt.Sprintf("groups: %d in all; %s", a.GroupsTotal, pageText("objects", a.Page))
		}
		return pageText("objects", a.Page)
	})
	addTool(s, &sdk.Tool{
		Name:        "relations",
		Title:       "Related objects",
		Description: "The objects related to one object: tree (what it owns, through ownerReferences, across every type), owners (its owner chain), uses (what a pod or workload uses, or what uses a ConfigMap, Secret, PVC or ServiceAccount), selects (the pods a selector matches), selectedBy (the Services, PDBs, NetworkPolicies and workloads selecting it), orphans (objects whose owners are gone; no object). Each with the relation's path from the object.",
	}, s.relations, func(a *v1alpha1.RelationsAnswer) string { return pageText(a.Relation, a.Page) })
	addTool(s, &sdk.Tool{
		Name:        "events",
		Title:       "Events",
		Description: "Events of an object and of everything it owns (object), or of a namespace, oldest first, deduplicated as kubectl idx events lists them; since a duration, of a type (Normal, Warning).",
	}, s.events, counted[v1alpha1.EventsAnswer]("events"))
	addTool(s, &sdk.Tool{
		Name:        "changes",
		Title:       "Changes",
		Description: "A change feed of resource types (kubectl idx watch): without cursor, the current state as ADDED and a cursor; with the cursor, every change since (ADDED, MODIFIED, DELETED, with the feed's gap and leftScope marks), waiting up to timeoutSeconds for one, and the next cursor. Narrowed by namespace, owner (TYPE/NAME: it and what it owns) and where.",
	}, s.changes, counted[v1alpha1.ChangesAnswer]("changes"))
	addTool(s, &sdk.Tool{
		Name:        "why",
		Title:       "Why it is not serving",
		Description: "Why an object (KIND/NAME), or every top-level owner and Service of a namespace, is not serving: the causes found walking down what it owns, worst first, each with its reason (the Kubernetes one: FailedScheduling, FailedCreate, ImagePullBackOff, CrashLoopBackOff, ...; else MissingReference, RolloutStuck, NoReadyPods, ...), the object to fix, a sentence and the evidence read; and the verdict: Healthy, Unhealthy, or Unknown when something is wrong that no evidence names.",
	}, s.why, func(a *v1alpha1.WhyAnswer) string {
		// The verdict is ours, not object text: it may be said.
		return "why: " + a.Status + "; " + pageText("causes", a.Page)
	})
	addTool(s, &sdk.Tool{
		Name:        "contexts",
		Title:       "Contexts",
		Description: "The kubeconfig contexts this server answers: server, default namespace, whether it is reachable, its version.",
	}, s.contexts, counted[v1alpha1.ContextsAnswer]("contexts"))
}

// addTool adds a read-only tool to s: answer answers a call, and text words
// the short text of its result from the answer: what the answer holds,
// never object text. The result is worded by result.
func addTool[In, A any](s *Server, tool *sdk.Tool, answer func(context.Context, In) (*A, error), text func(*A) string) {
	tool.Annotations = &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptrBool(false)}
	sdk.AddTool(s.sdk, tool, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, *A, error) {
		a, err := answer(ctx, in)
		if err != nil {
			return result(s, tool.Name, a, "", err)
		}
		return result(s, tool.Name, a, text(a), nil)
	})
}

// counted words the text of an answer that says no more than how many of
// what it holds (pageText).
func counted[A any, P answerPage[A]](what string) func(P) string {
	return func(a P) string { return pageText(what, *a.GetPage()) }
}

func ptrBool(b bool) *bool { return &b }

// groupings are the groupBy values and the engine's modes.
var groupings = map[string]v1alpha1.GroupMode{"owner": query.GroupByOwner, "node": query.GroupByNode, "namespace": query.GroupByNamespace}

// parseGroupBy reads groupBy: owner, node, namespace or label:KEY.
func parseGroupBy(v string) (*query.GroupBy, error) {
	if v == "" {
		return nil, nil
	}
	if mode, ok := groupings[v]; ok {
		return &query.GroupBy{Mode: mode}, nil
	}
	if key, ok := strings.CutPrefix(v, "label:"); ok {
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, badArgument("groupBy: invalid label key %q: %s", key, strings.Join(errs, "; "))
		}
		return &query.GroupBy{Mode: query.GroupByLabel, LabelKey: key}, nil
	}
	return nil, badArgument("groupBy must be owner, node, namespace or label:KEY, got %q", v)
}

// resourceArgs splits resources as kubectl get's arguments: TYPE[,TYPE] or
// TYPE/NAME ... (space- or comma-separated names of objects).
func resourceArgs(resources string) ([]string, error) {
	resources = strings.TrimSpace(resources)
	if resources == "" {
		return nil, badArgument("resources is required: the types to read, e.g. pods or deploy,svc")
	}
	if strings.Contains(resources, "/") {
		return strings.FieldsFunc(resources, func(r rune) bool { return r == ',' || r == ' ' }), nil
	}
	if strings.ContainsAny(resources, " \t") {
		return nil, badArgument("resources are comma-separated types, got %q", resources)
	}
	return []string{resources}, nil
}

// readsSecrets reports whether resources may name Secrets.
func readsSecrets(resources string) bool {
	for _, r := range strings.FieldsFunc(resources, func(r rune) bool { return r == ',' || r == ' ' || r == '/' }) {
		switch strings.ToLower(r) {
		case "secret", "secrets", "all":
			return true
		}
	}
	return false
}

// queryItem is one item of a query answer, in order: an object, or a group
// with no members.
type queryItem struct {
	key   string
	obj   kindedObject
	group *groupEntry
}

// groupEntry is one group of a grouped answer.
type groupEntry struct {
	view    v1alpha1.GroupView
	sortKey string
	members []kindedObject
}

func (s *Server) query(ctx context.Context, in QueryArgs) (*v1alpha1.QueryAnswer, error) {
	args, err := resourceArgs(in.Resources)
	if err != nil {
		return nil, err
	}
	by, err := parseGroupBy(in.GroupBy)
	if err != nil {
		return nil, err
	}
	fields, err := parseFields(in.Fields)
	if err != nil {
		return nil, err
	}
	if err := guardWhere(in.Where, readsSecrets(in.Resources)); err != nil {
		return nil, err
	}
	c, p, err := s.open("query", in.Limit, in.Cursor, in.question(), scope{
		Context: in.Context, Namespace: in.Namespace, AllNamespaces: in.AllNamespaces, MaxStaleness: seconds(in.MaxStalenessSeconds),
		Where: in.Where, LabelSelector: in.LabelSelector, FieldSelector: in.FieldSelector,
	})
	if err != nil {
		return nil, err
	}
	defer c.done()
	q := query.GetQuery{Args: args, GroupBy: by, Mode: func(r query.Request) informer.Mode {
		if r.Resource.GVK.GroupKind() == (schema.GroupKind{Kind: "Secret"}) && len(fields) == 0 {
			// Nothing of a Secret but its metadata is ever shown.
			return informer.MetadataOnly
		}
		return informer.Full
	}}
	type owned struct {
		listing *query.Listing
		// owners names top-level owners; stop stops its informers, once the
		// page is projected.
		owners *query.TopOwners
		stop   func()
	}
	answers := ask(ctx, c, func(ctx context.Context, sess *query.Session) (*owned, error) {
		l, err := sess.Get(ctx, q)
		if l == nil {
			return nil, err
		}
		defer l.Close()
		o := &owned{listing: l, stop: func() {}}
		if by == nil || by.Mode != query.GroupByOwner {
			o.owners, o.stop = sess.TopOwners(ctx)
		}
		return o, err
	})
	ownersOf := map[string]*query.TopOwners{}
	for _, a := range answers {
		if a.Value != nil {
			defer a.Value.stop()
			ownersOf[a.Context] = a.Value.owners
		}
	}
	warnings, err := outcome(c, answers)
	if err != nil {
		return nil, err
	}
	v := &viewer{maxString: s.cfg.MaxString, status: s.cfg.Query.ObjectStatus, fields: fields, now: c.start}
	answer := v1alpha1.NewQueryAnswer()
	answer.AsOf = asOf(answers, func(o *owned) []v1alpha1.AsOf { return o.listing.AsOf })
	answer.Warnings = append(answer.Warnings, warnings...)

	var items []queryItem
	var groups []*groupEntry
	if by == nil {
		for ci, a := range answers {
			if a.Value == nil {
				continue
			}
			for _, ko := range objectsOf(a.Value.listing.Members) {
				ko.context = a.Context
				items = append(items, queryItem{key: objectKey(ci, ko), obj: ko})
			}
		}
	} else {
		answer.GroupBy = in.GroupBy
		groups, err = groupEntries(c, answers, func(a *owned) *query.Listing { return a.listing })
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			if len(g.members) == 0 {
				items = append(items, queryItem{key: g.sortKey, group: g})
			}
			for _, m := range g.members {
				items = append(items, queryItem{key: g.sortKey + "\x01" + memberKey(m), obj: m, group: g})
			}
		}
		answer.GroupsTotal = len(groups)
	}
	// views are the objects of the page's first items, projected once.
	var views []v1alpha1.ObjectView
	fill := func(out *v1alpha1.QueryAnswer, page []queryItem) {
		for i := len(views); i < len(page); i++ {
			it, view := page[i], v1alpha1.ObjectView{}
			if it.group == nil || it.obj.obj != nil {
				owner := ""
				if top := ownersOf[it.obj.context]; top != nil {
					owner = top.Of(it.obj.obj)
				}
				if it.group != nil && by.Mode == query.GroupByOwner {
					owner = it.group.view.Name
				}
				view = v.view(it.obj.context, it.obj.members.GVK, it.obj.obj, owner)
			}
			views = append(views, view)
		}
		out.Objects, out.Groups = nil, nil
		if by == nil {
			out.Objects = views[:len(page)]
		} else {
			out.Groups = groupViews(page, views[:len(page)], out.Truncated)
		}
	}
	start, end, next := p.byKey(len(items), func(i int) string { return items[i].key })
	out := fitPage(s.cfg.MaxBytes, answer, start, len(items), items[start:end], fill, next)
	if out.Count == 1 && jsonSize(out) > s.cfg.MaxBytes && len(fields) > 0 {
		// One object's projections alone exceed the cap: they are dropped,
		// and said so.
		views[0].Fields = nil
		fill(out, items[start:start+1])
		out.Warnings = append(out.Warnings, fmt.Sprintf("the fields of %s/%s exceed the byte cap of %d and were left out", views[0].Kind, views[0].Name, s.cfg.MaxBytes))
	}
	if out.Objects == nil && by == nil {
		out.Objects = []v1alpha1.ObjectView{}
	}
	if out.Groups == nil && by != nil {
		out.Groups = []v1alpha1.GroupView{}
	}
	return out, nil
}

// objectKey orders the objects of a listing: context, type, namespace,
// name, as kubectl idx lists them.
func objectKey(ci int, ko kindedObject) string {
	ns, name := nsName(ko.obj)
	return fmt.Sprintf("%04d\x00%04d\x00%s\x00%s", ci, ko.typeIndex, ns, name)
}

// memberKey orders a group's members: type, context, namespace, name.
func memberKey(ko kindedObject) string {
	ns, name := nsName(ko.obj)
	return fmt.Sprintf("%04d\x00%s\x00%s\x00%s", ko.typeIndex, ko.context, ns, name)
}

func nsName(obj runtime.Object) (string, string) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return "", ""
	}
	return a.GetNamespace(), a.GetName()
}

// groupEntries turns the answers' GroupLists (merged over several contexts
// as kubectl idx merges them) into groups in a stable order: named groups
// by name, then namespace and context, the <none> group last.
func groupEntries[T any](c *call, answers []query.Answer[T], listing func(T) *query.Listing) ([]*groupEntry, error) {
	listings := make([]query.Answer[*query.Listing], len(answers))
	for i, a := range answers {
		listings[i].Context = a.Context
		var zero T
		if !isNil(a.Value, zero) {
			listings[i].Value = listing(a.Value)
		}
	}
	var doc *v1alpha1.GroupList
	if c.several() {
		doc = query.MergeGroupLists(listings)
	} else if l := listings[0].Value; l != nil && l.Groups != nil {
		doc = l.Groups
	}
	if doc == nil {
		return nil, nil
	}
	var out []*groupEntry
	for _, g := range doc.Groups {
		// The key and summary as the GroupList prints them; not the group,
		// whose JSON would encode every member whole.
		key, err := jsonMap(g.Key)
		if err != nil {
			return nil, err
		}
		summary, err := jsonMap(g.Summary)
		if err != nil {
			return nil, err
		}
		e := &groupEntry{view: v1alpha1.GroupView{Name: g.Name, Key: key, Summary: summary}}
		none := "0"
		if g.Key.None {
			none = "1"
		}
		e.sortKey = none + "\x00" + g.Name + "\x00" + g.Key.Namespace + "\x00" + g.Key.Context
		for ti, m := range g.Members {
			for _, o := range m.Objects {
				e.members = append(e.members, kindedObject{members: m, typeIndex: ti, obj: o, context: m.Context})
			}
		}
		slices.SortStableFunc(e.members, func(a, b kindedObject) int { return cmp.Compare(memberKey(a), memberKey(b)) })
		e.view.MemberCount = len(e.members)
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b *groupEntry) int { return cmp.Compare(a.sortKey, b.sortKey) })
	return out, nil
}

// jsonMap is v's JSON as a map.
func jsonMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(raw, &m)
}

// isNil reports whether v is its type's zero value, for pointers.
func isNil[T any](v, zero T) bool {
	return any(v) == any(zero)
}

// groupViews gathers a page's items into their groups, in order; more says
// whether the answer goes on after the page, so that the last group may
// have members beyond it.
func groupViews(page []queryItem, views []v1alpha1.ObjectView, more bool) []v1alpha1.GroupView {
	var out []v1alpha1.GroupView
	var last *groupEntry
	for i, it := range page {
		if it.group != last {
			g := it.group.view
			g.Members = []v1alpha1.ObjectView{}
			out = append(out, g)
			last = it.group
		}
		if it.obj.obj != nil {
			out[len(out)-1].Members = append(out[len(out)-1].Members, views[i])
		}
	}
	if more && len(out) > 0 {
		g := &out[len(out)-1]
		g.More = len(g.Members) < g.MemberCount
	}
	return out
}

// seconds converts a call's seconds to a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
