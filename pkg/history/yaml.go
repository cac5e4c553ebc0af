package history

import (
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Line is one line of an object's YAML and the field it shows: a key and its
// value, a key that opens a map or a list, a list entry's first field. A
// line that continues a value (a block string) shows the same field as the
// line it continues, and Continued is set.
type Line struct {
	Text      string
	Path      Path
	Continued bool
}

// YAMLLines renders obj, decoded JSON, as YAML the way kubectl -o yaml does
// (keys in order, list entries at their key's indentation), one Line per
// line, each with the field it shows. List entries are named through keys
// (KeysFor), by index where a list has no key.
func YAMLLines(obj map[string]any, keys KeyFunc) []Line {
	var out []Line
	writeMap(&out, nil, obj, "", keys)
	return out
}

func writeMap(out *[]Line, p Path, m map[string]any, indent string, keys KeyFunc) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		writeField(out, p.Field(k), scalarText(k)+":", m[k], indent, keys)
	}
}

// writeField writes head (a key and its colon, or a list entry's dash)
// followed by v.
func writeField(out *[]Line, p Path, head string, v any, indent string, keys KeyFunc) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			*out = append(*out, Line{Text: indent + head + " {}", Path: p})
			return
		}
		*out = append(*out, Line{Text: indent + head, Path: p})
		writeMap(out, p, t, indent+"  ", keys)
	case []any:
		if len(t) == 0 {
			*out = append(*out, Line{Text: indent + head + " []", Path: p})
			return
		}
		*out = append(*out, Line{Text: indent + head, Path: p})
		// Entries sit at their key's indentation, as kubectl prints them.
		writeList(out, p, t, indent, keys)
	default:
		text := scalarText(v)
		first, rest, multi := strings.Cut(text, "\n")
		*out = append(*out, Line{Text: indent + head + " " + first, Path: p})
		if multi {
			// The block's lines come indented under it already.
			for _, l := range strings.Split(rest, "\n") {
				*out = append(*out, Line{Text: indent + l, Path: p, Continued: true})
			}
		}
	}
}

func writeList(out *[]Line, p Path, l []any, indent string, keys KeyFunc) {
	key := ""
	if keys != nil {
		key = listKey(p, l, nil, keys)
	}
	for i, e := range l {
		ep := p.Index(i)
		if key != "" {
			ep = p.Key(key, e.(map[string]any)[key])
		}
		// The entry's lines, then its first line after the dash and the
		// others two spaces in.
		var lines []Line
		switch t := e.(type) {
		case map[string]any:
			if len(t) == 0 {
				lines = []Line{{Text: "{}", Path: ep}}
			} else {
				writeMap(&lines, ep, t, "", keys)
			}
		case []any:
			if len(t) == 0 {
				lines = []Line{{Text: "[]", Path: ep}}
			} else {
				writeList(&lines, ep, t, "", keys)
			}
		default:
			writeField(&lines, ep, "", e, "", keys)
			lines[0].Text = strings.TrimPrefix(lines[0].Text, " ")
		}
		for j, ln := range lines {
			if j == 0 {
				ln.Text = indent + "- " + ln.Text
			} else {
				ln.Text = indent + "  " + ln.Text
			}
			*out = append(*out, ln)
		}
	}
}

// scalarText is a scalar (or a key) as YAML writes it, quoted where it must
// be; a string of several lines is a block, its lines after the first.
func scalarText(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "null"
	}
	return strings.TrimSuffix(string(b), "\n")
}
