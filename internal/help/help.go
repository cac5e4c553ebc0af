// Package help lays out the help of every command: it lists the command's
// own flags and leaves the global ones (kubectl's connection flags, -v,
// --profile) to `kubectl idx options`, as kubectl does
// (k8s.io/kubectl/pkg/util/templates and pkg/cmd/options): about thirty
// lines no longer repeated under every command. The layout stays cobra's
// (Usage, Examples, Flags), the one of the help texts written for it;
// kubectl's words are kept for the tip and the options command.
package help

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// exposedFlags names a command's annotation listing, comma-separated,
// the global flags its help shows among its own, as kubectl's
// FlagExposer does: -A and --all-contexts shape every answer of the commands
// that ask clusters, as -A does kubectl get's, where it is get's own flag.
const exposedFlags = "kubectl-idx/exposed-flags"

// ExposeGlobalFlags shows -A and --all-contexts in cmd's help.
func ExposeGlobalFlags(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[exposedFlags] = "all-namespaces,all-contexts"
}

// Usage writes c's usage as cobra's default does, less the global flags,
// then says where they are: kubectl's closing line.
func Usage(c *cobra.Command) error {
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		fmt.Fprintf(&b, "\n  %s", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n  %s [command]", c.CommandPath())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "\n\nAliases:\n  %s", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\n\nExamples:\n%s", c.Example)
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nAvailable Commands:")
		for _, sub := range c.Commands() {
			// kubectl leaves options out of the list: the closing line names it.
			if (sub.IsAvailableCommand() || sub.Name() == "help") && sub.Name() != "options" {
				fmt.Fprintf(&b, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	if flags := ownFlags(c); flags.HasAvailableFlags() {
		fmt.Fprintf(&b, "\n\nFlags:\n%s", strings.TrimRight(flags.FlagUsages(), " \t\n"))
	}
	b.WriteString("\n")
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\nUse \"%s [command] --help\" for more information about a command.\n", c.CommandPath())
	}
	if c.Runnable() && c.Name() != "options" {
		fmt.Fprintf(&b, "\nUse \"%s options\" for a list of global command-line options (applies to all commands).\n", c.Root().CommandPath())
	}
	_, err := io.WriteString(c.OutOrStderr(), b.String())
	return err
}

// ownFlags are the flags c's help lists: its own, less the root's persistent
// ones (which the root's own flags include), plus those it exposes.
func ownFlags(c *cobra.Command) *pflag.FlagSet {
	global := c.Root().PersistentFlags()
	out := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if global.Lookup(f.Name) == nil {
			out.AddFlag(f)
		}
	})
	for _, name := range strings.Split(c.Annotations[exposedFlags], ",") {
		if f := c.Flags().Lookup(name); f != nil && out.Lookup(name) == nil {
			out.AddFlag(f)
		}
	}
	return out
}
