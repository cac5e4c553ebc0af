package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The fields of ObjectMeta ReadListKeys reads (meta/v1 generated.proto).
const (
	objectMetaNameField            protowire.Number = 1
	objectMetaNamespaceField       protowire.Number = 3
	objectMetaResourceVersionField protowire.Number = 6
	// listMetaField is a list's ListMeta; unknownContentEncodingField is a
	// runtime.Unknown's contentEncoding, which the API server leaves empty.
	listMetaField               protowire.Number = 1
	unknownContentEncodingField protowire.Number = 3
)

// ReadListKeys reads a protobuf LIST answer (the magic number, a
// runtime.Unknown and the list in it, PartialObjectMetadataList or any list
// whose items carry their ObjectMeta as field 1) from r as it arrives, and
// hands item the namespace, name and resourceVersion of each item in the
// order the server wrote them, decoding nothing else: the bytes are valid only
// during the call. item returning false stops the reading (stopped); the
// answer's ListMeta is returned when the whole answer was read. An answer that
// is not of that shape is an error (errProtobufShape), as is one that ends
// early.
//
// It is the comparison of a warm store with a consistent LIST of its objects
// (pkg/pool, the freshness proof): a realistic pod's metadata is about 6 KB of
// protobuf, nine tenths of it managedFields, and these three fields are what
// the comparison needs of it.
func ReadListKeys(r io.Reader, item func(namespace, name, resourceVersion []byte) bool) (lm metav1.ListMeta, stopped bool, err error) {
	s := &pbStream{r: bufio.NewReaderSize(bodyReader{r}, 64<<10), left: -1}
	magic := make([]byte, len(protobufMagic))
	if _, err := io.ReadFull(s.r, magic); err != nil {
		return lm, false, shapeOrRead(err)
	}
	if !bytes.Equal(magic, protobufMagic) {
		return lm, false, errProtobufShape
	}
	var buf []byte
	var keys itemKeys
	sawList := false
	for {
		num, typ, err := s.tag()
		if err == io.EOF {
			break
		}
		if err != nil {
			return lm, false, err
		}
		switch {
		case num == unknownRawField && typ == protowire.BytesType && !sawList:
			sawList = true
			n, err := s.length()
			if err != nil {
				return lm, false, err
			}
			list := &pbStream{r: s.r, left: int64(n)}
			for list.left > 0 {
				num, typ, err := list.tag()
				if err != nil {
					return lm, false, shapeOrRead(err)
				}
				if typ != protowire.BytesType {
					if err := list.skip(typ); err != nil {
						return lm, false, err
					}
					continue
				}
				n, err := list.length()
				if err != nil {
					return lm, false, err
				}
				switch num {
				case listMetaField:
					if cap(buf) < n {
						buf = make([]byte, n)
					}
					if err := list.read(buf[:n]); err != nil {
						return lm, false, err
					}
					if err := lm.Unmarshal(buf[:n]); err != nil {
						return lm, false, errProtobufShape
					}
				case listItemsField:
					it := &pbStream{r: s.r, left: int64(n)}
					list.left -= int64(n)
					if err := keys.item(it); err != nil {
						return lm, false, err
					}
					if !item(keys.namespace, keys.name, keys.resourceVersion) {
						return lm, true, nil
					}
				default:
					if err := list.discard(n); err != nil {
						return lm, false, err
					}
				}
			}
		case num == unknownContentEncodingField && typ == protowire.BytesType:
			n, err := s.length()
			if err != nil {
				return lm, false, err
			}
			if n != 0 {
				// An encoded list (the server writes none) is not read here.
				return lm, false, errProtobufShape
			}
		default:
			if err := s.skip(typ); err != nil {
				return lm, false, err
			}
		}
	}
	if !sawList {
		return lm, false, errProtobufShape
	}
	return lm, false, nil
}

// itemKeys reads the namespace, name and resourceVersion of list items, into
// buffers of its own that each item reuses.
type itemKeys struct {
	namespace, name, resourceVersion []byte
}

// item reads one list item from it: its ObjectMeta (field 1) for the three
// fields, every other field skipped unread. A message's fields may repeat,
// the last one counting; the server writes each once.
func (k *itemKeys) item(it *pbStream) error {
	k.namespace, k.name, k.resourceVersion = k.namespace[:0], k.name[:0], k.resourceVersion[:0]
	for it.left > 0 {
		num, typ, err := it.tag()
		if err != nil {
			return shapeOrRead(err)
		}
		if num != objectMetadataField || typ != protowire.BytesType {
			if err := it.skip(typ); err != nil {
				return err
			}
			continue
		}
		m, err := it.length()
		if err != nil {
			return err
		}
		meta := &pbStream{r: it.r, left: int64(m)}
		it.left -= int64(m)
		for meta.left > 0 {
			num, typ, err := meta.tag()
			if err != nil {
				return shapeOrRead(err)
			}
			var into *[]byte
			switch num {
			case objectMetaNameField:
				into = &k.name
			case objectMetaNamespaceField:
				into = &k.namespace
			case objectMetaResourceVersionField:
				into = &k.resourceVersion
			}
			if into == nil {
				if err := meta.skip(typ); err != nil {
					return err
				}
				continue
			}
			if typ != protowire.BytesType {
				return errProtobufShape
			}
			n, err := meta.length()
			if err != nil {
				return err
			}
			if cap(*into) < n {
				*into = make([]byte, n)
			}
			*into = (*into)[:n]
			if err := meta.read(*into); err != nil {
				return err
			}
		}
	}
	return nil
}

// pbStream reads the fields of one protobuf message from r, left bytes of it
// (-1: up to the end of r).
type pbStream struct {
	r    *bufio.Reader
	left int64
}

// tag reads the next field's tag; io.EOF when the message (left -1) ends
// cleanly there.
func (s *pbStream) tag() (protowire.Number, protowire.Type, error) {
	v, err := s.varint()
	if err != nil {
		return 0, 0, err
	}
	num, typ := protowire.DecodeTag(v)
	if num < 1 || num > maxFieldNumber {
		return 0, 0, errProtobufShape
	}
	return num, typ, nil
}

// varint reads a varint.
func (s *pbStream) varint() (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		if s.left == 0 || i == 10 {
			return 0, errProtobufShape
		}
		c, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && i == 0 && s.left < 0 {
				return 0, io.EOF
			}
			return 0, shapeOrRead(err)
		}
		if s.left > 0 {
			s.left--
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
}

// length reads the length of a length-delimited field, which must fit in
// what is left of the message.
func (s *pbStream) length() (int, error) {
	v, err := s.varint()
	if err != nil {
		return 0, shapeOrRead(err)
	}
	if v > 1<<31 || (s.left >= 0 && int64(v) > s.left) {
		return 0, errProtobufShape
	}
	return int(v), nil
}

// read reads len(p) bytes of the message.
func (s *pbStream) read(p []byte) error {
	if _, err := io.ReadFull(s.r, p); err != nil {
		return shapeOrRead(err)
	}
	if s.left > 0 {
		s.left -= int64(len(p))
	}
	return nil
}

// skip reads past the value of a field of type typ.
func (s *pbStream) skip(typ protowire.Type) error {
	var n int
	switch typ {
	case protowire.VarintType:
		_, err := s.varint()
		return shapeOrRead(err)
	case protowire.Fixed32Type:
		n = 4
	case protowire.Fixed64Type:
		n = 8
	case protowire.BytesType:
		var err error
		if n, err = s.length(); err != nil {
			return err
		}
	default:
		return errProtobufShape
	}
	return s.discard(n)
}

// discard reads past n bytes of the message.
func (s *pbStream) discard(n int) error {
	if s.left >= 0 && int64(n) > s.left {
		return errProtobufShape
	}
	if _, err := s.r.Discard(n); err != nil {
		return shapeOrRead(err)
	}
	if s.left > 0 {
		s.left -= int64(n)
	}
	return nil
}

// shapeOrRead turns an answer that ends early into errProtobufShape and
// keeps the body's own read errors (a cancelled request, a connection lost)
// as they are.
func shapeOrRead(err error) error {
	if errors.As(err, new(bodyError)) {
		return err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errProtobufShape
	}
	return err
}

// bodyReader marks every error of an answer's body but its clean end
// (bodyError): an HTTP/2 stream whose connection closed mid-answer reads
// io.ErrUnexpectedEOF, the same error io.ReadFull makes of an answer that
// ends cleanly inside a field, and only the second one is of the answer's
// shape. The first is the connection's, which the caller retries and words as
// "the connection ... was closed".
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = bodyError{err}
	}
	return n, err
}

// bodyError is an error of the body itself, as bodyReader read it. It reads
// and unwraps as that error.
type bodyError struct{ err error }

func (e bodyError) Error() string { return e.err.Error() }
func (e bodyError) Unwrap() error { return e.err }
