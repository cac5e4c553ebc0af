package mcp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// cursor is where an answer goes on: passed back, it continues the same
// question after the last item returned. Questions page by key (the last
// item's place in the answer's order, so objects created or deleted between
// two calls shift nothing), relations by position, and the changes tool by
// the feed's sequence number.
type cursor struct {
	// Question is the signature of the arguments the cursor belongs to.
	Question string `json:"q"`
	// After is the key of the last item returned.
	After string `json:"k,omitempty"`
	// Offset is the position of the next item.
	Offset int `json:"o,omitempty"`
	// Feed and Seq are a held feed and the sequence number of its next
	// change.
	Feed string `json:"f,omitempty"`
	Seq  int64  `json:"s,omitempty"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a cursor of question; "" is none.
func decodeCursor(s, question string) (*cursor, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return nil, badArgument("cursor %q is not one this server gave", s)
	}
	if c.Question != question {
		return nil, badArgument("cursor belongs to another question: pass it with the same arguments as the call that returned it")
	}
	return &c, nil
}

// signature names a question by its arguments, those that page excluded.
func signature(tool string, args any) string {
	b, _ := json.Marshal(struct {
		Tool string `json:"tool"`
		Args any    `json:"args"`
	}{tool, args})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// limitOf is a call's limit: the default when not given.
func (s *Server) limitOf(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, badArgument("limit must not be negative")
	case limit == 0:
		return s.cfg.Limit, nil
	case limit > MaxLimit:
		return 0, badArgument("limit may be at most %d", MaxLimit)
	}
	return limit, nil
}

// fit returns how many of the first n items an answer holds within
// maxBytes of JSON: size(k) is the answer's size with k of them. It is at
// least 1 when n is, so that an answer always moves on; an item larger than
// the cap on its own is the caller's to shrink.
func fit(n, maxBytes int, size func(k int) int) int {
	if n == 0 || size(n) <= maxBytes {
		return n
	}
	// The largest k in [1, n) whose answer fits.
	k := sort.Search(n, func(k int) bool { return k > 0 && size(k) > maxBytes })
	return max(k-1, 1)
}

// jsonSize is the size of v's JSON.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// paging returns the page size a call asks for (limitOf), the signature of
// its question (tool and question, its arguments without the cursor, the limit
// and what only bounds the wait) and the cursor it continues from, if any.
func (s *Server) paging(tool string, limit int, cursorText string, question any) (int, string, *cursor, error) {
	limit, err := s.limitOf(limit)
	if err != nil {
		return 0, "", nil, err
	}
	sig := signature(tool, question)
	cur, err := decodeCursor(cursorText, sig)
	if err != nil {
		return 0, "", nil, err
	}
	return limit, sig, cur, nil
}

// pager is the page a paged call asks for: its size, the signature of its
// question, and the cursor it goes on from (nil: the first page).
type pager struct {
	limit int
	sig   string
	cur   *cursor
}

// open starts a paged call of tool: the page it asks for (paging: question
// is its arguments without those that page the answer or bound its wait)
// and the call over the clusters sc names. The caller ends the call with
// done.
func (s *Server) open(tool string, limit int, cursorText string, question any, sc scope) (*call, pager, error) {
	limit, sig, cur, err := s.paging(tool, limit, cursorText, question)
	if err != nil {
		return nil, pager{}, err
	}
	sc.signature = sig
	c, err := s.newCall(sc)
	if err != nil {
		return nil, pager{}, err
	}
	return c, pager{limit: limit, sig: sig, cur: cur}, nil
}

// byPosition is the page of an answer of n items paged by position: where
// it starts and ends, and the cursor after its first k items, "" when the
// answer ends there.
func (p pager) byPosition(n int) (start, end int, next func(k int) string) {
	if p.cur != nil {
		start = min(p.cur.Offset, n)
	}
	return start, min(n, start+p.limit), func(k int) string {
		if start+k >= n {
			return ""
		}
		return cursor{Question: p.sig, Offset: start + k}.encode()
	}
}

// byKey is the page of an answer of n items paged by key (key(i) is the
// i-th item's, in order): it starts after the cursor's key, so that items
// created or deleted between two calls shift nothing.
func (p pager) byKey(n int, key func(i int) string) (start, end int, next func(k int) string) {
	if p.cur != nil {
		start = sort.Search(n, func(i int) bool { return key(i) > p.cur.After })
	}
	return start, min(n, start+p.limit), func(k int) string {
		if start+k >= n || k == 0 {
			return ""
		}
		return cursor{Question: p.sig, After: key(start + k - 1)}.encode()
	}
}

// answerPage is an MCP answer: each embeds a Page.
type answerPage[A any] interface {
	*A
	GetPage() *v1alpha1.Page
}

// fitPage returns answer holding the first k items of page, as many as fit
// in maxBytes (fit). The page starts at start of the answer's total items;
// fill sets a copy of answer's items to the first k, once the copy's Page
// is set, and next words the cursor after them.
func fitPage[A any, P answerPage[A], T any](maxBytes int, answer P, start, total int, page []T, fill func(out P, items []T), next func(k int) string) P {
	build := func(k int) P {
		out := P(new(A))
		*out = *answer
		p := out.GetPage()
		p.Count, p.Total, p.Truncated, p.NextCursor = k, total, start+k < total, next(k)
		fill(out, page[:k])
		return out
	}
	return build(fit(len(page), maxBytes, func(k int) int { return jsonSize(build(k)) }))
}

// objectArg splits an object argument, KIND/NAME.
func objectArg(object string) (typ, name string, err error) {
	typ, name, ok := strings.Cut(object, "/")
	if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
		return "", "", badArgument("object must be KIND/NAME, e.g. deployment/web, got %q", object)
	}
	return typ, name, nil
}
