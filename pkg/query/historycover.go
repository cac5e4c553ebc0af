package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/history"
)

// What each source of a history covers, and the gaps between: the
// revisions cover the pod template from the oldest revision kept (from the
// workload's creation when revision 1 is kept), the events the last
// --event-ttl (an hour by default), a checkpoint the stretch its feed
// printed change by change. managedFields and the objects' own times keep
// the last of something, no stretch. Every stretch of the window none of
// them covers is a gap, with the reason each does not reach it.

// coverage adds each source's coverage to the document and returns the
// stretches the revisions and the events cover.
func (h *historyRun) coverage() []history.Interval {
	var out []history.Interval
	root := objectName(h.root.GVK, h.root.Object)
	add := func(c v1alpha1.HistoryCoverage, iv *history.Interval) {
		if iv != nil {
			from, to := iv.From, iv.To
			if from.Before(h.from) {
				from = h.from
			}
			if to.After(h.to) {
				to = h.to
			}
			if from.Before(to) {
				f, t := metav1.NewTime(from), metav1.NewTime(to)
				c.From, c.To = &f, &t
			}
			out = append(out, *iv)
		}
		h.doc.Coverage = append(h.doc.Coverage, c)
	}
	if _, ok := revisionsKind(h.root.GVK.GroupKind()); ok {
		c := v1alpha1.HistoryCoverage{Source: v1alpha1.SourceRevision}
		switch why := h.unavailable[v1alpha1.SourceRevision]; {
		case why != "":
			c.Description, c.Unavailable = "the revisions of the pod template of "+root+" could not be read", why
			add(c, nil)
		case len(h.revs) == 0:
			c.Description = root + " keeps no revision of its pod template"
			add(c, nil)
		default:
			start := h.revisionsStart()
			low, high := minRevision(h.revs), h.revs[len(h.revs)-1].number
			c.Description = fmt.Sprintf("every change of the pod template of %s: revisions %d to %d, kept as %s", root, low, high, h.revisionKind)
			if h.revisionsLimit != "" {
				c.Description += " (" + h.revisionsLimit + ")"
			}
			if low > 1 {
				c.Description += fmt.Sprintf("; the revisions before %d are no longer kept", low)
			}
			c.Description += "; not the other fields, nor what the objects under it do"
			add(c, &history.Interval{From: start, To: h.to})
		}
	}
	n := len(h.nodes)
	uses := ""
	if len(h.used) > 0 {
		uses = fmt.Sprintf(" and of the %d it uses", len(h.used))
	}
	c := v1alpha1.HistoryCoverage{Source: v1alpha1.SourceEvent}
	if why := h.unavailable[v1alpha1.SourceEvent]; why != "" {
		c.Description, c.Unavailable = "the Events of the objects could not be read", why
		add(c, nil)
	} else {
		c.Description = fmt.Sprintf("the Events of the %d objects under %s%s, as they are now; the API server keeps an event about %s after it last happened (its --event-ttl, 1h unless set otherwise), so the events of earlier stretches are gone, and an object gone takes the link to its own events with it (its owner's tell of it)", n, root, uses, roundDuration(h.opts.EventTTL))
		add(c, &history.Interval{From: h.to.Add(-h.opts.EventTTL), To: h.to})
	}
	explained := []string{root}
	if len(h.revs) > 0 {
		explained = append(explained, fmt.Sprintf("its %d %s (for the fields of its template only they hold)", len(h.revs), h.revisionKind))
	}
	for _, u := range h.used {
		explained = append(explained, objectName(u.gvk, u.meta))
	}
	c = v1alpha1.HistoryCoverage{Source: v1alpha1.SourceManagedFields,
		Description: "who last wrote each field, and when, of " + strings.Join(explained, ", ") + ": each manager's last write, not the writes before it, and the values the fields hold now, not those before; read for these objects only"}
	if why := h.unavailable[v1alpha1.SourceManagedFields]; why != "" {
		c.Unavailable = why
	}
	for what, why := range h.unavailable {
		if strings.HasPrefix(what, "uses ") {
			c.Unavailable = strings.TrimPrefix(strings.Join([]string{c.Unavailable, why}, "; "), "; ")
		}
	}
	add(c, nil)
	add(v1alpha1.HistoryCoverage{Source: v1alpha1.SourceObject,
		Description: fmt.Sprintf("the creation, and any deletion under way, of the %d objects under %s%s, as they are now; an object gone says nothing", n, root, uses)}, nil)
	return out
}

// revisionsStart is when the revisions start covering the template: the
// workload's creation when its first revision is kept, else the oldest
// revision's creation.
func (h *historyRun) revisionsStart() time.Time {
	if minRevision(h.revs) == 1 {
		return h.root.Object.GetCreationTimestamp().Time
	}
	var start time.Time
	for _, r := range h.revs {
		if start.IsZero() || r.time.Before(start) {
			start = r.time
		}
	}
	return start
}

// gaps adds the stretches of the window none of covered covers, each with
// why every source does not reach it.
func (h *historyRun) gaps(covered []history.Interval) {
	root := objectName(h.root.GVK, h.root.Object)
	created := h.root.Object.GetCreationTimestamp().Time
	for _, g := range history.Uncovered(h.from, h.to, covered) {
		var why []string
		if !g.To.After(created) {
			why = append(why, fmt.Sprintf("%s was created at %s, after it", root, created.UTC().Format(time.RFC3339)))
		}
		if _, ok := revisionsKind(h.root.GVK.GroupKind()); ok {
			switch {
			case h.unavailable[v1alpha1.SourceRevision] != "":
				why = append(why, "the revisions could not be read")
			case len(h.revs) == 0:
				why = append(why, "no revision is kept")
			default:
				why = append(why, fmt.Sprintf("it is before the oldest revision kept (revision %d, %s)", minRevision(h.revs), h.revisionsStart().UTC().Format(time.RFC3339)))
			}
		} else {
			why = append(why, fmt.Sprintf("%s has no revisions", root))
		}
		if h.unavailable[v1alpha1.SourceEvent] != "" {
			why = append(why, "the events could not be read")
		} else {
			why = append(why, fmt.Sprintf("events expire about %s after they last happened, and those of %s and before are gone", roundDuration(h.opts.EventTTL), h.to.Add(-h.opts.EventTTL).UTC().Format(time.RFC3339)))
		}
		if h.opts.Checkpoint == "" {
			why = append(why, "no checkpoint was given (--from-checkpoint)")
		} else {
			why = append(why, "the checkpoint's feed did not print it change by change")
		}
		h.doc.Gaps = append(h.doc.Gaps, v1alpha1.HistoryGap{From: metav1.NewTime(g.From), To: metav1.NewTime(g.To),
			Reason: "no source covers this stretch: " + strings.Join(why, "; ")})
	}
}

// checkpointEntries folds in what the checkpoint of opts recorded: for the
// stream of the session's context, refused as Resume refuses another
// cluster or another feed, the stretch each type of the tree was printed
// change by change, and what it knew of the objects: when each last changed
// while it ran; which changed, or went, after its last record. A checkpoint
// keeps versions, not content: it says that and when, not what.
func (h *historyRun) checkpointEntries(ctx context.Context) ([]v1alpha1.HistoryEntry, []history.Interval, error) {
	rec, err := checkpoint.Read(h.opts.Checkpoint)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range rec.Warnings() {
		h.s.warn("%s", w)
	}
	// The stream is the context's, as a feed names it: a plain run's by the
	// kubeconfig's context name. The cluster is read as a feed reads it, so
	// that a checkpoint of a cluster made anew at the same address is
	// refused as its resume would be.
	name := h.s.cfg.Context
	if name == "" {
		name = h.opts.ContextName
	}
	cluster, err := clusterOf(ctx, h.s)
	if err != nil {
		return nil, nil, err
	}
	// The types of the tree and of what the root uses, by the names a
	// checkpoint records them under (pods, replicasets.apps): a stream that
	// watched none of them is another feed.
	kinds := map[string]schema.GroupVersionKind{}
	var resources []string
	addKind := func(gvk schema.GroupVersionKind) {
		res := h.w.resourceFor(gvk.GroupKind())
		if res.Empty() {
			return
		}
		r := res.GroupResource().String()
		if _, ok := kinds[r]; !ok {
			kinds[r] = gvk
			resources = append(resources, r)
		}
	}
	type current struct {
		gvk schema.GroupVersionKind
		obj metav1.Object
	}
	now := map[types.UID]current{}
	for _, n := range h.nodes {
		addKind(n.GVK)
		now[n.Object.GetUID()] = current{n.GVK, n.Object}
	}
	for _, u := range h.used {
		if m, err := h.s.cfg.Mapper.RESTMapping(u.gvk.GroupKind(), u.gvk.Version); err == nil {
			r := m.Resource.GroupResource().String()
			if _, ok := kinds[r]; !ok {
				kinds[r] = u.gvk
				resources = append(resources, r)
			}
		}
		now[u.meta.GetUID()] = current{u.gvk, u.meta}
	}
	stream, warnings, err := rec.For(name, cluster, h.ns, resources)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range warnings {
		h.s.warn("%s", w)
	}
	// What was under the root, among what the checkpoint knew: by the
	// references --owner followed, up to an object under the root now.
	byUID := map[types.UID]checkpoint.RecordedObject{}
	for _, src := range stream.Sources {
		for _, o := range src.Objects {
			byUID[o.UID] = o
		}
	}
	under := map[types.UID]bool{}
	var belongs func(uid types.UID, depth int) bool
	belongs = func(uid types.UID, depth int) bool {
		if _, ok := now[uid]; ok {
			return true
		}
		if v, ok := under[uid]; ok || depth > 16 {
			return v
		}
		under[uid] = false
		o, ok := byUID[uid]
		if !ok {
			return false
		}
		for _, r := range o.Refs {
			if belongs(r.UID, depth+1) {
				under[uid] = true
				return true
			}
		}
		return false
	}
	// Only --owner records references: without them an object gone since
	// cannot be told to have been under the root, and is left out.
	owned := slices.ContainsFunc(stream.Stream.Filters, func(f checkpoint.Filter) bool { return f.Flag == "--owner" })
	var entries []v1alpha1.HistoryEntry
	var covered []history.Interval
	recorded := metav1.NewTime(stream.Recorded)
	until := metav1.NewTime(h.to)
	path := rec.Path()
	// For refused a stream with no type in common.
	for _, src := range stream.Sources {
		gvk, ok := kinds[src.Resource]
		if !ok {
			continue
		}
		c := v1alpha1.HistoryCoverage{Source: v1alpha1.SourceCheckpoint}
		if !src.Since.IsZero() && !stream.Recorded.IsZero() {
			c.Description = fmt.Sprintf("%s: kubectl idx watch printed every change of %s in %s from %s to %s, its last record; the checkpoint keeps each object's last version and when it was recorded, not what changed: the feed's output holds that",
				path, src.Resource, namespaceWords(stream.Stream.Namespace), src.Since.UTC().Format(time.RFC3339), stream.Recorded.UTC().Format(time.RFC3339))
			if src.Relisting {
				c.Description += "; it was printing a relist, folded, at its last record"
			}
			iv := history.Interval{From: src.Since, To: stream.Recorded}
			covered = append(covered, iv)
			from, to := metav1.NewTime(maxTime(iv.From, h.from)), metav1.NewTime(minTime(iv.To, h.to))
			if from.Before(&to) {
				c.From, c.To = &from, &to
			}
		} else {
			c.Description = fmt.Sprintf("%s: the versions of %s in %s it recorded; it keeps no times (an earlier kubectl idx wrote it), so it covers no stretch", path, src.Resource, namespaceWords(stream.Stream.Namespace))
		}
		if !owned {
			c.Description += "; without --owner it does not say what was under the object, so objects gone since are not told"
		}
		h.doc.Coverage = append(h.doc.Coverage, c)
		for _, o := range src.Objects {
			cur, isNow := now[o.UID]
			if !isNow && !(owned && belongs(o.UID, 0)) {
				continue
			}
			ref := v1alpha1.HistoryObject{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: o.Namespace, Name: o.Name, UID: string(o.UID)}
			// An object of the feed's first list was recorded when the feed
			// started: only a later record says it changed then.
			if !o.At.IsZero() && o.At.After(src.Since) {
				entries = append(entries, v1alpha1.HistoryEntry{Time: metav1.NewTime(o.At), Object: ref, Source: v1alpha1.SourceCheckpoint, Action: "Changed",
					ResourceVersion: o.ResourceVersion, Note: "its last change while the feed ran, as the feed printed it: the checkpoint keeps the version, the feed's output the change"})
			}
			if stream.Recorded.IsZero() {
				continue
			}
			// What happened after the last record is known only to have
			// happened between it and now.
			switch {
			case !isNow:
				entries = append(entries, v1alpha1.HistoryEntry{Time: recorded, Until: &until, Object: ref, Source: v1alpha1.SourceCheckpoint, Action: "Deleted",
					ResourceVersion: o.ResourceVersion, Note: fmt.Sprintf("recorded at version %s; gone since the checkpoint's last record", o.ResourceVersion)})
			case cur.obj.GetResourceVersion() != o.ResourceVersion:
				entries = append(entries, v1alpha1.HistoryEntry{Time: recorded, Until: &until, Object: ref, Source: v1alpha1.SourceCheckpoint, Action: "Changed",
					ResourceVersion: cur.obj.GetResourceVersion(), Note: fmt.Sprintf("changed after the checkpoint's last record: version %s then, %s now", o.ResourceVersion, cur.obj.GetResourceVersion())})
			}
		}
	}
	return entries, covered, nil
}

// namespaceWords names a feed's namespace in a sentence.
func namespaceWords(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return "namespace " + ns
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
