package mcp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
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
// its question (tool and sigArgs, its arguments without the cursor, the limit
// and what only bounds the wait) and the cursor it continues from, if any.
func (s *Server) paging(tool string, limit int, cursorText string, sigArgs any) (int, string, *cursor, error) {
	limit, err := s.limitOf(limit)
	if err != nil {
		return 0, "", nil, err
	}
	sig := signature(tool, sigArgs)
	cur, err := decodeCursor(cursorText, sig)
	if err != nil {
		return 0, "", nil, err
	}
	return limit, sig, cur, nil
}

// objectArg splits an object argument, KIND/NAME.
func objectArg(object string) (typ, name string, err error) {
	typ, name, ok := strings.Cut(object, "/")
	if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
		return "", "", badArgument("object must be KIND/NAME, e.g. deployment/web, got %q", object)
	}
	return typ, name, nil
}
