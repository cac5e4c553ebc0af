package printers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// TestEventsWatchPrinter: the table is kubectl events -w's and leaves out
// expired events; JSON is kubectl idx watch's and keeps them.
func TestEventsWatchPrinter(t *testing.T) {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "shop", Name: "web.1", ResourceVersion: "7"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1"},
		Type:           "Normal", Reason: "Pulled", Message: "pulled\n",
		EventTime: metav1.NewMicroTime(time.Now().Add(-time.Minute)),
	}
	feedEvents := []*feed.Event{
		{Type: feed.Added, Time: at, Object: ev},
		{Type: feed.Deleted, Time: at, Object: ev},
	}
	source := WatchSource{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Event"}}

	var table strings.Builder
	p := NewEventsWatchPrinter(EventsWatchOptions{Source: source}, nil)
	for _, e := range feedEvents {
		if err := p.Print(&table, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(&table); err != nil {
		t.Fatal(err)
	}
	want := "LAST SEEN   TYPE     REASON   OBJECT      MESSAGE\n60s         Normal   Pulled   Pod/web-1   pulled\n"
	if table.String() != want {
		t.Errorf("table:\n%q\nwant:\n%q", table.String(), want)
	}

	var js strings.Builder
	p = NewEventsWatchPrinter(EventsWatchOptions{Format: "json", Source: source}, nil)
	for _, e := range feedEvents {
		if err := p.Print(&js, e); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(js.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"type":"ADDED","time":"2026-11-01T12:00:00Z","object":{"kind":"Event","apiVersion":"v1"`) || !strings.HasPrefix(lines[1], `{"type":"DELETED"`) {
		t.Errorf("json:\n%s", js.String())
	}
}
