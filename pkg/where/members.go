package where

import (
	"bytes"
	"encoding/json"
	"errors"
)

// An OpenAPI v3 document of core/v1 is 1.6 MB of JSON, and a question reads
// a few of its schemas. json.Unmarshal of the document into a map of
// json.RawMessage reads every byte twice (checkValid, then the decoding);
// objectMembers finds where each member of an object begins and ends in one
// pass, and validates nothing: each member's bytes are decoded by
// encoding/json when a kind refers to them, which validates them then.
// BenchmarkCompile, a predicate on Pods typed from that document: 4.4 to
// 5.3 ms against 13.6 to 15.0 ms. FuzzObjectMembers holds it to
// encoding/json's reading of every valid object.

// errNotObject is objectMembers' error for bytes that are not a JSON object
// it can split.
var errNotObject = errors.New("not a JSON object")

// objectMembers returns the members of the JSON object data holds, each
// value's bytes as they stand in data. The last of a repeated name wins, as in
// json.Unmarshal.
func objectMembers(data []byte) (map[string]json.RawMessage, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errNotObject
	}
	out := map[string]json.RawMessage{}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return out, trailing(data, i+1)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, errNotObject
		}
		end := stringEnd(data, i)
		if end < 0 {
			return nil, errNotObject
		}
		var name string
		if err := json.Unmarshal(data[i:end], &name); err != nil {
			return nil, errNotObject
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, errNotObject
		}
		start := skipSpace(data, i+1)
		end = valueEnd(data, start)
		if end < 0 {
			return nil, errNotObject
		}
		out[name] = json.RawMessage(data[start:end:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, errNotObject
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return out, trailing(data, i+1)
		default:
			return nil, errNotObject
		}
	}
}

// trailing refuses anything but white space after the object.
func trailing(data []byte, i int) error {
	if skipSpace(data, i) != len(data) {
		return errNotObject
	}
	return nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the end of the string that starts at data[i], a quote;
// -1 if it does not end.
func stringEnd(data []byte, i int) int {
	for i++; ; i++ {
		// The next quote, which ends the string unless an odd number of
		// backslashes escapes it. Most of a document's bytes are in its
		// descriptions' strings: IndexByte reads them fastest.
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		escaped := false
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			escaped = !escaped
		}
		if !escaped {
			return i + 1
		}
	}
}

// valueEnd returns the end of the value that starts at data[i]: a string, an
// object or an array to its closing bracket (strings inside skipped whole),
// anything else (a number, true, false, null) to the next delimiter. -1 where
// no value starts or brackets do not close in kind.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
	case ',', ':', '}', ']':
		return -1
	default:
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\n', '\r', '\t', ':', '"', '{', '[':
				return i
			}
			i++
		}
		return i
	}
	var open []byte
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			end := stringEnd(data, i)
			if end < 0 {
				return -1
			}
			i = end - 1
		case '{', '[':
			open = append(open, c)
		case '}', ']':
			if len(open) == 0 || open[len(open)-1] != c-2 {
				// '}' is '{'+2 and ']' is '['+2.
				return -1
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return i + 1
			}
		}
	}
	return -1
}
