package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/completion"
)

var completionLong = `Print a shell completion script for kubectl-idx.

kubectl idx is completed two ways:

- As kubectl idx TAB, by kubectl's own completion (kubectl 1.26 or later). kubectl
  asks the plugin through an executable named kubectl_complete-idx on PATH, which
  every release archive ships next to kubectl-idx; no script from this command is
  involved. krew links only kubectl-idx, so copy the other once (Linux, macOS);
  it calls kubectl-idx through PATH, so the copy survives upgrades:

    cp "${KREW_ROOT:-$HOME/.krew}"/store/idx/*/kubectl_complete-idx "${KREW_ROOT:-$HOME/.krew}/bin/"

- As kubectl-idx TAB, calling the binary directly: load the script this command
  prints for your shell, as the examples show.

Both complete resource types from the server's discovery and then object names
from the server, --namespace from the server, and --context (each name of a
comma-separated list), --cluster and --user from kubeconfig. The commands about
one object (tree, owners, uses, selects, selected-by, events) complete TYPE/
and then its names.`

var completionExample = `  # Load completion for kubectl-idx in every new bash shell (needs bash-completion)
  kubectl idx completion bash > ~/.local/share/bash-completion/completions/kubectl-idx

  # Install it for zsh, in a directory on $fpath
  kubectl idx completion zsh > "${fpath[1]}/_kubectl-idx"

  # Install it for fish
  kubectl idx completion fish > ~/.config/fish/completions/kubectl-idx.fish

  # Load it in the current PowerShell session
  kubectl idx completion powershell | Out-String | Invoke-Expression`

// completionShells are the shells cobra generates scripts for, in help order.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// CompletionOptions holds the shell to print a completion script for.
type CompletionOptions struct {
	Shell string

	genericiooptions.IOStreams
}

// NewCompletionOptions returns CompletionOptions writing to streams.
func NewCompletionOptions(streams genericiooptions.IOStreams) *CompletionOptions {
	return &CompletionOptions{IOStreams: streams}
}

// NewCmdCompletion returns the completion command.
func NewCmdCompletion(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewCompletionOptions(streams)
	return &cobra.Command{
		Use:                   "completion SHELL",
		DisableFlagsInUseLine: true,
		Short:                 "Print the shell completion script for bash, zsh, fish or powershell",
		Long:                  completionLong,
		Example:               completionExample,
		ValidArgs:             completionShells,
		RunE:                  runE(o),
	}
}

// Complete takes the shell from the arguments.
func (o *CompletionOptions) Complete(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return fmt.Errorf("shell not specified; one of: %s", strings.Join(completionShells, ", "))
	case 1:
		o.Shell = args[0]
		return nil
	default:
		return errors.New("too many arguments; expected only the shell type")
	}
}

// Validate checks the shell is one cobra supports.
func (o *CompletionOptions) Validate() error {
	if !slices.Contains(completionShells, o.Shell) {
		return fmt.Errorf("unsupported shell type %q; one of: %s", o.Shell, strings.Join(completionShells, ", "))
	}
	return nil
}

// Run prints the script. Cobra's scripts depend on nothing but the program name
// (they ask the program itself, through __complete, at every TAB), and the root
// command is named idx after `kubectl idx`; a bare command named after the binary
// gives the script for the name a shell actually sees.
func (o *CompletionOptions) Run(context.Context) error {
	prog := &cobra.Command{Use: "kubectl-idx"}
	switch o.Shell {
	case "bash":
		return prog.GenBashCompletionV2(o.Out, true)
	case "zsh":
		return prog.GenZshCompletion(o.Out)
	case "fish":
		return prog.GenFishCompletion(o.Out, true)
	default:
		return prog.GenPowerShellCompletionWithDesc(o.Out)
	}
}

// addCompletion replaces cobra's default completion command with NewCmdCompletion
// and registers dynamic completion on root (completion.Completer.Register).
func addCompletion(root *cobra.Command, f *Flags, streams genericiooptions.IOStreams) {
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(NewCmdCompletion(streams))
	completion.New(&f.ContextFlags).Register(root)
}
