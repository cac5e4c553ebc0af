package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A paged LIST asks for each page with the continue token of the one before,
// and the server takes a while to produce a page: on 20,000 realistic pods a
// page of 2,000 metadata-only pods is about 12 MB the server encodes and
// compresses as it sends it. Asked one after the other, the server waits while
// the client reads and decodes a page, and the client waits while the server
// produces the next. PageAhead asks for the next page as soon as the token is
// known, which is long before the page has arrived: the server sends a list's
// ListMeta first, and ListTransport reads the token from the first bytes of the
// answer. The server then produces a page while the client still reads and
// decodes the one before, each on a core of its own.

// PageAhead keeps at most one page of a paged list in flight beyond the one its
// caller waits for: the page after it, asked for once its continue token is
// known. At most two pages are in memory besides the caller's, whatever the
// length of the list and however slowly the caller takes them (a printer
// writing to a slow pipe). One PageAhead serves one list (one informer's
// ListWatch), from Get's callers in turn, as a reflector asks for pages.
type PageAhead struct {
	// Fetch asks for one page and returns it decoded and transformed. It runs
	// in a goroutine of its own, with a context that tells ListTransport what
	// to do with the answer: a client whose transport ListTransport wraps
	// learns the continue token from the first bytes of the answer, so that
	// the next page is asked for while this one still arrives.
	Fetch func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error)
	// DropManagedFields asks ListTransport to take managedFields out of
	// protobuf pages before they are decoded.
	DropManagedFields bool

	mu sync.Mutex
	// next is the page asked for ahead of the caller, if any.
	next *pageFetch
}

// pageFetch is one page being asked for.
type pageFetch struct {
	opts   metav1.ListOptions
	cancel context.CancelFunc
	// done is closed once obj and err are set.
	done chan struct{}
	obj  runtime.Object
	err  error

	mu sync.Mutex
	// token is the page's continue token, once tokenKnown; empty for the
	// last page of a list, or a page that failed.
	token      string
	tokenKnown bool
	// onToken, when set, is called once with the token, as soon as it is
	// known.
	onToken func(token string)
}

// Get returns the page o asks for: the one asked for ahead when o is the
// options it was asked with, or a new request. The page after it is asked for
// as soon as its continue token is known.
func (p *PageAhead) Get(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	f := p.take(o)
	if f == nil {
		f = p.launch(ctx, o)
	}
	f.whenToken(func(token string) {
		if token != "" {
			p.ahead(ctx, NextPage(o, token))
		}
	})
	select {
	case <-f.done:
		return f.obj, f.err
	case <-ctx.Done():
		f.cancel()
		return nil, ctx.Err()
	}
}

// take returns the page asked for ahead if it is the one o asks for, and
// forgets it either way: a list that started again (after an error, or in full
// after its continue token expired) cancels a page asked for ahead of the list
// it left.
func (p *PageAhead) take(o metav1.ListOptions) *pageFetch {
	p.mu.Lock()
	f := p.next
	p.next = nil
	p.mu.Unlock()
	if f == nil {
		return nil
	}
	if !sameListOptions(f.opts, o) {
		f.cancel()
		return nil
	}
	return f
}

// Ahead asks for the page o asks for ahead of the caller, who has its first
// page from elsewhere: Get then returns it when asked for it.
func (p *PageAhead) Ahead(ctx context.Context, o metav1.ListOptions) { p.ahead(ctx, o) }

// ahead asks for the page o asks for ahead of the caller.
func (p *PageAhead) ahead(ctx context.Context, o metav1.ListOptions) {
	f := p.launch(ctx, o)
	p.mu.Lock()
	old := p.next
	p.next = f
	p.mu.Unlock()
	if old != nil {
		old.cancel()
	}
}

// launch starts asking for the page o asks for.
func (p *PageAhead) launch(ctx context.Context, o metav1.ListOptions) *pageFetch {
	ctx, cancel := context.WithCancel(ctx)
	f := &pageFetch{opts: o, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.obj, f.err = p.Fetch(withListHook(ctx, listHook{onContinue: f.setToken, dropManagedFields: p.DropManagedFields}), o)
		// The decoded page has the token when the answer's first bytes did
		// not tell it (a client that is not ours, a fake); a page that failed
		// has no next page.
		token := ""
		if f.err == nil {
			if l, err := meta.ListAccessor(f.obj); err == nil {
				token = l.GetContinue()
			}
		}
		f.setToken(token)
	}()
	return f
}

// setToken records the page's continue token, the first time it is called,
// and tells onToken.
func (f *pageFetch) setToken(token string) {
	f.mu.Lock()
	if f.tokenKnown {
		f.mu.Unlock()
		return
	}
	f.token, f.tokenKnown = token, true
	cb := f.onToken
	f.mu.Unlock()
	if cb != nil {
		cb(token)
	}
}

// whenToken calls cb with the page's continue token once it is known: now, or
// from the goroutine that learns it.
func (f *pageFetch) whenToken(cb func(token string)) {
	f.mu.Lock()
	if f.tokenKnown {
		token := f.token
		f.mu.Unlock()
		cb(token)
		return
	}
	f.onToken = cb
	f.mu.Unlock()
}

// NextPage returns the options of the page after o's, whose continue token is
// token, as client-go's pager asks for it: a continued list names no resource
// version.
func NextPage(o metav1.ListOptions, token string) metav1.ListOptions {
	o.Continue = token
	o.ResourceVersion = ""
	o.ResourceVersionMatch = ""
	return o
}

// sameListOptions reports whether a and b ask for the same page.
func sameListOptions(a, b metav1.ListOptions) bool {
	return a.Continue == b.Continue && a.Limit == b.Limit &&
		a.ResourceVersion == b.ResourceVersion && a.ResourceVersionMatch == b.ResourceVersionMatch &&
		a.LabelSelector == b.LabelSelector && a.FieldSelector == b.FieldSelector &&
		a.Watch == b.Watch && a.AllowWatchBookmarks == b.AllowWatchBookmarks &&
		equalPtr(a.TimeoutSeconds, b.TimeoutSeconds) && equalPtr(a.SendInitialEvents, b.SendInitialEvents)
}

func equalPtr[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

// listHook is what a LIST page request asks of ListTransport, carried in its
// context (withListHook).
type listHook struct {
	// onContinue is called once with the page's continue token, as soon as
	// it has arrived.
	onContinue func(token string)
	// dropManagedFields takes the managedFields of the items out of a
	// protobuf page before the REST client reads it.
	dropManagedFields bool
	// held, when not nil, counts the bytes of the answer the REST client is
	// handed: without the items' managedFields where they were taken out.
	held *atomic.Int64
}

type listHookKey struct{}

// WithHeld returns ctx for one LIST request that PageAhead does not ask for
// (the small first page of a list whose size is being found out): its answer
// is served as PageAhead's pages are, without its items' managedFields when
// dropManagedFields, and held counts the bytes of it the REST client is
// handed, which is what the REST client holds of the list while it decodes
// it.
func WithHeld(ctx context.Context, dropManagedFields bool, held *atomic.Int64) context.Context {
	return withListHook(ctx, listHook{dropManagedFields: dropManagedFields, held: held})
}

// withListHook returns ctx for a LIST page request that ListTransport serves
// as hook asks.
func withListHook(ctx context.Context, hook listHook) context.Context {
	return context.WithValue(ctx, listHookKey{}, hook)
}

// ListTransport is a transport wrapper (for rest.Config.Wrap) for the LIST
// page requests of PageAhead, whose context carries a listHook; other requests
// pass untouched. It reads the continue token of an answer from its first
// bytes, protobuf or JSON, and gives it to the hook while the rest of the
// answer is still arriving; an answer it cannot read passes untouched, and the
// token is then taken from the decoded page. When the hook asks, it reads a
// protobuf answer whole, as the REST client would, into a buffer the size of
// the last page, and hands the REST client the answer without its items'
// managedFields (stripManagedFields).
func ListTransport(rt http.RoundTripper) http.RoundTripper {
	return &listRoundTripper{next: rt}
}

// listRoundTripper is the RoundTripper ListTransport installs.
type listRoundTripper struct {
	next http.RoundTripper
	// sizes holds, per URL path, the size of the last protobuf answer read
	// whole (an *atomic.Int64): the pages of a list are much alike, and a
	// buffer of the right size is filled without growing.
	sizes sync.Map
}

// WrappedRoundTripper lets client-go find the transport underneath.
func (t *listRoundTripper) WrappedRoundTripper() http.RoundTripper { return t.next }

// RoundTrip implements http.RoundTripper.
func (t *listRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	hook, ok := req.Context().Value(listHookKey{}).(listHook)
	if streamed(req.Context()) {
		// ReadList takes the managedFields out, item by item, and counts
		// what it holds.
		hook.dropManagedFields, hook.held = false, nil
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || !ok || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	var parse func([]byte) (string, error)
	switch {
	case strings.HasPrefix(ct, "application/vnd.kubernetes.protobuf"):
		parse = protobufContinue
	case strings.HasPrefix(ct, "application/json"):
		parse = jsonContinue
	default:
		if hook.held != nil {
			resp.Body = &sniffBody{ReadCloser: resp.Body, held: hook.held}
		}
		return resp, nil
	}
	sniff := &sniffBody{ReadCloser: resp.Body, parse: parse, hook: hook.onContinue}
	if hook.dropManagedFields && strings.HasPrefix(ct, "application/vnd.kubernetes.protobuf") {
		size, _ := t.sizes.LoadOrStore(req.URL.Path, new(atomic.Int64))
		resp.Body = &strippedBody{answer: sniff, size: size.(*atomic.Int64), held: hook.held}
		// The REST client reads the body whole; its length is no longer the
		// server's.
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		return resp, nil
	}
	sniff.held = hook.held
	resp.Body = sniff
	return resp, nil
}

// maxSniff bounds the bytes of an answer sniffBody keeps to find the continue
// token in: ListMeta takes a few hundred.
const maxSniff = 64 << 10

// errNeedMore says that a prefix of an answer ends before its ListMeta does.
var errNeedMore = errors.New("need more of the answer")

// sniffBody passes a body through, keeping its first bytes until parse finds
// the continue token in them.
type sniffBody struct {
	io.ReadCloser
	parse  func([]byte) (string, error)
	hook   func(string)
	prefix []byte
	done   bool
	// held, when not nil, counts the bytes read.
	held *atomic.Int64
}

// Read reads from the body and, until the token is found, looks for it.
func (b *sniffBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.held != nil {
		b.held.Add(int64(n))
	}
	if b.hook == nil {
		return n, err
	}
	if n > 0 && !b.done {
		b.prefix = append(b.prefix, p[:n]...)
		token, perr := b.parse(b.prefix)
		switch {
		case perr == nil:
			b.done, b.prefix = true, nil
			b.hook(token)
		case !errors.Is(perr, errNeedMore) || len(b.prefix) >= maxSniff:
			b.done, b.prefix = true, nil
		}
	}
	return n, err
}

// protobufMagic starts every protobuf answer of the API server.
var protobufMagic = []byte("k8s\x00")

// protobufContinue reads the continue token of a protobuf list from the first
// bytes of the answer: the magic number, then a runtime.Unknown whose field 1
// is the type and field 2 the list, whose own field 1 is its ListMeta.
func protobufContinue(data []byte) (string, error) {
	if len(data) < len(protobufMagic) {
		return "", errNeedMore
	}
	if !bytes.HasPrefix(data, protobufMagic) {
		return "", errors.New("not a protobuf answer")
	}
	data = data[len(protobufMagic):]
	// The type: skipped.
	field, n, err := protobufField(data, 1)
	if err != nil {
		return "", err
	}
	if len(data) < n+field {
		return "", errNeedMore
	}
	data = data[n+field:]
	// The list, of which only the start is wanted.
	if _, n, err = protobufField(data, 2); err != nil {
		return "", err
	}
	data = data[n:]
	field, n, err = protobufField(data, 1)
	if err != nil {
		return "", err
	}
	if len(data) < n+field {
		return "", errNeedMore
	}
	var lm metav1.ListMeta
	if err := lm.Unmarshal(data[n : n+field]); err != nil {
		return "", err
	}
	return lm.Continue, nil
}

// protobufField reads the tag and length of a length-delimited field at the
// start of data, which must be field num, and returns the length and the
// bytes they took. The tag must be the one byte the API server writes for
// num (num < 16); a prefix that ends in the length asks for more.
func protobufField(data []byte, num protowire.Number) (length, n int, err error) {
	if len(data) == 0 {
		return 0, 0, errNeedMore
	}
	if data[0] != byte(protowire.EncodeTag(num, protowire.BytesType)) {
		return 0, 0, errors.New("unexpected protobuf field")
	}
	l, m := protowire.ConsumeVarint(data[1:])
	switch {
	case m < 0 && errors.Is(protowire.ParseError(m), io.ErrUnexpectedEOF):
		return 0, 0, errNeedMore
	case m < 0 || l > 1<<31:
		return 0, 0, errors.New("bad protobuf length")
	}
	return int(l), 1 + m, nil
}

// jsonContinue reads the continue token of a JSON list or table from the first
// bytes of the answer: the API server writes kind, apiVersion and metadata
// before the items (or rows).
func jsonContinue(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	more := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errNeedMore
		}
		return err
	}
	if tok, err := dec.Token(); err != nil {
		return "", more(err)
	} else if tok != json.Delim('{') {
		return "", errors.New("not a JSON object")
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", more(err)
		}
		switch tok {
		case "metadata":
			var lm metav1.ListMeta
			if err := dec.Decode(&lm); err != nil {
				return "", more(err)
			}
			return lm.Continue, nil
		case "kind", "apiVersion":
			var s string
			if err := dec.Decode(&s); err != nil {
				return "", more(err)
			}
		default:
			// Items before the metadata: the token comes with the page.
			return "", errors.New("no metadata before the items")
		}
	}
}

// strippedBody serves a protobuf LIST answer without its items'
// managedFields (readStripped): it reads the answer, as it arrives, on its
// first read, so a progress deadline underneath still sees every byte.
type strippedBody struct {
	answer io.ReadCloser
	// size is the size of the last stripped answer of the same path, which
	// the buffer is made for, and is set to this one's.
	size *atomic.Int64
	// held, when not nil, counts the bytes served.
	held *atomic.Int64
	// parts is what is left to serve, once the answer has been read; err
	// ends it.
	parts [][]byte
	err   error
	read  bool
}

// Read serves the stripped answer, reading the answer first.
func (b *strippedBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		b.parts, b.err = readStripped(b.answer, int(b.size.Load()))
		n := 0
		for _, part := range b.parts {
			n += len(part)
		}
		if b.err == nil {
			b.size.Store(int64(n))
			if b.held != nil {
				b.held.Add(int64(n))
			}
		}
	}
	for len(b.parts) > 0 && len(b.parts[0]) == 0 {
		b.parts = b.parts[1:]
	}
	if len(b.parts) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.EOF
	}
	n := copy(p, b.parts[0])
	b.parts[0] = b.parts[0][n:]
	return n, nil
}

// Close closes the answer.
func (b *strippedBody) Close() error {
	b.parts = nil
	return b.answer.Close()
}
