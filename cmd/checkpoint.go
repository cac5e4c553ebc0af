package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
)

// checkpointFlag is --checkpoint of the feeds (watch, events -w).
type checkpointFlag struct {
	// Checkpoint is the file's path; "" for none.
	Checkpoint string
}

func (c *checkpointFlag) addFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.Checkpoint, "checkpoint", "", "Keep in this file where the feed stands, after every write to stdout, and resume from it: started again with the same file, the feed prints only what happened since, or, where the server no longer has that point, what changed, marked \"gap\". Created if it does not exist; refused if it was written for another feed or another cluster, or is not a regular file of your own (a symbolic link, a pipe, another user's file).")
}

// streamFilters are the flags that narrow a feed that every feed has, for
// its checkpoint's stream (the engine adds each feed's own): a checkpoint
// written with others is refused.
func (o *QueryOptions) streamFilters() []checkpoint.Filter {
	var out []checkpoint.Filter
	if o.LabelSelector != "" {
		out = append(out, checkpoint.Filter{Flag: "--selector", Value: o.LabelSelector})
	}
	if o.FieldSelector != "" {
		out = append(out, checkpoint.Filter{Flag: "--field-selector", Value: o.FieldSelector})
	}
	if w := whereFilter(o.Where); w != "" {
		out = append(out, checkpoint.Filter{Flag: "--where", Value: w})
	}
	return out
}

// whereFilter is the --where expressions as one value of a stream's key: sorted,
// since all of them must hold whatever their order, and as one
// expression, (a) && (b), when there are several.
func whereFilter(exprs []string) string {
	if len(exprs) < 2 {
		return strings.Join(exprs, "")
	}
	sorted := slices.Sorted(slices.Values(exprs))
	for i, e := range sorted {
		sorted[i] = "(" + e + ")"
	}
	return strings.Join(sorted, " && ")
}
