package printers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Encodings keeps each object's JSON encoding (json.Marshal's compact bytes)
// for the next answer that prints it: a warm cache process answers -o json
// from the same informer objects again and again, and encoding them was most
// of such an answer (20,000 pods of 12 KB: 442 MB of indented JSON, two
// thirds of its time spent encoding). The cache process owns one and hands
// it to the printers of its answers (Options.Encodings); a nil *Encodings
// (a direct run) keeps nothing. It is safe for concurrent use.
type Encodings struct {
	mu    sync.Mutex
	byUID map[encodingKey]*encoding
	bytes int64
}

// encodingKey is an object's UID and the kind it is printed as: the entry
// of an object is replaced when a newer one of it is encoded.
type encodingKey struct {
	uid types.UID
	gvk schema.GroupVersionKind
}

type encoding struct {
	obj     runtime.Object
	compact []byte
	used    atomic.Int64
}

// NewEncodings returns Encodings that keep each object's encoding until ctx
// ends. An encoding is used again only for the same object (the same
// pointer: informer objects are never modified, an update is a new object)
// printed as the same kind; an object not printed for unusedFor is
// forgotten, and with it the object. Objects without a UID (none from the
// API server) are encoded every time.
func NewEncodings(ctx context.Context, unusedFor time.Duration) *Encodings {
	c := &Encodings{byUID: map[encodingKey]*encoding{}}
	go func() {
		t := time.NewTicker(max(unusedFor/4, time.Second))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				c.forget(time.Now().Add(time.Hour))
				return
			case now := <-t.C:
				c.forget(now.Add(-unusedFor))
			}
		}
	}()
	return c
}

// Kept reports how many objects' encodings are kept and their bytes.
func (c *Encodings) Kept() (objects int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byUID), c.bytes
}

// compactJSON appends json.Marshal's bytes of obj printed as gvk to scratch
// and returns them, or c's kept encoding of obj.
func compactJSON(scratch *bytes.Buffer, obj runtime.Object, gvk schema.GroupVersionKind, c *Encodings) ([]byte, error) {
	var key encodingKey
	if c != nil {
		key = keyOfEncoding(obj, gvk)
		if key.uid != "" {
			if b := c.get(key, obj); b != nil {
				return b, nil
			}
		}
	}
	// The Encoder adds only a newline to json.Marshal's bytes, into a
	// buffer used again.
	if err := json.NewEncoder(scratch).Encode(readOnlyPrintable(obj, gvk)); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", describe(obj), err)
	}
	compact := bytes.TrimSuffix(scratch.Bytes(), []byte("\n"))
	if c != nil && key.uid != "" {
		c.put(key, obj, compact)
	}
	return compact, nil
}

// keyOfEncoding is obj's key, with no UID when its encoding is not kept: no
// UID, or an object that is not a pointer (which could not be told from a
// changed copy).
func keyOfEncoding(obj runtime.Object, gvk schema.GroupVersionKind) encodingKey {
	if obj == nil || reflect.TypeOf(obj).Kind() != reflect.Pointer {
		return encodingKey{}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return encodingKey{}
	}
	return encodingKey{uid: m.GetUID(), gvk: gvk}
}

func (c *Encodings) get(key encodingKey, obj runtime.Object) []byte {
	c.mu.Lock()
	e := c.byUID[key]
	c.mu.Unlock()
	if e == nil || e.obj != obj {
		return nil
	}
	e.used.Store(time.Now().UnixNano())
	return e.compact
}

func (c *Encodings) put(key encodingKey, obj runtime.Object, compact []byte) {
	e := &encoding{obj: obj, compact: bytes.Clone(compact)}
	e.used.Store(time.Now().UnixNano())
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byUID[key]; old != nil {
		c.bytes -= int64(len(old.compact))
	}
	c.byUID[key] = e
	c.bytes += int64(len(e.compact))
}

// forget drops the encodings not used since before.
func (c *Encodings) forget(before time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.byUID {
		if e.used.Load() < before.UnixNano() {
			c.bytes -= int64(len(e.compact))
			delete(c.byUID, k)
		}
	}
}
