package query

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// feedConfig completes cfg with what a checkpoint asks of a feed over reqs:
// recording, and resuming from what it holds.
func feedConfig(cfg feed.Config, reqs []Request, cp *checkpoint.Feed) feed.Config {
	if cp == nil {
		return cfg
	}
	cfg.Record = cp.Record
	if st := cp.Restored(); st != nil {
		cfg.Restore = st
		cfg.Stub = func(k feed.Known) runtime.Object { return stub(k, reqs[k.Source].Mode) }
	}
	return cfg
}

// stub is what stands for a restored object in an informer of mode: its
// metadata as the checkpoint knows it, which is what a DELETED found on
// relisting prints of an object deleted while the feed was stopped.
func stub(k feed.Known, mode informer.Mode) runtime.Object {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: k.Namespace, Name: k.Name, UID: k.UID, ResourceVersion: k.ResourceVersion, OwnerReferences: k.Refs,
	}}
	if mode == informer.Rows || mode == informer.FullRows {
		// No cells: the checkpoint has none.
		return &informer.Row{Object: m}
	}
	return m
}

// feedInformers registers f with a feed informer of factory for each of
// reqs, source i being reqs[i]: each followed by a cursor, resumed from what
// cp holds, and telling notices and cp of relists.
func feedInformers(factory *informer.Factory, f *feed.Feed, reqs []Request, cp *checkpoint.Feed, notices FeedNotices) ([]cache.ResourceEventHandlerRegistration, error) {
	regs := make([]cache.ResourceEventHandlerRegistration, len(reqs))
	var restored *feed.State
	if cp != nil {
		restored = cp.Restored()
	}
	for i, r := range reqs {
		var from *informer.ResumePoint
		if restored != nil {
			from = &informer.ResumePoint{ResourceVersion: restored.Positions[i], Known: f.Stubs(i)}
			if g := cp.Relist(i); g != nil {
				from.Relist = &informer.Gap{From: g.From, To: g.To, Reason: g.Reason}
			}
		}
		cursor := informer.NewCursor(r.Resource, from, func(res informer.Resource, g informer.Gap) {
			if cp != nil {
				// An error is the next Record's too, which ends the feed.
				_ = cp.Relisting(i, feed.Gap{From: g.From, To: g.To, Reason: g.Reason})
			}
			if notices.OnGap != nil {
				notices.OnGap(res, g)
			}
		})
		inf, err := factory.FeedInformer(r.Resource, r.Mode, cursor)
		if err != nil {
			return nil, err
		}
		if regs[i], err = inf.AddEventHandler(cursor.Handler(marked{f.Marked(i)})); err != nil {
			return nil, fmt.Errorf("watching %s: %w", r.Resource.Name(), err)
		}
	}
	return regs, nil
}

// marked hands a cursor's notifications to a feed, marks and all.
type marked struct{ h feed.MarkedHandler }

func (m marked) OnAdd(obj any, initial bool, mk informer.Mark) { m.h.OnAdd(obj, initial, feedMark(mk)) }
func (m marked) OnUpdate(old, obj any, mk informer.Mark)       { m.h.OnUpdate(old, obj, feedMark(mk)) }
func (m marked) OnDelete(obj any, mk informer.Mark)            { m.h.OnDelete(obj, feedMark(mk)) }
func (m marked) OnPosition(mk informer.Mark)                   { m.h.OnPosition(feedMark(mk)) }

func feedMark(m informer.Mark) feed.Mark {
	out := feed.Mark{Position: m.Position}
	if m.Gap != nil {
		out.Gap = &feed.Gap{From: m.Gap.From, To: m.Gap.To, Reason: m.Gap.Reason}
	}
	return out
}
