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

	"github.com/kubectl-idx/kubectl-idx/internal/sweep"
)

// Encodings keeps each object's -o json bytes (json.Marshal's, indented as
// -o json indents them) for the next answer that prints it: a warm cache
// process answers -o json from the same informer objects again and again,
// and encoding and indenting them was most of such an answer (20,000 pods of
// 12 KB: 442 MB of indented JSON, two thirds of its time spent encoding, most
// of the rest indenting). The cache process owns one and hands it to the
// printers of its answers (Options.Encodings); a nil *Encodings (a direct
// run) keeps nothing. It is safe for concurrent use.
//
// An object's bytes are kept as the answer that encoded it printed them,
// with the prefix of its lines (an item of a List, a member of a group): an
// answer that prints it at the same depth writes them as they are, one at
// another depth swaps the prefix after each newline, which json.Marshal
// never writes inside a string. They are kept compressed (s2 blocks), each
// kind's with a dictionary made of its first encodings: the objects of one
// kind in one cluster share most of their bytes (keys, images, volumes,
// tolerations, and the indentation), so that a pod's 19 KB of indented JSON
// are kept in about 590 bytes. They are decompressed for each answer into
// its buffer, several times faster than they were encoded and indented.
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
	// block is the s2 block of the object's indented bytes, compressed with
	// dict (nil: with none); prefix is what follows each of their newlines
	// before the indentation; size and sum are their length and CRC-32C,
	// checked before they are used, since an s2 block has no checksum.
	block  []byte
	dict   *s2.Dict
	prefix string
	size   int
	sum    uint32
	used   atomic.Int64
}

// kindDict is the s2 dictionary of a kind's encodings: its first encodings,
// once they add up to dictBytes. Until then they are its sample, and its
// encodings are compressed without one.
type kindDict struct {
	sample []byte
	dict   *s2.Dict
}

// dictBytes is how much of a kind's first encodings makes its dictionary:
// the most an s2 dictionary holds, three pods indented as the items of a
// List. One pod's encoding is almost as good a dictionary for pods of the
// same template, more of them cover more templates.
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
	sweep.Run(ctx, unusedFor, c.forget)
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

// appendJSON appends obj printed as gvk to buf as -o json writes it at
// prefix: json.Marshal's bytes indented by four spaces, the lines after the
// first at prefix. They are c's kept bytes of obj when it has them; otherwise
// obj is encoded, and c keeps what was written.
func appendJSON(buf *bytes.Buffer, obj runtime.Object, gvk schema.GroupVersionKind, prefix string, c *Encodings) error {
	var key encodingKey
	if c != nil {
		key = keyOfEncoding(obj, gvk)
		if key.uid != "" && c.appendKept(buf, key, obj, prefix) {
			return nil
		}
	}
	scratch := getScratch()
	defer putScratch(scratch)
	// The Encoder adds only a newline to json.Marshal's bytes, into a
	// buffer used again.
	if err := json.NewEncoder(scratch).Encode(readOnlyPrintable(obj, gvk)); err != nil {
		return fmt.Errorf("encoding %s: %w", describe(obj), err)
	}
	compact := bytes.TrimSuffix(scratch.Bytes(), []byte("\n"))
	// Room for the object indented, so that it is written in place: a
	// pod's indented JSON at a group's depth is twice its compact size.
	start := buf.Len()
	buf.Grow(len(prefix) + 3*len(compact))
	buf.Write(appendIndented(buf.AvailableBuffer(), compact, prefix, "    "))
	if c != nil && key.uid != "" {
		c.put(key, obj, buf.Bytes()[start:], prefix)
	}
	return nil
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

// appendKept appends c's kept bytes of obj, at prefix, to buf and reports
// whether it did. It does not when none are kept or they do not decompress
// to the bytes they were made of (then obj is encoded again and its entry
// replaced); buf is then as it was.
func (c *Encodings) appendKept(buf *bytes.Buffer, key encodingKey, obj runtime.Object, prefix string) bool {
	c.mu.Lock()
	e := c.byUID[key]
	c.mu.Unlock()
	if e == nil || e.obj != obj {
		return false
	}
	if n, err := s2.DecodedLen(e.block); err != nil || n != e.size {
		return false
	}
	// Kept at the prefix asked for, they are decompressed in place;
	// otherwise beside, and their prefix swapped on the way in.
	into := buf
	if e.prefix != prefix {
		into = getScratch()
		defer putScratch(into)
	}
	into.Grow(e.size)
	var b []byte
	var err error
	if e.dict != nil {
		b, err = e.dict.Decode(into.AvailableBuffer(), e.block)
	} else {
		b, err = s2.Decode(into.AvailableBuffer(), e.block)
	}
	if err != nil || len(b) != e.size || crc32.Checksum(b, castagnoli) != e.sum {
		return false
	}
	if e.prefix != prefix {
		buf.Grow(len(b) + bytes.Count(b, []byte{'\n'})*max(len(prefix)-len(e.prefix), 0))
		if b = swapPrefix(buf.AvailableBuffer(), b, e.prefix, prefix); b == nil {
			return false
		}
	}
	buf.Write(b)
	e.used.Store(time.Now().UnixNano())
	return true
}

// swapPrefix appends src, indented JSON whose every newline is followed by
// from, to dst with to in place of from, or returns nil when a newline of src
// is not followed by from.
func swapPrefix(dst, src []byte, from, to string) []byte {
	for {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			return append(dst, src...)
		}
		if !bytes.HasPrefix(src[i+1:], []byte(from)) {
			return nil
		}
		dst = append(append(dst, src[:i+1]...), to...)
		src = src[i+1+len(from):]
	}
}

// put keeps b, obj's bytes as -o json writes them at prefix.
func (c *Encodings) put(key encodingKey, obj runtime.Object, b []byte, prefix string) {
	dict := c.dictionary(key.gvk, b)
	buf := getScratch()
	buf.Grow(s2.MaxEncodedLen(len(b)))
	var block []byte
	if dict != nil {
		block = dict.Encode(buf.AvailableBuffer(), b)
	} else {
		block = s2.Encode(buf.AvailableBuffer(), b)
	}
	e := &encoding{obj: obj, block: bytes.Clone(block), dict: dict, prefix: prefix, size: len(b), sum: crc32.Checksum(b, castagnoli)}
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
// none yet: then b is added to its sample, which becomes the dictionary once
// it holds dictBytes.
func (c *Encodings) dictionary(gvk schema.GroupVersionKind, b []byte) *s2.Dict {
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
	add := b[:min(len(b), dictBytes-len(k.sample))]
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
