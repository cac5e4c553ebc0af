package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var optionsExample = `  # Print flags inherited by all commands
  kubectl idx options`

// NewCmdOptions returns the options command, which prints the flags every
// command takes, as `kubectl options` does.
func NewCmdOptions(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:                   "options",
		DisableFlagsInUseLine: true,
		Short:                 "Print the list of flags inherited by all commands",
		Long:                  "Print the list of flags inherited by all commands",
		Example:               optionsExample,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(streams.Out, "The following options can be passed to any command:\n\n%s", cmd.InheritedFlags().FlagUsages())
			return err
		},
	}
}
