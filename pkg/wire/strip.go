package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// managedFields is about nine tenths of a pod's metadata as the server sends
// it (about 5.3 of 6.0 KB of metadata-only protobuf per pod on the bench's
// realistic pods), and every informer that does not keep it drops it once the
// objects are decoded. Decoding it costs more than decoding the rest: on a page of
// 2,000 realistic pods the REST client took 13 ms to read the 12 MB answer and
// 13 ms to decode it into metadata-only objects; without managedFields the
// answer is 1.4 MB and decodes in 5 ms. stripManagedFields takes it out of a
// protobuf LIST answer's bytes before the REST client reads them.

// Protobuf field numbers of the Kubernetes API (k8s.io/api and meta/v1
// generated.proto): every list has its ListMeta as field 1 and its items as
// field 2; every object of the API, PartialObjectMetadata included, has its
// ObjectMeta as field 1; ObjectMeta has managedFields as field 17. A
// runtime.Unknown, the envelope of every protobuf answer, has the object's
// bytes as field 2.
const (
	unknownRawField     = 2
	listItemsField      = 2
	objectMetadataField = 1
	managedFieldsField  = 17
)

// pbWireBytes is protobuf's wire type of length-delimited fields (messages,
// strings, bytes).
const pbWireBytes = 2

// errProtobufShape is returned for bytes that are not a protobuf list answer of
// the shape stripManagedFields expects.
var errProtobufShape = errors.New("not a protobuf list answer of the expected shape")

// stripManagedFields returns the protobuf LIST answer data without the
// managedFields of its items' metadata (only the items' own metadata: a pod
// template's inside a Deployment's spec is kept), written over data itself:
// the answer only shrinks, and each byte is written at or before the place it
// is read from. It returns data untouched when there is nothing to take out,
// and an error, leaving data untouched, when data is not a list answer of the
// expected shape: the whole answer is read through before anything is written.
func stripManagedFields(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, protobufMagic) {
		return nil, errProtobufShape
	}
	envelope := data[len(protobufMagic):]
	size, err := strippedSize(envelope, levelEnvelope)
	if err != nil {
		return nil, err
	}
	if size == len(envelope) {
		return data, nil
	}
	return writeStripped(data[:len(protobufMagic)], envelope, levelEnvelope)
}

// The levels of an answer stripManagedFields descends through: the envelope,
// the list in it, each item of the list, each item's ObjectMeta.
const (
	levelEnvelope = iota
	levelList
	levelItem
	levelObjectMeta
)

// descend returns the level below level that field num of a message at level
// holds, or -1 when the field is copied as it is. drop reports a field left
// out.
func descend(level, num int) (below int, drop bool) {
	switch {
	case level == levelEnvelope && num == unknownRawField:
		return levelList, false
	case level == levelList && num == listItemsField:
		return levelItem, false
	case level == levelItem && num == objectMetadataField:
		return levelObjectMeta, false
	case level == levelObjectMeta && num == managedFieldsField:
		return -1, true
	}
	return -1, false
}

// pbField is one field of a protobuf message.
type pbField struct {
	num, wire int
	// all is the whole field, tag included; content is the value of a
	// length-delimited field, without its length.
	all, content []byte
	// tag is the field's tag bytes.
	tag []byte
}

// nextField reads the field at the start of b and returns it and the rest of b.
func nextField(b []byte) (pbField, []byte, error) {
	tag, n := binary.Uvarint(b)
	if n <= 0 || tag>>3 == 0 || tag>>3 > 1<<29 {
		return pbField{}, nil, errProtobufShape
	}
	f := pbField{num: int(tag >> 3), wire: int(tag & 7), tag: b[:n]}
	end := n
	switch f.wire {
	case 0: // varint
		_, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return pbField{}, nil, errProtobufShape
		}
		end += m
	case 1: // fixed64
		end += 8
	case pbWireBytes:
		l, m := binary.Uvarint(b[n:])
		if m <= 0 || l > uint64(len(b)) {
			return pbField{}, nil, errProtobufShape
		}
		end += m + int(l)
		if end > len(b) {
			return pbField{}, nil, errProtobufShape
		}
		f.content = b[n+m : end]
	case 5: // fixed32
		end += 4
	default: // groups are not used by the Kubernetes API
		return pbField{}, nil, errProtobufShape
	}
	if end > len(b) {
		return pbField{}, nil, errProtobufShape
	}
	f.all = b[:end]
	return f, b[end:], nil
}

// strippedSize returns the size of message b, at level, once stripped.
func strippedSize(b []byte, level int) (int, error) {
	size := 0
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return 0, err
		}
		b = rest
		below, drop := descend(level, f.num)
		switch {
		case drop:
		case below >= 0 && f.wire == pbWireBytes:
			n, err := strippedSize(f.content, below)
			if err != nil {
				return 0, err
			}
			size += len(f.tag) + uvarintLen(uint64(n)) + n
		case below >= 0:
			return 0, errProtobufShape
		default:
			size += len(f.all)
		}
	}
	return size, nil
}

// writeStripped appends message b, at level, stripped, to out. out may share
// b's memory as long as it ends at or before b's start: every field is written
// at or before the place it is read from (a length only shrinks, and so does
// its varint), and append copies as memmove does.
func writeStripped(out, b []byte, level int) ([]byte, error) {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		below, drop := descend(level, f.num)
		switch {
		case drop:
		case below >= 0:
			n, err := strippedSize(f.content, below)
			if err != nil {
				return nil, err
			}
			out = append(out, f.tag...)
			out = binary.AppendUvarint(out, uint64(n))
			if out, err = writeStripped(out, f.content, below); err != nil {
				return nil, err
			}
		default:
			out = append(out, f.all...)
		}
	}
	return out, nil
}

// uvarintLen is the length of x as a protobuf varint.
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
