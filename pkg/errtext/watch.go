package errtext

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// WatchInstead is the answer to kubectl get's -w and --watch-only on a
// listing: it prints once, and the feed of the same arguments is kubectl
// idx watch's. The command suggested is args, the user's own parsed as flags
// parses them, -w taken out and --watch-only kept, quoted for a shell.
func WatchInstead(args []string, flags *pflag.FlagSet) error {
	words := args
	if flags != nil {
		words = withoutWatchFlag(args, flags)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = ShellQuote(w)
	}
	return fmt.Errorf("kubectl idx lists once; to follow changes use: kubectl idx watch %s", strings.Join(quoted, " "))
}

// withoutWatchFlag returns args less -w and --watch, also where -w is one of
// several shorthands (-Aw), read as flags parses them: a flag's value (-l w,
// -nw) is kept as it is.
func withoutWatchFlag(args []string, flags *pflag.FlagSet) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case a == "--watch" || strings.HasPrefix(a, "--watch="):
		case strings.HasPrefix(a, "--"):
			out = append(out, a)
			if f := flags.Lookup(a[2:]); f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			kept, valueNext := withoutWatchShorthand(a[1:], flags)
			if kept != "" {
				out = append(out, "-"+kept)
			}
			if valueNext && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

// withoutWatchShorthand returns a group of shorthands ("Aw" of -Aw) less w,
// and whether the last of them takes its value from the next argument. The
// first shorthand that takes a value takes the rest of the group as it
// (-lw is -l w).
func withoutWatchShorthand(group string, flags *pflag.FlagSet) (string, bool) {
	kept := ""
	for j := 0; j < len(group); j++ {
		f := flags.ShorthandLookup(group[j : j+1])
		switch {
		case f != nil && f.Name == "watch":
			if j+1 < len(group) && group[j+1] == '=' {
				return kept, false
			}
		case f == nil || f.NoOptDefVal == "" || j+1 < len(group) && group[j+1] == '=':
			// A value follows, in this argument or the next.
			return kept + group[j:], f != nil && f.NoOptDefVal == "" && j+1 == len(group)
		default:
			kept += group[j : j+1]
		}
	}
	return kept, false
}

// ShellQuote quotes s for a POSIX shell when it holds anything but letters,
// digits and the punctuation of flags, names and selectors.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
