package wire

import (
	"bytes"
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
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
	unknownRawField     protowire.Number = 2
	listItemsField      protowire.Number = 2
	objectMetadataField protowire.Number = 1
	managedFieldsField  protowire.Number = 17
)

// maxFieldNumber is the largest field number a tag may carry here. Larger
// ones are refused as not the API server's; protowire's own bound is wider
// (it reads up to 2^31-1).
const maxFieldNumber = 1 << 29

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
func descend(level int, num protowire.Number) (below int, drop bool) {
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
	num  protowire.Number
	wire protowire.Type
	// all is the whole field, tag included; content is the value of a
	// length-delimited field, without its length.
	all, content []byte
	// tag is the field's tag bytes, copied as they are: a tag written in
	// more bytes than it needs stays so.
	tag []byte
}

// nextField reads the field at the start of b and returns it and the rest of b.
func nextField(b []byte) (pbField, []byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num > maxFieldNumber {
		return pbField{}, nil, errProtobufShape
	}
	f := pbField{num: num, wire: typ, tag: b[:n]}
	var m int
	switch typ {
	case protowire.VarintType:
		_, m = protowire.ConsumeVarint(b[n:])
	case protowire.Fixed64Type:
		_, m = protowire.ConsumeFixed64(b[n:])
	case protowire.BytesType:
		f.content, m = protowire.ConsumeBytes(b[n:])
	case protowire.Fixed32Type:
		_, m = protowire.ConsumeFixed32(b[n:])
	default:
		// Groups are not used by the Kubernetes API; protowire would read
		// through one (ConsumeFieldValue), which no answer holds.
		return pbField{}, nil, errProtobufShape
	}
	if m < 0 {
		return pbField{}, nil, errProtobufShape
	}
	f.all = b[:n+m]
	return f, b[n+m:], nil
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
		case below >= 0 && f.wire == protowire.BytesType:
			n, err := strippedSize(f.content, below)
			if err != nil {
				return 0, err
			}
			size += len(f.tag) + protowire.SizeVarint(uint64(n)) + n
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
// its varint, which protowire writes in as few bytes as it needs), and append
// copies as memmove does.
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
			out = protowire.AppendVarint(out, uint64(n))
			if out, err = writeStripped(out, f.content, below); err != nil {
				return nil, err
			}
		default:
			out = append(out, f.all...)
		}
	}
	return out, nil
}
