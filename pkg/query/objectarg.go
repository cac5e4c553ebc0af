package query

import (
	"fmt"
	"strings"
)

// ParseObjectArg checks the shape of the one object argument of a command
// about one object, "(TYPE/NAME | TYPE NAME)", and splits it into type and
// name; it needs no server. verb words what the command does to it.
func ParseObjectArg(verb string, args []string) (typ, name string, err error) {
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		typ, name, _ = strings.Cut(args[0], "/")
		if typ == "" || name == "" || strings.Contains(name, "/") {
			return "", "", fmt.Errorf("arguments in resource/name form must have a single resource and name, got %q", args[0])
		}
	case len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/"):
		typ, name = args[0], args[1]
	case len(args) == 0:
		return "", "", fmt.Errorf("you must specify the object to %s as TYPE/NAME, e.g. deployment/web", verb)
	case len(args) == 1:
		return "", "", fmt.Errorf("you must specify the object to %s as TYPE/NAME, e.g. %s/NAME; got %q", verb, args[0], args[0])
	default:
		return "", "", fmt.Errorf("you must specify one object to %s as TYPE/NAME or TYPE NAME, got %q", verb, strings.Join(args, " "))
	}
	if strings.Contains(typ, ",") {
		return "", "", fmt.Errorf("you must specify one object to %s, not a list of types: %q", verb, typ)
	}
	return typ, name, nil
}
