package wire

import (
	"errors"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// stripChunk is how much of an answer readStripped asks its reader for at a
// time.
const stripChunk = 64 << 10

// readStripped reads a protobuf LIST answer from r as it arrives and returns
// it without its items' managedFields, as stripManagedFields rewrites it, in
// parts to be served one after the other. Each item is stripped as soon as
// it has arrived whole, over the bytes it arrived in, so what is held is the
// stripped answer and the item being read, where reading the answer whole
// first held all of it: 170 MB for 20,000 realistic pods, 72 MB stripped.
// size is the expected size of the stripped answer, which the buffer is made
// for.
//
// Every byte read is served, but the managedFields of an item that reads
// whole (stripManagedFields' shape), and the lengths around them, the list's
// and the item's, are shortened by what was taken out. Bytes of any other
// shape (another kind of answer, a list that breaks off) are served as they
// came from there on, as the REST client would have read them; an error of
// r is returned as it is.
func readStripped(r io.Reader, size int) ([][]byte, error) {
	s := &stripStream{r: r, buf: make([]byte, 0, max(size+size/8, stripChunk)+stripChunk)}
	err := s.run()
	if err != nil && !errors.Is(err, errProtobufShape) {
		return nil, err
	}
	if err != nil {
		// From here on, as it came.
		if err := s.rest(); err != nil {
			return nil, err
		}
	}
	return s.parts(), nil
}

// stripStream is readStripped's state. buf[:w] is what is served, so far;
// buf[rd:] what has arrived and is not read yet (w <= rd: the bytes between
// are free, what was taken out or was moved to w).
type stripStream struct {
	r     io.Reader
	buf   []byte
	w, rd int
	eof   bool
	// lists are the lists of the answer: where each one's length was
	// written in buf, and what was taken out of it.
	lists []strippedList
}

// strippedList is a list of an answer and what was taken out of it.
type strippedList struct {
	// lenAt and lenEnd delimit its length's varint in buf[:w], which says
	// length; removed bytes of it were taken out.
	lenAt, lenEnd   int
	length, removed int
}

// more reads the next bytes of the answer, after moving what is left unread
// to w; io.EOF once it has ended.
func (s *stripStream) more() error {
	if s.eof {
		return io.EOF
	}
	if s.rd > s.w {
		n := copy(s.buf[s.w:], s.buf[s.rd:])
		s.buf = s.buf[:s.w+n]
		s.rd = s.w
	}
	if cap(s.buf)-len(s.buf) < stripChunk {
		grown := make([]byte, len(s.buf), 2*cap(s.buf)+stripChunk)
		copy(grown, s.buf)
		s.buf = grown
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err == io.EOF {
		s.eof = true
		if n > 0 {
			return nil
		}
	}
	return err
}

// field returns the field at rd once it has arrived whole: its number, wire
// type, the length of its tag and of the whole field, reading more of the
// answer as needed. io.EOF means the answer ended cleanly before it.
func (s *stripStream) field() (num protowire.Number, typ protowire.Type, tagLen, n int, err error) {
	for {
		avail := s.buf[s.rd:]
		f, _, ferr := nextField(avail)
		if ferr == nil {
			return f.num, f.wire, len(f.tag), len(f.all), nil
		}
		if complete(avail) {
			return 0, 0, 0, 0, errProtobufShape
		}
		if err := s.more(); err != nil {
			if err == io.EOF {
				if len(s.buf) == s.rd {
					return 0, 0, 0, 0, io.EOF
				}
				return 0, 0, 0, 0, errProtobufShape
			}
			return 0, 0, 0, 0, err
		}
	}
}

// complete reports whether b holds a field that more bytes would not make
// readable: a tag or a length that reads and is wrong, or a field whose
// value has arrived whole yet does not read.
func complete(b []byte) bool {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		// Cut short (more may complete it) or not a varint at all.
		return len(b) >= protowire.SizeVarint(1<<63)
	}
	if num > maxFieldNumber {
		return true
	}
	switch typ {
	case protowire.VarintType:
		return len(b[n:]) >= protowire.SizeVarint(1<<63)
	case protowire.Fixed32Type, protowire.Fixed64Type:
		return false
	case protowire.BytesType:
		v, m := protowire.ConsumeVarint(b[n:])
		if m < 0 {
			return len(b[n:]) >= protowire.SizeVarint(1<<63)
		}
		return v > 1<<31 || len(b[n+m:]) >= int(v)
	}
	return true
}

// copyField serves the n bytes at rd as they came.
func (s *stripStream) copyField(n int) {
	copy(s.buf[s.w:], s.buf[s.rd:s.rd+n])
	s.w += n
	s.rd += n
}

// run reads the envelope's fields, and the items of each list in it.
func (s *stripStream) run() error {
	for len(s.buf) < len(protobufMagic) {
		if err := s.more(); err != nil {
			if err == io.EOF {
				return errProtobufShape
			}
			return err
		}
	}
	if string(s.buf[:len(protobufMagic)]) != string(protobufMagic) {
		return errProtobufShape
	}
	s.w, s.rd = len(protobufMagic), len(protobufMagic)
	for {
		// A list's header arrives long before its end: its tag and length
		// are read alone, its items one by one.
		if err := s.listHeader(); err == nil {
			if err := s.list(); err != nil {
				return err
			}
			continue
		} else if !errors.Is(err, errNotList) {
			return err
		}
		_, _, _, n, err := s.field()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		s.copyField(n)
	}
}

// errNotList says that the envelope's next field is not a list.
var errNotList = errors.New("not a list")

// listHeader serves the tag and length of the list at rd, when the
// envelope's next field is one, and starts it in lists.
func (s *stripStream) listHeader() error {
	for {
		b := s.buf[s.rd:]
		num, typ, n := protowire.ConsumeTag(b)
		if n >= 0 {
			if num != unknownRawField || typ != protowire.BytesType {
				return errNotList
			}
			v, m := protowire.ConsumeVarint(b[n:])
			if m >= 0 {
				if v > 1<<31 {
					return errProtobufShape
				}
				copy(s.buf[s.w:], b[:n+m])
				s.lists = append(s.lists, strippedList{lenAt: s.w + n, lenEnd: s.w + n + m, length: int(v)})
				s.w += n + m
				s.rd += n + m
				return nil
			}
		}
		if complete(b) {
			return errNotList
		}
		if err := s.more(); err != nil {
			if err == io.EOF {
				return errNotList
			}
			return err
		}
	}
}

// list serves the fields of the list begun last, its items stripped.
func (s *stripStream) list() error {
	l := &s.lists[len(s.lists)-1]
	for left := l.length; left > 0; {
		num, typ, tagLen, n, err := s.field()
		if err == io.EOF {
			return errProtobufShape
		}
		if err != nil {
			return err
		}
		if n > left {
			return errProtobufShape
		}
		left -= n
		if num != listItemsField || typ != protowire.BytesType {
			s.copyField(n)
			continue
		}
		// The item: its tag, its length, its bytes.
		field := s.buf[s.rd : s.rd+n]
		_, m := protowire.ConsumeVarint(field[tagLen:])
		item := field[tagLen+m:]
		size, err := strippedSize(item, levelItem)
		if err != nil || size == len(item) {
			s.copyField(n)
			continue
		}
		out := append(s.buf[:s.w], field[:tagLen]...)
		out = protowire.AppendVarint(out, uint64(size))
		if out, err = writeStripped(out, item, levelItem); err != nil {
			return err
		}
		l.removed += n - (len(out) - s.w)
		s.w = len(out)
		s.rd += n
	}
	return nil
}

// rest serves the rest of the answer as it comes.
func (s *stripStream) rest() error {
	for {
		s.copyField(len(s.buf) - s.rd)
		if err := s.more(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// parts is what is served: buf[:w], each list's length rewritten where
// something was taken out of it.
func (s *stripStream) parts() [][]byte {
	out := s.buf[:s.w]
	var parts [][]byte
	at := 0
	for _, l := range s.lists {
		if l.removed == 0 {
			continue
		}
		parts = append(parts, out[at:l.lenAt], protowire.AppendVarint(nil, uint64(l.length-l.removed)))
		at = l.lenEnd
	}
	return append(parts, out[at:])
}
