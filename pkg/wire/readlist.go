package wire

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The REST client reads a LIST answer whole before it decodes any of it: an
// unpaged LIST of 20,000 realistic pods is 170 MB the server encodes and
// sends over a second or more, and the client's decoding of it (about 0.6 s
// of CPU) starts only once the last byte has arrived. ReadList decodes each
// item as soon as it has arrived, while the server still encodes the
// following ones, and holds the decoded items and one item's bytes, never
// the answer.

// streamedKey marks a LIST request whose answer ReadList reads:
// ListTransport then leaves its items' managedFields to it.
type streamedKey struct{}

// Streamed returns ctx for a LIST request whose answer ReadList reads: a
// page of PageAhead's, the small page WithHeld asks for, or any other.
func Streamed(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamedKey{}, true)
}

func streamed(ctx context.Context) bool {
	v, _ := ctx.Value(streamedKey{}).(bool)
	return v
}

// itemUnmarshaler is an item of the typed lists of the built-in kinds.
type itemUnmarshaler interface {
	Unmarshal([]byte) error
}

// ReadList reads a protobuf LIST answer from body as it arrives into into, a
// typed list of the built-in kinds (*corev1.PodList) or of metadata
// (*metav1.PartialObjectMetadataList) whose items decode from protobuf: its
// ListMeta, and each item decoded as soon as it has arrived
// whole, without its managedFields when the request's hook asks
// (PageAhead.DropManagedFields, WithHeld), which the held count of WithHeld
// counts as the stripped answer's bytes. An answer that is not protobuf (the
// bytes do not start with its magic number), or a list whose items do not
// decode so, is read whole and handed to decode; an answer of another shape
// is an error.
func ReadList(ctx context.Context, body io.Reader, into runtime.Object, decode func([]byte) error) error {
	hook, _ := ctx.Value(listHookKey{}).(listHook)
	r := bufio.NewReaderSize(bodyReader{body}, stripChunk)
	items, lm, ok := listFields(into)
	if magic, err := r.Peek(len(protobufMagic)); err != nil || !bytes.Equal(magic, protobufMagic) || !ok {
		data, rerr := io.ReadAll(r)
		if rerr != nil {
			return shapeOrRead(rerr)
		}
		if hook.held != nil {
			hook.held.Add(int64(len(data)))
		}
		return decode(data)
	}
	if _, err := r.Discard(len(protobufMagic)); err != nil {
		return shapeOrRead(err)
	}
	s := &pbStream{r: r, left: -1}
	var buf []byte
	held := 0
	sawList, encoded := false, false
	for {
		num, typ, err := s.tag()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch {
		case num == unknownRawField && typ == protowire.BytesType:
			if sawList {
				// The generated decoder keeps the last; the API server
				// writes one.
				return errProtobufShape
			}
			sawList = true
			n, err := s.length()
			if err != nil {
				return err
			}
			list := &pbStream{r: r, left: int64(n)}
			for list.left > 0 {
				num, typ, err := list.tag()
				if err != nil {
					return shapeOrRead(err)
				}
				if typ != protowire.BytesType {
					if err := list.skip(typ); err != nil {
						return err
					}
					continue
				}
				n, err := list.length()
				if err != nil {
					return err
				}
				if cap(buf) < n {
					buf = make([]byte, n, n+n/4)
				}
				if err := list.read(buf[:n]); err != nil {
					return err
				}
				data := buf[:n]
				held += protowire.SizeTag(num) + protowire.SizeVarint(uint64(n))
				switch num {
				case listMetaField:
					// As the generated decoder, into what is there.
					if err := lm.Unmarshal(data); err != nil {
						return fmt.Errorf("decoding the list's metadata: %w", err)
					}
					held += n
				case listItemsField:
					if hook.dropManagedFields {
						if size, err := strippedSize(data, levelItem); err == nil && size < len(data) {
							if data, err = writeStripped(data[:0], data, levelItem); err != nil {
								return err
							}
						}
					}
					held += len(data)
					// A new item in place, cleared there: reflect.Append
					// would copy in a zero item, which Go allocates for a
					// type as large as a Pod.
					if items.Len() == items.Cap() {
						items.Grow(1)
					}
					items.SetLen(items.Len() + 1)
					last := items.Index(items.Len() - 1)
					last.SetZero()
					item := last.Addr().Interface().(itemUnmarshaler)
					if err := item.Unmarshal(data); err != nil {
						return fmt.Errorf("decoding item %d of the list: %w", items.Len()-1, err)
					}
				}
			}
		case num == unknownContentEncodingField && typ == protowire.BytesType:
			// The last one counts, as in the generated decoder.
			n, err := s.length()
			if err != nil {
				return err
			}
			encoded = n != 0
			if err := s.discard(n); err != nil {
				return err
			}
		default:
			if err := s.skip(typ); err != nil {
				return err
			}
		}
	}
	if !sawList || encoded {
		// An encoded list (the server writes none) is not read here.
		return errProtobufShape
	}
	if hook.held != nil {
		hook.held.Add(int64(held))
	}
	return nil
}

// listFields returns the Items slice of a typed list whose items decode from
// protobuf, settable, and its ListMeta.
func listFields(list runtime.Object) (*reflect.Value, *metav1.ListMeta, bool) {
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, nil, false
	}
	items := v.Elem().FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice || !items.CanSet() {
		return nil, nil, false
	}
	if !reflect.PointerTo(items.Type().Elem()).Implements(reflect.TypeFor[itemUnmarshaler]()) {
		return nil, nil, false
	}
	lm := v.Elem().FieldByName("ListMeta")
	if !lm.IsValid() || lm.Type() != reflect.TypeFor[metav1.ListMeta]() || !lm.CanAddr() {
		return nil, nil, false
	}
	return &items, lm.Addr().Interface().(*metav1.ListMeta), true
}
