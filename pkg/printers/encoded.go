package printers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/s2"
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
//
// The encodings are kept compressed (s2 blocks), each kind's with a
// dictionary made of its first encodings: the objects of one kind in one
// cluster share most of their bytes (keys, images, volumes, tolerations),
// so that a pod's 6.9 KB are kept in about 350 bytes where s2 alone keeps
// 3.4 KB. They are decompressed for each answer into the printer's buffer,
// faster than they were encoded.
type Encodings struct {
	mu    sync.Mutex
	byUID map[encodingKey]*encoding
	kinds map[schema.GroupVersionKind]*kindDict
	// bytes are the entries' compressed bytes and the kinds' dictionaries
	// and samples.
	bytes int64
}

// encodingKey is an object's UID and the kind it is printed as: the entry
// of an object is replaced when a newer one of it is encoded.
type encodingKey struct {
	uid types.UID
	gvk schema.GroupVersionKind
}

type encoding struct {
	obj runtime.Object
	// block is the s2 block of the encoding, compressed with dict (nil:
	// with none); size and sum are the length and CRC-32C of the encoding,
	// checked before it is used, since an s2 block has no checksum.
	block []byte
	dict  *s2.Dict
	size  int
	sum   uint32
	used  atomic.Int64
}

// kindDict is the s2 dictionary of a kind's encodings: its first encodings,
// once they add up to dictBytes. Until then they are its sample, and its
// encodings are compressed without one.
type kindDict struct {
	sample []byte
	dict   *s2.Dict
}

// dictBytes is how much of a kind's first encodings makes its dictionary:
// the most an s2 dictionary holds, nine pods. One pod's encoding is almost
// as good a dictionary for pods of the same template (355 against 353
// bytes a pod, clusterPods), more of them cover more templates.
const dictBytes = s2.MaxDictSize

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewEncodings returns Encodings that keep each object's encoding until ctx
// ends. An encoding is used again only for the same object (the same
// pointer: informer objects are never modified, an update is a new object)
// printed as the same kind; an object not printed for unusedFor is
// forgotten, and with it the object, and a kind's dictionary with its last
// object. Objects without a UID (none from the API server) are encoded
// every time.
func NewEncodings(ctx context.Context, unusedFor time.Duration) *Encodings {
	c := &Encodings{byUID: map[encodingKey]*encoding{}, kinds: map[schema.GroupVersionKind]*kindDict{}}
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

// Kept reports how many objects' encodings are kept and the bytes they are
// kept in: compressed, with their kinds' dictionaries.
func (c *Encodings) Kept() (objects int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byUID), c.bytes
}

// compactJSON appends json.Marshal's bytes of obj printed as gvk to scratch
// and returns them, or c's kept encoding of obj decompressed into scratch.
// They are valid until scratch is used again.
func compactJSON(scratch *bytes.Buffer, obj runtime.Object, gvk schema.GroupVersionKind, c *Encodings) ([]byte, error) {
	var key encodingKey
	if c != nil {
		key = keyOfEncoding(obj, gvk)
		if key.uid != "" {
			if b := c.get(key, obj, scratch); b != nil {
				return b, nil
			}
		}
	}
	// The Encoder adds only a newline to json.Marshal's bytes, into a
	// buffer used again.
	scratch.Reset()
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

// get decompresses the kept encoding of obj into scratch's free space and
// returns it, or nil when none is kept or it does not decompress to the
// bytes it was made of (then it is encoded again and replaced).
func (c *Encodings) get(key encodingKey, obj runtime.Object, scratch *bytes.Buffer) []byte {
	c.mu.Lock()
	e := c.byUID[key]
	c.mu.Unlock()
	if e == nil || e.obj != obj {
		return nil
	}
	if n, err := s2.DecodedLen(e.block); err != nil || n != e.size {
		return nil
	}
	scratch.Reset()
	scratch.Grow(e.size)
	var b []byte
	var err error
	if e.dict != nil {
		b, err = e.dict.Decode(scratch.AvailableBuffer(), e.block)
	} else {
		b, err = s2.Decode(scratch.AvailableBuffer(), e.block)
	}
	if err != nil || len(b) != e.size || crc32.Checksum(b, castagnoli) != e.sum {
		return nil
	}
	e.used.Store(time.Now().UnixNano())
	return b
}

func (c *Encodings) put(key encodingKey, obj runtime.Object, compact []byte) {
	dict := c.dictionary(key.gvk, compact)
	buf := getScratch()
	buf.Grow(s2.MaxEncodedLen(len(compact)))
	var block []byte
	if dict != nil {
		block = dict.Encode(buf.AvailableBuffer(), compact)
	} else {
		block = s2.Encode(buf.AvailableBuffer(), compact)
	}
	e := &encoding{obj: obj, block: bytes.Clone(block), dict: dict, size: len(compact), sum: crc32.Checksum(compact, castagnoli)}
	putScratch(buf)
	e.used.Store(time.Now().UnixNano())
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byUID[key]; old != nil {
		c.bytes -= int64(len(old.block))
	}
	c.byUID[key] = e
	c.bytes += int64(len(e.block))
}

// dictionary returns the dictionary of gvk's encodings, nil while there is
// none yet: then compact is added to its sample, which becomes the
// dictionary once it holds dictBytes.
func (c *Encodings) dictionary(gvk schema.GroupVersionKind, compact []byte) *s2.Dict {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.kinds[gvk]
	if k == nil {
		k = &kindDict{}
		c.kinds[gvk] = k
	}
	if k.dict != nil {
		return k.dict
	}
	add := compact[:min(len(compact), dictBytes-len(k.sample))]
	k.sample = append(k.sample, add...)
	c.bytes += int64(len(add))
	if len(k.sample) == dictBytes {
		// An encoding starts as the first one does ({"metadata":{"name":
		// for most kinds): its first match is looked for there.
		k.dict = s2.MakeDict(k.sample, k.sample[:32])
		k.sample = nil
	}
	return nil
}

// forget drops the encodings not used since before, and the dictionaries
// of the kinds with none left.
func (c *Encodings) forget(before time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	left := map[schema.GroupVersionKind]bool{}
	for k, e := range c.byUID {
		if e.used.Load() < before.UnixNano() {
			c.bytes -= int64(len(e.block))
			delete(c.byUID, k)
		} else {
			left[k.gvk] = true
		}
	}
	for gvk, k := range c.kinds {
		if !left[gvk] {
			c.bytes -= int64(len(k.sample))
			if k.dict != nil {
				c.bytes -= dictBytes
			}
			delete(c.kinds, gvk)
		}
	}
}
