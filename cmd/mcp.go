package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/internal/help"
	"github.com/kubectl-idx/kubectl-idx/internal/version"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/mcp"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var mcpLong = `Serve kubectl idx's questions to agents over the Model Context Protocol, on stdin
and stdout, for an agent to start as a local MCP server.

Tools: query (objects, filtered by CEL and grouped by owner, node, namespace or
label), relations (tree, owners, uses, selects, selectedBy, orphans), events (of
a subtree or a namespace), changes (a change feed read with cursors) and
contexts. Answers are small: objects are projected, every answer is paged and
capped in bytes, and Secret data, environment variable values and
last-applied-configuration are never returned.

The process keeps its informers warm between calls, as the warm cache does, and
every answer holds each write the API server acknowledged before the call. It
answers with the kubeconfig user's rights, asked again of the API server at
every call, and writes nothing to the cluster.`

var mcpExample = `  # Serve the current context (an agent starts this command)
  kubectl idx mcp

  # Serve two contexts; answers say which each object came from
  kubectl idx mcp --context prod,staging

  # Larger answers for an agent with room for them
  kubectl idx mcp --max-bytes 262144 --limit 500`

// MCPOptions holds the flags and resolved state of the mcp command.
type MCPOptions struct {
	*Flags
	SyncTimeout time.Duration
	Limit       int
	MaxBytes    int

	targets []query.Target
	names   []string
	genericiooptions.IOStreams
}

// NewCmdMCP returns the mcp command.
func NewCmdMCP(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &MCPOptions{Flags: f, SyncTimeout: 60 * time.Second, Limit: mcp.DefaultLimit, MaxBytes: mcp.DefaultMaxBytes, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "mcp",
		Short:   "Serve kubectl idx's questions to agents over the Model Context Protocol (stdio)",
		Long:    mcpLong,
		Example: mcpExample,
		Args:    cobra.NoArgs,
		RunE:    runE(o),
	}
	help.ExposeGlobalFlags(cmd)
	cmd.Flags().DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "How long a tool call waits for the informer caches to sync, or to be shown current, before giving up; 0 waits forever.")
	cmd.Flags().IntVar(&o.Limit, "limit", o.Limit, "How many items an answer holds when a call names no limit.")
	cmd.Flags().IntVar(&o.MaxBytes, "max-bytes", o.MaxBytes, "The most bytes of JSON an answer holds; past it the answer is truncated, with a cursor to the rest.")
	return cmd
}

// Complete resolves the contexts served.
func (o *MCPOptions) Complete(_ *cobra.Command, _ []string) error {
	var err error
	if o.targets, err = o.resolveTargets(); err != nil {
		return err
	}
	if len(o.targets) == 1 && o.targets[0].Context == "" {
		name, err := query.ContextName(o.ConfigFlags)
		if err != nil {
			return err
		}
		o.names = []string{name}
		return nil
	}
	for _, t := range o.targets {
		o.names = append(o.names, t.Context)
	}
	return nil
}

// Validate checks the flags; it does no I/O.
func (o *MCPOptions) Validate() error {
	switch {
	case o.SyncTimeout < 0:
		return fmt.Errorf("--sync-timeout must not be negative, got %s", o.SyncTimeout)
	case o.Limit < 1 || o.Limit > mcp.MaxLimit:
		return fmt.Errorf("--limit must be between 1 and %d, got %d", mcp.MaxLimit, o.Limit)
	case o.MaxBytes < 1024:
		return fmt.Errorf("--max-bytes must be at least 1024, got %d", o.MaxBytes)
	}
	return nil
}

// Run serves MCP on stdin and stdout until the client closes stdin.
func (o *MCPOptions) Run(ctx context.Context) error {
	return mcp.Serve(ctx, mcp.Options{
		Targets: o.targets,
		Names:   o.names,
		Query: query.Config{
			SyncTimeout:  o.SyncTimeout,
			WarningText:  errtext.Warning,
			ObjectStatus: printers.ObjectStatus,
		},
		ErrorText: errtext.Format,
		Limit:     o.Limit,
		MaxBytes:  o.MaxBytes,
		Version:   version.Version,
	}, o.In, o.Out)
}
