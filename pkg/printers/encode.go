package printers

import (
	"bytes"
	"io"
	"runtime"
	"sync"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// encodeChunk is how many items one worker encodes at a time: large enough to
// make hand-off cheap, small enough to keep the output flowing.
const encodeChunk = 64

// encodeOrdered encodes n items on every core and hands the results to write in
// item order. encode appends item i's bytes to buf; write receives one chunk's
// bytes at a time. JSON encoding and indenting is half the work of `-o json` on a
// big list, and it is embarrassingly parallel; only the writing is ordered. At
// most a few chunks per worker are in flight, so memory stays bounded.
func encodeOrdered(n int, encode func(i int, buf *bytes.Buffer) error, write func(b []byte) error) error {
	workers := runtime.GOMAXPROCS(0)
	chunks := (n + encodeChunk - 1) / encodeChunk
	if workers < 2 || chunks < 2 {
		buf := getBuffer()
		defer putBuffer(buf)
		for i := 0; i < n; i++ {
			if err := encode(i, buf); err != nil {
				return err
			}
		}
		return write(buf.Bytes())
	}

	type result struct {
		buf *bytes.Buffer
		err error
	}
	// Each chunk gets a channel, created in order, so the writer can wait for
	// chunk k while later chunks are still being encoded.
	pending := make(chan chan *result, 2*workers)
	jobs := make(chan func(), 2*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				job()
			}
		}()
	}
	go func() {
		defer close(jobs)
		defer close(pending)
		for c := 0; c < chunks; c++ {
			out := make(chan *result, 1)
			start, end := c*encodeChunk, min((c+1)*encodeChunk, n)
			select {
			case pending <- out:
			case <-stop:
				return
			}
			jobs <- func() {
				r := &result{buf: getBuffer()}
				for i := start; i < end && r.err == nil; i++ {
					r.err = encode(i, r.buf)
				}
				out <- r
			}
		}
	}()

	var err error
	for out := range pending {
		r := <-out
		if err == nil {
			err = r.err
		}
		if err == nil {
			err = write(r.buf.Bytes())
		}
		putBuffer(r.buf)
		if err != nil {
			select {
			case <-stop:
			default:
				close(stop)
			}
		}
	}
	wg.Wait()
	return err
}

// buffers holds the buffers chunks are encoded into, and scratch the
// buffers one object is encoded into, for use again: growing a fresh buffer
// per chunk and per object allocated more than twice the size of the
// output. They are kept apart so that a chunk does not get an object's
// small buffer and grow it again.
var (
	buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	scratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

// putBuffer returns b to the pool, unless it grew too large to keep.
func putBuffer(b *bytes.Buffer) { putTo(&buffers, b) }

func getScratch() *bytes.Buffer  { return scratch.Get().(*bytes.Buffer) }
func putScratch(b *bytes.Buffer) { putTo(&scratch, b) }

func putTo(pool *sync.Pool, b *bytes.Buffer) {
	if b.Cap() > 16<<20 {
		return
	}
	b.Reset()
	pool.Put(b)
}

// jsonDoc is a JSON document as it is to be written: literal text, and the
// objects in it, each encoded and indented at its place when the document
// is written, on every core, in order. A document of many small arrays (the
// members of a thousand groups) is encoded as one stream, not one array at
// a time on one core.
type jsonDoc struct {
	// enc keeps the objects' encodings, when set (Encodings).
	enc    *Encodings
	pieces []jsonPiece
	// text is the literal text after the last object so far.
	text []byte
}

// jsonPiece is an object of a jsonDoc and the literal text before it.
type jsonPiece struct {
	before []byte
	obj    k8sruntime.Object
	gvk    schema.GroupVersionKind
	prefix string
}

func (d *jsonDoc) WriteString(s string) { d.text = append(d.text, s...) }
func (d *jsonDoc) Write(b []byte)       { d.text = append(d.text, b...) }

// object adds obj, to be written as -o json writes it, its lines after the
// first at prefix.
func (d *jsonDoc) object(obj k8sruntime.Object, gvk schema.GroupVersionKind, prefix string) {
	d.pieces = append(d.pieces, jsonPiece{before: d.text, obj: obj, gvk: gvk, prefix: prefix})
	d.text = nil
}

// writeTo writes the document to w.
func (d *jsonDoc) writeTo(w io.Writer) error {
	err := encodeOrdered(len(d.pieces), func(i int, buf *bytes.Buffer) error {
		p := &d.pieces[i]
		buf.Write(p.before)
		return appendJSON(buf, p.obj, p.gvk, p.prefix, d.enc)
	}, func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	_, err = w.Write(d.text)
	return err
}
