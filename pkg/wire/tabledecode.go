package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// DecodeTable reads a meta.k8s.io/v1 Table; anything else (a server that
// answered with the plain list) is an error. Whole numbers in cells are read
// as int64, as kubectl reads them, so that 1000000 prints as 1000000.
//
// A table is read by hand (decodeTableFast): a table of 100,000 pods is 15 MB
// of JSON, and reading it through reflection took 0.3 s, as long as the API
// server took to write it. The hand-read covers the form the API server
// writes; any other (a key written with escapes or twice, a value of another
// type than a table's) is read by the general decoder instead, so that both
// read every input alike.
func DecodeTable(data []byte) (*metav1.Table, error) {
	t, err := decodeTableFast(data)
	if errors.Is(err, errUnusual) {
		return decodeTableReflect(data)
	}
	return t, err
}

// decodeTableReflect is DecodeTable through the general JSON decoder.
func decodeTableReflect(data []byte) (*metav1.Table, error) {
	t := &metav1.Table{}
	if err := utiljson.Unmarshal(data, t); err != nil {
		return nil, err
	}
	if t.Kind != "Table" {
		return nil, fmt.Errorf("the server answered with a %s, not a Table", t.Kind)
	}
	return t, nil
}

// errUnusual stops the hand-read of a table at input it leaves to the general
// decoder: not necessarily wrong, only not the API server's form.
var errUnusual = errors.New("not a table as the API server writes it")

// tableReader reads a table's JSON by hand. Its methods return errUnusual
// at anything beyond the API server's form, including any malformed input.
type tableReader struct {
	data []byte
	pos  int
}

func decodeTableFast(data []byte) (*metav1.Table, error) {
	r := &tableReader{data: data}
	t := &metav1.Table{}
	seen := map[string]bool{}
	err := r.fields(func(key []byte) error {
		k := string(key)
		if seen[k] {
			return errUnusual
		}
		seen[k] = true
		switch k {
		case "kind":
			return r.str(&t.Kind)
		case "apiVersion":
			return r.str(&t.APIVersion)
		case "metadata":
			return r.general(&t.ListMeta)
		case "columnDefinitions":
			return r.general(&t.ColumnDefinitions)
		case "rows":
			return r.rows(&t.Rows, len(t.ColumnDefinitions))
		default:
			return r.skip()
		}
	})
	if err != nil {
		return nil, err
	}
	r.space()
	if r.pos != len(r.data) {
		return nil, errUnusual
	}
	if t.Kind != "Table" {
		return nil, fmt.Errorf("the server answered with a %s, not a Table", t.Kind)
	}
	return t, nil
}

// space skips JSON whitespace.
func (r *tableReader) space() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, 0 at the end.
func (r *tableReader) peek() byte {
	r.space()
	if r.pos < len(r.data) {
		return r.data[r.pos]
	}
	return 0
}

// fields reads an object, calling field with each key's raw bytes with the
// reader at its value, which field reads.
func (r *tableReader) fields(field func(key []byte) error) error {
	if r.peek() != '{' {
		return errUnusual
	}
	r.pos++
	if r.peek() == '}' {
		r.pos++
		return nil
	}
	for {
		key, ok := r.plainString()
		if !ok {
			return errUnusual
		}
		if r.peek() != ':' {
			return errUnusual
		}
		r.pos++
		if err := field(key); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return nil
		default:
			return errUnusual
		}
	}
}

// array reads an array, calling elem with the reader at each element, which
// elem reads. null is read as no array: null reports false.
func (r *tableReader) array(elem func() error) (bool, error) {
	switch r.peek() {
	case 'n':
		return false, r.literal("null")
	case '[':
	default:
		return false, errUnusual
	}
	r.pos++
	if r.peek() == ']' {
		r.pos++
		return true, nil
	}
	for {
		if err := elem(); err != nil {
			return true, err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return true, nil
		default:
			return true, errUnusual
		}
	}
}

// plainString reads a string with no escapes, no control characters and
// valid UTF-8, the bytes between its quotes; anything else reports false.
func (r *tableReader) plainString() ([]byte, bool) {
	if r.peek() != '"' {
		return nil, false
	}
	start := r.pos + 1
	end := bytes.IndexByte(r.data[start:], '"')
	if end < 0 {
		return nil, false
	}
	s := r.data[start : start+end]
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return nil, false
		}
	}
	if !utf8.Valid(s) {
		return nil, false
	}
	r.pos = start + end + 1
	return s, true
}

// str reads a string into s; null leaves s as it is.
func (r *tableReader) str(s *string) error {
	switch r.peek() {
	case 'n':
		return r.literal("null")
	case '"':
		v, err := r.stringValue()
		if err != nil {
			return err
		}
		*s = v
		return nil
	}
	return errUnusual
}

// stringValue reads a string. Escapes of characters outside the surrogate
// range are read here: the API server writes < and > as \u003c and \u003e,
// so every "<none>" cell has them. Anything else goes to the general decoder.
func (r *tableReader) stringValue() (string, error) {
	start := r.pos
	if s, ok := r.plainString(); ok {
		return string(s), nil
	}
	r.pos = start
	if s, ok := r.escapedString(); ok {
		return s, nil
	}
	r.pos = start
	raw, err := r.extent()
	if err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errUnusual
	}
	return s, nil
}

// escapedString reads a string whose escapes are all of characters outside
// the surrogate range, with no control characters and valid UTF-8.
func (r *tableReader) escapedString() (string, bool) {
	if r.peek() != '"' {
		return "", false
	}
	d := r.data
	out := make([]byte, 0, 32)
	for i := r.pos + 1; i < len(d); {
		c := d[i]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			r.pos = i + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(d) {
			return "", false
		}
		switch e := d[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(d) {
				return "", false
			}
			v, err := strconv.ParseUint(string(d[i+2:i+6]), 16, 16)
			if err != nil || (v >= 0xd800 && v < 0xe000) {
				return "", false
			}
			out = utf8.AppendRune(out, rune(v))
			i += 6
			continue
		default:
			return "", false
		}
		i += 2
	}
	return "", false
}

// literal reads the literal word.
func (r *tableReader) literal(word string) error {
	r.space()
	if !bytes.HasPrefix(r.data[r.pos:], []byte(word)) {
		return errUnusual
	}
	r.pos += len(word)
	return nil
}

// general reads the next value into v through the general decoder.
func (r *tableReader) general(v any) error {
	raw, err := r.extent()
	if err != nil {
		return err
	}
	if err := utiljson.Unmarshal(raw, v); err != nil {
		return errUnusual
	}
	return nil
}

// skip reads over the next value, which must be valid JSON.
func (r *tableReader) skip() error {
	raw, err := r.extent()
	if err != nil {
		return err
	}
	if !json.Valid(raw) {
		return errUnusual
	}
	return nil
}

// extent returns the next value's bytes: a string, number or literal, or an
// object or array with its brackets balanced outside strings. Only a
// scalar's syntax is checked here; callers check an object's or array's.
func (r *tableReader) extent() ([]byte, error) {
	r.space()
	if r.pos >= len(r.data) {
		return nil, errUnusual
	}
	start := r.pos
	switch c := r.data[r.pos]; {
	case c == '"':
		r.pos++
		for r.pos < len(r.data) {
			switch r.data[r.pos] {
			case '\\':
				r.pos += 2
				continue
			case '"':
				r.pos++
				return r.data[start:r.pos], nil
			}
			r.pos++
		}
		return nil, errUnusual
	case c == '{' || c == '[':
		depth := 0
		for r.pos < len(r.data) {
			switch r.data[r.pos] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					r.pos++
					return r.data[start:r.pos], nil
				}
			case '"':
				if _, err := r.extent(); err != nil {
					return nil, err
				}
				continue
			}
			r.pos++
		}
		return nil, errUnusual
	case c == 't' || c == 'f' || c == 'n':
		word, _ := literalOf(c)
		if err := r.literal(word); err != nil {
			return nil, err
		}
		return r.data[start:r.pos], nil
	default:
		if _, ok := r.number(); !ok {
			return nil, errUnusual
		}
		return r.data[start:r.pos], nil
	}
}

// number reads a number as JSON writes one, returning its text and whether
// it has a fraction.
func (r *tableReader) number() (string, bool) {
	start := r.pos
	d := r.data
	i := r.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return "", false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return "", false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return "", false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	r.pos = i
	return string(d[start:i]), true
}

// rows reads the table's rows into rows, each with room for width cells.
func (r *tableReader) rows(rows *[]metav1.TableRow, width int) error {
	out := (*rows)[:0]
	present, err := r.array(func() error {
		out = append(out, metav1.TableRow{})
		return r.row(&out[len(out)-1], width)
	})
	if err != nil {
		return err
	}
	if present {
		if out == nil {
			out = []metav1.TableRow{}
		}
		*rows = out
	}
	return nil
}

// row reads one row: its cells by hand, its conditions and object as the
// general decoder does.
func (r *tableReader) row(row *metav1.TableRow, width int) error {
	var cells, conditions, object bool
	if r.peek() != '{' {
		return errUnusual
	}
	r.pos++
	for more := r.peek() != '}'; more; {
		key, ok := r.plainString()
		if !ok || r.peek() != ':' {
			return errUnusual
		}
		r.pos++
		var err error
		switch string(key) {
		case "cells":
			if cells {
				return errUnusual
			}
			cells = true
			err = r.cells(&row.Cells, width)
		case "conditions":
			if conditions {
				return errUnusual
			}
			conditions = true
			err = r.general(&row.Conditions)
		case "object":
			if object {
				return errUnusual
			}
			object = true
			err = r.object(row)
		default:
			err = r.skip()
		}
		if err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case '}':
			more = false
		default:
			return errUnusual
		}
	}
	r.pos++
	return nil
}

// object reads a row's object as its RawExtension reads it.
func (r *tableReader) object(row *metav1.TableRow) error {
	raw, err := r.extent()
	if err != nil {
		return err
	}
	if !json.Valid(raw) {
		return errUnusual
	}
	return row.Object.UnmarshalJSON(raw)
}

// cells reads a row's cells: strings, numbers (int64 when whole, as
// k8s.io/apimachinery's decoder reads them), booleans and null by hand, any
// other value through the general decoder. Plain strings share one copy of
// the cells' text: one allocation per row, not one per cell.
func (r *tableReader) cells(cells *[]any, width int) error {
	switch r.peek() {
	case 'n':
		return r.literal("null")
	case '[':
	default:
		return errUnusual
	}
	start := r.pos
	var text string
	out := make([]any, 0, width)
	r.pos++
	for more := r.peek() != ']'; more; {
		switch c := r.peek(); {
		case c == '"':
			at := r.pos
			if s, ok := r.plainString(); ok {
				if text == "" {
					// The rest of the array's text, up to its end at most:
					// a row's cells are one small span.
					end := bytes.IndexByte(r.data[at:], ']')
					if end < 0 {
						return errUnusual
					}
					text = string(r.data[start : at+end])
				}
				if off := at + 1 - start; off+len(s) <= len(text) {
					out = append(out, text[off:off+len(s)])
				} else {
					out = append(out, string(s))
				}
				break
			}
			r.pos = at
			v, err := r.stringValue()
			if err != nil {
				return err
			}
			out = append(out, v)
		case c == '-' || (c >= '0' && c <= '9'):
			t, ok := r.number()
			if !ok {
				return errUnusual
			}
			v, err := numberValue(t)
			if err != nil {
				return err
			}
			out = append(out, v)
		case c == 't' || c == 'f' || c == 'n':
			word, v := literalOf(c)
			if err := r.literal(word); err != nil {
				return err
			}
			out = append(out, v)
		default:
			var v any
			if err := r.general(&v); err != nil {
				return err
			}
			out = append(out, v)
		}
		switch r.peek() {
		case ',':
			r.pos++
		case ']':
			more = false
		default:
			return errUnusual
		}
	}
	r.pos++
	*cells = out
	return nil
}

// literalOf is the JSON literal that starts with c (t, f or n) and its value.
func literalOf(c byte) (string, any) {
	switch c {
	case 't':
		return "true", true
	case 'f':
		return "false", false
	}
	return "null", nil
}

// numberValue is a number's value as k8s.io/apimachinery's decoder gives it
// in an interface: an int64 when it has no fraction and fits, else a
// float64.
func numberValue(text string) (any, error) {
	if !strings.Contains(text, ".") {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, errUnusual
	}
	return f, nil
}
