package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// protobufList renders list as the API server sends it in protobuf: the magic
// number, then a runtime.Unknown holding its type and its bytes.
func protobufList(t testing.TB, apiVersion, kind string, list interface{ Marshal() ([]byte, error) }) []byte {
	t.Helper()
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	data, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), data...)
}

// TestContinueFromPrefix: the continue token is read from the first bytes of a
// list answer, protobuf or JSON, as soon as they hold the list's metadata; a
// shorter prefix asks for more, and an answer of another shape is refused.
func TestContinueFromPrefix(t *testing.T) {
	token := "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDg3OTN9"
	pods := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "48793", Continue: token}}
	for i := range 3 {
		pods.Items = append(pods.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "shop", Labels: map[string]string{"pad": strings.Repeat("x", 300)}}})
	}
	metas := &metav1.PartialObjectMetadataList{ListMeta: pods.ListMeta}
	for _, p := range pods.Items {
		metas.Items = append(metas.Items, metav1.PartialObjectMetadata{ObjectMeta: p.ObjectMeta})
	}
	last := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "48793"}, Items: metas.Items}
	podsJSON, err := json.Marshal(struct {
		metav1.TypeMeta `json:",inline"`
		*corev1.PodList
	}{metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, pods})
	if err != nil {
		t.Fatal(err)
	}
	table := []byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7","continue":"` + token + `","remainingItemCount":12},"columnDefinitions":[{"name":"Name"}],"rows":[{"cells":["web-0"]}]}`)
	tests := []struct {
		name  string
		parse func([]byte) (string, error)
		data  []byte
		want  string
	}{
		{"typed protobuf list", protobufContinue, protobufList(t, "v1", "PodList", pods), token},
		{"metadata-only protobuf list", protobufContinue, protobufList(t, "meta.k8s.io/v1", "PartialObjectMetadataList", metas), token},
		{"last protobuf page", protobufContinue, protobufList(t, "meta.k8s.io/v1", "PartialObjectMetadataList", last), ""},
		{"JSON list", jsonContinue, podsJSON, token},
		{"JSON table", jsonContinue, table, token},
		{"last JSON page", jsonContinue, []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every prefix either asks for more or has the token: the first
			// that has it is no longer than the list's metadata needs.
			found := -1
			for n := 0; n <= len(tc.data); n++ {
				got, err := tc.parse(tc.data[:n])
				if errors.Is(err, errNeedMore) {
					if found >= 0 {
						t.Fatalf("prefix of %d bytes asks for more after %d had the token", n, found)
					}
					continue
				}
				if err != nil {
					t.Fatalf("prefix of %d bytes: %v", n, err)
				}
				if got != tc.want {
					t.Fatalf("prefix of %d bytes: token %q, want %q", n, got, tc.want)
				}
				if found < 0 {
					found = n
				}
			}
			if found < 0 || found > 400 {
				t.Errorf("the token was found after %d of %d bytes, want it within the first 400", found, len(tc.data))
			}
		})
	}

	refused := []struct {
		name  string
		parse func([]byte) (string, error)
		data  string
	}{
		{"JSON items before metadata", jsonContinue, `{"kind":"PodList","items":[{"metadata":{"name":"a"}}],"metadata":{"continue":"x"}}`},
		{"JSON array", jsonContinue, `[{"metadata":{}}]`},
		{"JSON that is not JSON", jsonContinue, `<html>`},
		{"protobuf without the magic number", protobufContinue, `k9s` + "\x00\x0a\x00"},
		{"protobuf of another shape", protobufContinue, "k8s\x00\x12\x00"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := tc.parse([]byte(tc.data)); err == nil || errors.Is(err, errNeedMore) {
				t.Errorf("token %q, error %v; want the answer refused", got, err)
			}
		})
	}
}

// fakePages serves a paged list of pages pages to PageAhead: page i is named by
// the continue token "p<i>" (the first by none) and continues to the next. Each
// request waits for its release before it answers, so a test sees which pages
// are asked for while it holds others.
type fakePages struct {
	pages int
	// early makes each request tell its token before it answers, as
	// ListTransport does for our clients; otherwise the token comes with the
	// page.
	early bool

	mu       sync.Mutex
	asked    []string
	release  map[string]chan struct{}
	inFlight int
	maxIn    int
	// fail, when set, is the error of the page asked for with that token.
	fail map[string]error
}

func newFakePages(pages int, early bool) *fakePages {
	return &fakePages{pages: pages, early: early, release: map[string]chan struct{}{}, fail: map[string]error{}}
}

// gate returns the channel that releases the page asked for with token.
func (p *fakePages) gate(token string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.release[token]
	if !ok {
		ch = make(chan struct{})
		p.release[token] = ch
	}
	return ch
}

// letGo releases the page asked for with token.
func (p *fakePages) letGo(token string) { close(p.gate(token)) }

func (p *fakePages) fetch(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	i := 0
	if o.Continue != "" {
		if _, err := fmt.Sscanf(o.Continue, "p%d", &i); err != nil {
			return nil, err
		}
	}
	next := ""
	if i+1 < p.pages {
		next = fmt.Sprintf("p%d", i+1)
	}
	p.mu.Lock()
	p.asked = append(p.asked, o.Continue)
	p.inFlight++
	p.maxIn = max(p.maxIn, p.inFlight)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
	}()
	if hook, ok := ctx.Value(listHookKey{}).(listHook); p.early && ok {
		hook.onContinue(next)
	}
	select {
	case <-p.gate(o.Continue):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := p.fail[o.Continue]; err != nil {
		return nil, err
	}
	return &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{Continue: next},
		Items:    []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("item-%d", i)}}},
	}, nil
}

// askedFor returns the tokens asked for so far, in order.
func (p *fakePages) askedFor() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// waitAsked waits until n pages have been asked for.
func waitAsked(t *testing.T, p *fakePages, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(p.askedFor()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("pages asked for: %q, want %d", p.askedFor(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// getAsync asks pa for the page of o in a goroutine.
func getAsync(ctx context.Context, pa *PageAhead, o metav1.ListOptions) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := pa.Get(ctx, o)
		done <- err
	}()
	return done
}

// TestPageAhead: the next page is asked for while the caller waits for the one
// before (as soon as its token is known, from the answer's first bytes or else
// with the page), never more than one page ahead, and a page asked for ahead of
// a list that started again is cancelled.
func TestPageAhead(t *testing.T) {
	for _, early := range []bool{true, false} {
		t.Run(fmt.Sprintf("token early %v", early), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fp := newFakePages(4, early)
			pa := &PageAhead{Fetch: fp.fetch}
			first := metav1.ListOptions{Limit: 2, ResourceVersion: "", LabelSelector: "app=web"}

			done := getAsync(ctx, pa, first)
			waitAsked(t, fp, 1)
			if early {
				// The token is known before the first page has come: the
				// second is asked for at once.
				waitAsked(t, fp, 2)
			}
			fp.letGo("")
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// The second page was asked for ahead, before the caller asks.
			waitAsked(t, fp, 2)
			time.Sleep(20 * time.Millisecond)
			if got := fp.askedFor(); len(got) != 2 {
				t.Fatalf("asked for %q while the caller holds page 1, want the first two pages only", got)
			}
			o2 := NextPage(first, "p1")
			done = getAsync(ctx, pa, o2)
			if early {
				waitAsked(t, fp, 3)
			}
			fp.letGo("p1")
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			waitAsked(t, fp, 3)
			fp.mu.Lock()
			maxIn := fp.maxIn
			fp.mu.Unlock()
			if maxIn > 2 {
				t.Errorf("%d pages in flight at once, want at most 2", maxIn)
			}

			// The list starts again from the first page (an error elsewhere):
			// the third page, asked for ahead, is cancelled, and the new
			// first page is asked for.
			fp.mu.Lock()
			fp.release[""] = make(chan struct{})
			fp.mu.Unlock()
			done = getAsync(ctx, pa, first)
			waitAsked(t, fp, 4)
			fp.letGo("")
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			want := []string{"", "p1", "p2", "", "p1"}
			waitAsked(t, fp, len(want))
			if got := fp.askedFor(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("asked for %q, want %q", got, want)
			}
		})
	}
}

// TestPageAheadLastPageAndErrors: the last page asks for nothing more, and the
// error of a page asked for ahead is the caller's when it asks for that page.
func TestPageAheadLastPageAndErrors(t *testing.T) {
	ctx := context.Background()
	fp := newFakePages(2, true)
	boom := errors.New("boom")
	fp.fail["p1"] = boom
	fp.letGo("")
	fp.letGo("p1")
	pa := &PageAhead{Fetch: fp.fetch}
	first := metav1.ListOptions{Limit: 2}
	obj, err := pa.Get(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if l := obj.(*metav1.PartialObjectMetadataList); l.Continue != "p1" {
		t.Fatalf("first page continues to %q, want p1", l.Continue)
	}
	if _, err := pa.Get(ctx, NextPage(first, "p1")); !errors.Is(err, boom) {
		t.Fatalf("second page: %v, want %v", err, boom)
	}
	time.Sleep(20 * time.Millisecond)
	if got := fp.askedFor(); len(got) != 2 {
		t.Errorf("asked for %q, want the two pages only", got)
	}
}
