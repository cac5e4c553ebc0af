package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// ChangesArgs are the changes tool's arguments.
type ChangesArgs struct {
	Resources      string   `json:"resources" jsonschema:"resource types as kubectl names them, comma-separated: pods, deploy,rs,pods"`
	Namespace      string   `json:"namespace,omitempty" jsonschema:"the namespace; default: the context's"`
	AllNamespaces  bool     `json:"allNamespaces,omitempty" jsonschema:"every namespace"`
	Owner          string   `json:"owner,omitempty" jsonschema:"only this object and what it owns, through any chain of ownerReferences: TYPE/NAME, e.g. deployment/web"`
	Where          []string `json:"where,omitempty" jsonschema:"CEL expressions, as kubectl idx watch --where: an object that starts matching is ADDED, one that stops DELETED with leftScope"`
	Cursor         string   `json:"cursor,omitempty" jsonschema:"nextCursor of the previous answer: the changes since; empty starts the feed with the current state"`
	TimeoutSeconds float64  `json:"timeoutSeconds,omitempty" jsonschema:"with a cursor, wait up to this many seconds (at most 120) for a change when there is none yet"`
	Limit          int      `json:"limit,omitempty" jsonschema:"most changes in this answer (default 100, at most 5000)"`
	Common
}

// question is what names the question of the arguments: all but the
// cursor, the limit, the timeout and the staleness bound, which page the
// feed or bound its wait.
func (in ChangesArgs) question() ChangesArgs {
	in.Cursor, in.Limit, in.TimeoutSeconds, in.MaxStalenessSeconds = "", 0, 0, 0
	return in
}

// maxChangesTimeout bounds timeoutSeconds.
const maxChangesTimeout = 120 * time.Second

func (s *Server) changes(ctx context.Context, in ChangesArgs) (*v1alpha1.ChangesAnswer, error) {
	args, err := resourceArgs(in.Resources)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 || strings.Contains(args[0], "/") {
		return nil, badArgument("resources are types, not objects: narrow to an object and what it owns with owner")
	}
	if in.Owner != "" {
		typ, name, ok := strings.Cut(in.Owner, "/")
		if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
			return nil, badArgument("owner must be TYPE/NAME, e.g. deployment/web, got %q", in.Owner)
		}
	}
	timeout := seconds(in.TimeoutSeconds)
	if timeout < 0 || timeout > maxChangesTimeout {
		return nil, badArgument("timeoutSeconds must be between 0 and %d", int(maxChangesTimeout.Seconds()))
	}
	if err := guardWhere(in.Where, readsSecrets(in.Resources)); err != nil {
		return nil, err
	}
	limit, sig, cur, err := s.paging("changes", in.Limit, in.Cursor, in.question())
	if err != nil {
		return nil, err
	}
	var f *heldFeed
	var seq int64
	var warnings []string
	if cur == nil {
		c, err := s.newCall(scope{Context: in.Context, Namespace: in.Namespace, AllNamespaces: in.AllNamespaces, Where: in.Where, signature: sig})
		if err != nil {
			return nil, err
		}
		defer c.done()
		q := query.FeedQuery{Args: args, Owner: in.Owner, AllNamespaces: in.AllNamespaces, ShowOwner: true,
			Read: func(query.Request) informer.Mode { return informer.Full }}
		if f, err = s.feeds.start(ctx, c, q); err != nil {
			return nil, err
		}
	} else {
		if f = s.feeds.get(cur.Feed); f == nil {
			return nil, &toolError{kind: "CursorExpired", err: errors.New("the feed of this cursor has ended (unread for too long, or the server restarted): call changes without a cursor for the current state")}
		}
		seq = cur.Seq
		f.acknowledge(seq)
		if err := f.authorize(ctx); err != nil {
			return nil, err
		}
		if in.MaxStalenessSeconds == 0 {
			if warnings, err = f.prove(ctx); err != nil {
				return nil, err
			}
		}
	}
	if timeout > 0 {
		f.waitFor(ctx, seq, timeout)
	}
	if err := f.failure(); err != nil {
		s.feeds.remove(f)
		return nil, err
	}
	return f.answer(seq, limit, sig, warnings)
}

// feedHub holds the changes tool's feeds between calls.
type feedHub struct {
	s    *Server
	mu   sync.Mutex
	byID map[string]*heldFeed
	stop chan struct{}
	once sync.Once
}

func newFeedHub(s *Server) *feedHub {
	h := &feedHub{s: s, byID: map[string]*heldFeed{}, stop: make(chan struct{})}
	go h.janitor()
	return h
}

// janitor sweeps the feeds every quarter of FeedIdle until the hub closes.
func (h *feedHub) janitor() {
	wait.Until(h.sweep, max(h.s.cfg.FeedIdle/4, 10*time.Millisecond), h.stop)
}

// sweep stops the feeds nobody has read for FeedIdle.
func (h *feedHub) sweep() {
	h.mu.Lock()
	var idle []*heldFeed
	for id, f := range h.byID {
		if f.idleSince() > h.s.cfg.FeedIdle {
			idle = append(idle, f)
			delete(h.byID, id)
		}
	}
	h.mu.Unlock()
	for _, f := range idle {
		f.end()
	}
}

func (h *feedHub) get(id string) *heldFeed {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.byID[id]
	if f != nil {
		f.touch()
	}
	return f
}

func (h *feedHub) remove(f *heldFeed) {
	h.mu.Lock()
	delete(h.byID, f.id)
	h.mu.Unlock()
	f.end()
}

func (h *feedHub) close() {
	h.once.Do(func() { close(h.stop) })
	h.mu.Lock()
	all := h.byID
	h.byID = map[string]*heldFeed{}
	h.mu.Unlock()
	for _, f := range all {
		f.end()
	}
}

// heldFeed is one feed of the changes tool: kubectl idx watch's feed over
// the call's contexts (query.Follow), running between calls, its changes
// kept in order, numbered, until a cursor past them says they were read.
type heldFeed struct {
	s        *Server
	id       string
	clusters []Cluster
	targets  []query.Target
	cancel   context.CancelFunc
	done     chan struct{}

	mu sync.Mutex
	// changed is closed, and replaced, whenever something below changes.
	changed chan struct{}
	// log holds the changes not yet read; base is the number of the first.
	log  []v1alpha1.ChangeView
	base int64
	// sources are the kinds of every target's feed, an event's Source
	// indexing them; resources are each target's types, in its plan's
	// order; ownerOf names a target's objects' top-level owners; positions
	// each type's resourceVersion its changes are in the log up to, and
	// recorded when that was.
	sources   []schema.GroupVersionKind
	resources [][]informer.Resource
	ownerOf   []func(runtime.Object) string
	positions []map[int]string
	recorded  []time.Time
	// started marks the targets whose current state is in the log;
	// ended their feed's end, when it ended.
	started []bool
	ended   []error
	// err ends the whole feed: the memory bound, or every context failed.
	err error
	// warnings are what every answer of the feed says.
	warnings []string
	lastUsed time.Time
}

// errFeedFull is the memory bound of a feed.
type errFeedFull struct{ max int }

func (e errFeedFull) Error() string {
	return fmt.Sprintf("more than %d changes waited unread: the feed was stopped to bound its memory; call changes without a cursor for the current state", e.max)
}

// start starts the feed q asks in c's scope (query.Follow, kubectl idx
// watch's engine), and waits until each context's current state is in its
// log.
func (h *feedHub) start(ctx context.Context, c *call, q query.FeedQuery) (*heldFeed, error) {
	idBytes := make([]byte, 16)
	_, _ = rand.Read(idBytes)
	fctx, cancel := context.WithCancel(context.Background())
	n := len(c.targets)
	f := &heldFeed{
		s: h.s, id: hex.EncodeToString(idBytes), clusters: h.s.clustersOf(c.targets[0].Context), targets: c.targets, cancel: cancel, done: make(chan struct{}),
		changed: make(chan struct{}), resources: make([][]informer.Resource, n), ownerOf: make([]func(runtime.Object) string, n),
		positions: make([]map[int]string, n), recorded: make([]time.Time, n),
		started: make([]bool, n), ended: make([]error, n), lastUsed: time.Now(),
	}
	if c.several() {
		f.clusters = nil
		for _, t := range c.targets {
			f.clusters = append(f.clusters, h.s.clustersOf(t.Context)...)
		}
	}
	byContext := map[string]int{}
	for i, t := range c.targets {
		byContext[t.Context] = i
		f.positions[i] = map[int]string{}
	}
	h.mu.Lock()
	if len(h.byID) >= h.s.cfg.MaxFeeds {
		// The feed read least recently makes room.
		var oldest *heldFeed
		for _, g := range h.byID {
			if oldest == nil || g.idleSince() > oldest.idleSince() {
				oldest = g
			}
		}
		delete(h.byID, oldest.id)
		go oldest.end()
	}
	h.byID[f.id] = f
	h.mu.Unlock()

	v := &viewer{maxString: h.s.cfg.MaxString, status: h.s.cfg.Query.ObjectStatus, now: c.start}
	emit := func(ev *feed.Event) error { return f.add(v, ev) }
	flush := func() error {
		if n == 1 {
			f.mu.Lock()
			f.started[0] = true
			f.signalLocked()
			f.mu.Unlock()
		}
		return nil
	}
	ended := func(a query.Answer[struct{}]) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ended[byContext[a.Context]] = a.Err
		f.signalLocked()
	}
	out := query.FeedOutput{
		Start: func(plans []query.FeedPlan, sources []schema.GroupVersionKind) error {
			f.plan(plans, sources, byContext)
			return nil
		},
		Emit: emit, Flush: flush, Ended: ended,
		Record: func(context string, d *feed.Delta) error {
			f.record(byContext[context], d)
			return nil
		},
	}
	go func() {
		defer close(f.done)
		err := query.Follow(fctx, c.targets, c.config, q, out)
		f.mu.Lock()
		if err != nil && f.err == nil {
			f.err = err
		}
		f.signalLocked()
		f.mu.Unlock()
	}()
	wait := c.config.SyncTimeout
	if wait <= 0 {
		wait = time.Hour
	}
	wctx, cancelWait := context.WithTimeout(ctx, wait)
	defer cancelWait()
	for {
		f.mu.Lock()
		ready, failed := true, 0
		var last error
		for i := range n {
			if f.ended[i] != nil {
				failed++
				last = f.ended[i]
				continue
			}
			ready = ready && f.started[i]
		}
		err, ch := f.err, f.changed
		f.mu.Unlock()
		switch {
		case err != nil:
			h.remove(f)
			return nil, err
		case failed == n:
			h.remove(f)
			return nil, last
		case ready:
			return f, nil
		}
		select {
		case <-ch:
		case <-wctx.Done():
			h.remove(f)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &toolError{kind: "Timeout", err: fmt.Errorf("the feed's current state was not in within %s", wait)}
		}
	}
}

// signalLocked wakes whoever waits on the feed; f.mu is held.
func (f *heldFeed) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// plan keeps what the feed's plans say: the kinds of its events, each
// target's types as resources (mapped through the target's discovery), and
// its owner lookup.
func (f *heldFeed) plan(plans []query.FeedPlan, sources []schema.GroupVersionKind, byContext map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sources = sources
	for _, p := range plans {
		i := byContext[p.Context]
		f.ownerOf[i] = p.OwnerOf
		for _, gvk := range p.Kinds {
			m, err := f.targets[i].Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				// Unknown here, it is neither checked nor proved: say so.
				f.warnings = append(f.warnings, prefix(p.Context, fmt.Sprintf("%s cannot be mapped to a resource to check: %v", gvk.Kind, err)))
				f.resources[i] = append(f.resources[i], informer.Resource{GVK: gvk})
				continue
			}
			f.resources[i] = append(f.resources[i], informer.FromMapping(m))
		}
	}
	f.signalLocked()
}

// add logs one change, projected; past the memory bound it ends the feed.
func (f *heldFeed) add(v *viewer, ev *feed.Event) error {
	cv := v1alpha1.ChangeView{Context: ev.Context, Type: string(ev.Type), Time: ev.Time.UTC().Format(time.RFC3339Nano), DetectedOnRelist: ev.DetectedOnRelist, LeftScope: ev.LeftScope, Gap: ev.Gap}
	f.mu.Lock()
	defer f.mu.Unlock()
	i := 0
	for j, t := range f.targets {
		if t.Context == ev.Context {
			i = j
		}
	}
	owner := ""
	if of := f.ownerOf[i]; of != nil {
		owner = of(ev.Object)
	}
	if ev.Source < len(f.sources) {
		cv.Object = v.view(ev.Context, f.sources[ev.Source], ev.Object, owner)
	}
	if a, err := meta.Accessor(ev.Object); err == nil {
		cv.UID, cv.ResourceVersion = string(a.GetUID()), a.GetResourceVersion()
	}
	if len(f.log) >= f.s.cfg.MaxFeedEvents {
		f.err = &toolError{kind: "MemoryBound", err: errFeedFull{f.s.cfg.MaxFeedEvents}}
		f.log = nil
		f.signalLocked()
		return f.err
	}
	f.log = append(f.log, cv)
	f.signalLocked()
	return nil
}

// record keeps the positions of target i's types after a flush.
func (f *heldFeed) record(i int, d *feed.Delta) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for src, rv := range d.Positions {
		f.positions[i][src] = rv
	}
	f.recorded[i] = time.Now()
	f.started[i] = true
	f.signalLocked()
}

func (f *heldFeed) touch() {
	f.mu.Lock()
	f.lastUsed = time.Now()
	f.mu.Unlock()
}

func (f *heldFeed) idleSince() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Since(f.lastUsed)
}

// end stops the feed and waits for it.
func (f *heldFeed) end() {
	f.cancel()
	<-f.done
}

// failure is why the feed cannot answer any more, nil while it can.
func (f *heldFeed) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	for _, e := range f.ended {
		if e == nil {
			return nil
		}
	}
	return errors.Join(f.ended...)
}

// acknowledge drops the changes before seq: a cursor past them says they
// were read.
func (f *heldFeed) acknowledge(seq int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if drop := seq - f.base; drop > 0 {
		drop = min(drop, int64(len(f.log)))
		f.log = append([]v1alpha1.ChangeView(nil), f.log[drop:]...)
		f.base += drop
	}
}

// authorize asks the API server again, with the process's credentials,
// whether it may list each of the feed's types: the feed's informers were
// authorized when it started, and access revoked since refuses the call.
func (f *heldFeed) authorize(ctx context.Context) error {
	f.mu.Lock()
	resources := f.resources
	f.mu.Unlock()
	for i, t := range f.targets {
		asker := f.askerOf(t.Context)
		if asker == nil {
			continue
		}
		for _, res := range resources[i] {
			if res.GVR.Resource == "" {
				continue
			}
			ns := t.Namespace
			if !res.Namespaced {
				ns = ""
			}
			if err := asker.Check(ctx, res, ns, "", ""); err != nil {
				if len(f.targets) > 1 {
					return fmt.Errorf("context %q: %w", t.Context, err)
				}
				return err
			}
		}
	}
	return nil
}

func (f *heldFeed) clusterOf(context string) *Cluster {
	for i := range f.clusters {
		if f.clusters[i].Target.Context == context {
			return &f.clusters[i]
		}
	}
	return nil
}

func (f *heldFeed) askerOf(context string) pool.Asker {
	if c := f.clusterOf(context); c != nil {
		return c.Asker
	}
	return nil
}

// proofWait bounds how long a call waits for its feed to be shown current
// when the server's watch cannot show it (no bookmark): its position is
// then waited for as such.
const proofWait = 5 * time.Second

// prove waits until the feed holds every change the API server acknowledged
// before the call (FeedProof), for every context and type. What cannot be
// shown is a warning naming the type.
func (f *heldFeed) prove(ctx context.Context) ([]string, error) {
	var warnings []string
	for i, t := range f.targets {
		c := f.clusterOf(t.Context)
		if c == nil || c.Proof == nil || f.endedAt(i) {
			continue
		}
		f.mu.Lock()
		resources := f.resources[i]
		f.mu.Unlock()
		for j, res := range resources {
			if res.GVR.Resource == "" {
				continue
			}
			ns := t.Namespace
			if !res.Namespaced {
				ns = ""
			}
			latest, err := c.Proof.Latest(ctx, res, ns)
			if err != nil {
				return nil, err
			}
			from := f.position(i, j)
			if rvAtLeast(from, latest) {
				continue
			}
			want, err := c.Proof.LastChange(ctx, res, ns, from, latest)
			if err != nil {
				want = latest
				wctx, cancel := context.WithTimeout(ctx, proofWait)
				ok := f.waitPosition(wctx, i, j, want)
				cancel()
				if !ok {
					warnings = append(warnings, prefix(t.Context, fmt.Sprintf("the changes of %s may lag behind the call: the feed could not be shown current (%v)", res.Name(), err)))
				}
				continue
			}
			if want == "" || rvAtLeast(from, want) {
				continue
			}
			wait := f.s.cfg.Query.SyncTimeout
			if wait <= 0 {
				wait = time.Minute
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			ok := f.waitPosition(wctx, i, j, want)
			cancel()
			if !ok {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, &toolError{kind: "Timeout", err: fmt.Errorf("the feed of %s did not reach resourceVersion %s within %s", res.Name(), want, wait)}
			}
		}
	}
	return warnings, nil
}

func (f *heldFeed) endedAt(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended[i] != nil
}

func (f *heldFeed) position(i, j int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.positions[i][j]
}

// waitPosition waits until target i's type j is in the log up to want.
func (f *heldFeed) waitPosition(ctx context.Context, i, j int, want string) bool {
	for {
		f.mu.Lock()
		ok := rvAtLeast(f.positions[i][j], want)
		ch, err := f.changed, f.err
		f.mu.Unlock()
		if ok {
			return true
		}
		if err != nil {
			return false
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// waitFor waits up to timeout for a change numbered seq or later.
func (f *heldFeed) waitFor(ctx context.Context, seq int64, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		f.mu.Lock()
		ready := f.base+int64(len(f.log)) > seq || f.err != nil
		ch := f.changed
		f.mu.Unlock()
		if ready {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// answer returns the changes from seq on, at most limit of them and within
// the byte cap, and the cursor after them.
func (f *heldFeed) answer(seq int64, limit int, sig string, warnings []string) (*v1alpha1.ChangesAnswer, error) {
	f.mu.Lock()
	from := max(seq-f.base, 0)
	if from > int64(len(f.log)) {
		from = int64(len(f.log))
	}
	avail := f.log[from:]
	page := append([]v1alpha1.ChangeView(nil), avail[:min(len(avail), limit)]...)
	first := f.base + from
	answer := v1alpha1.NewChangesAnswer()
	now := time.Now()
	for i, t := range f.targets {
		for j, res := range f.resources[i] {
			ns := t.Namespace
			if !res.Namespaced {
				ns = ""
			}
			answer.AsOf = append(answer.AsOf, v1alpha1.MCPAsOf{
				Context: t.Context, Resource: res.Name(), Namespace: ns, ResourceVersion: f.positions[i][j],
				Time: f.recorded[i].UTC().Format(time.RFC3339Nano), AgeSeconds: roundSeconds(now.Sub(f.recorded[i])),
			})
		}
		if f.ended[i] != nil {
			answer.Warnings = append(answer.Warnings, prefix(t.Context, f.s.errorText(f.ended[i])))
		}
	}
	answer.Warnings = append(answer.Warnings, f.warnings...)
	f.mu.Unlock()
	answer.Warnings = append(answer.Warnings, warnings...)
	return fitPage(f.s.cfg.MaxBytes, answer, 0, len(avail), page,
		func(out *v1alpha1.ChangesAnswer, changes []v1alpha1.ChangeView) { out.Changes = changes },
		func(k int) string { return cursor{Question: sig, Feed: f.id, Seq: first + int64(k)}.encode() }), nil
}
