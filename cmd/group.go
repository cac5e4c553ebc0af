package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// GroupFlags are the group-by flags of the root command.
type GroupFlags struct {
	ByOwner          bool
	ByNode           bool
	ByLabel          string
	ByNamespace      bool
	ByJSONPath       string
	IncludeCompleted bool

	byLabelSet, byJSONPathSet bool
}

// addFlags adds the group-by flags.
func (g *GroupFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&g.ByOwner, "by-owner", false, "Group objects under their top-level controller (Deployment, StatefulSet, CronJob, a custom resource, ...), following controller references upward.")
	cmd.Flags().BoolVar(&g.ByNode, "by-node", false, "Group pods by node, with each node's status, roles and CPU and memory requests against allocatable. Every node is listed.")
	cmd.Flags().StringVar(&g.ByLabel, "by-label", "", "Group objects by the value of this label key; objects without it form the <none> group.")
	cmd.Flags().BoolVar(&g.ByNamespace, "by-namespace", false, "Group objects by namespace.")
	cmd.Flags().StringVar(&g.ByJSONPath, "by", "", "Group objects by the value of a JSONPath expression, e.g. '{.spec.serviceAccountName}'. An object with several values is in several groups.")
	cmd.Flags().BoolVar(&g.IncludeCompleted, "include-completed", false, "With --by-node, count Succeeded and Failed pods toward the node's requests.")
}

// mode returns the grouping asked for ("" for none) and an error when more
// than one was asked for.
func (g *GroupFlags) mode() (v1alpha1.GroupMode, error) {
	var set []string
	var mode v1alpha1.GroupMode
	add := func(on bool, flag string, m v1alpha1.GroupMode) {
		if on {
			set = append(set, flag)
			mode = m
		}
	}
	add(g.ByOwner, "--by-owner", query.GroupByOwner)
	add(g.ByNode, "--by-node", query.GroupByNode)
	add(g.byLabelSet, "--by-label", query.GroupByLabel)
	add(g.ByNamespace, "--by-namespace", query.GroupByNamespace)
	add(g.byJSONPathSet, "--by", query.GroupByJSONPath)
	if len(set) > 1 {
		return "", fmt.Errorf("%s cannot be used together: choose one grouping", strings.Join(set, " and "))
	}
	return mode, nil
}

// validateFlags checks the group-by flags against each other, without the
// requests.
func (g *GroupFlags) validateFlags(sortBy string) error {
	mode, err := g.mode()
	if err != nil {
		return err
	}
	if g.IncludeCompleted && mode != query.GroupByNode {
		return errors.New("--include-completed only applies to --by-node")
	}
	switch mode {
	case "":
		return nil
	case query.GroupByLabel:
		if strings.TrimSpace(g.ByLabel) == "" {
			return errors.New("--by-label needs a label key, e.g. --by-label app")
		}
		// An invalid key is on no object: every object would land in <none>.
		if errs := validation.IsQualifiedName(g.ByLabel); len(errs) > 0 {
			return fmt.Errorf("invalid label key %q in --by-label: %s", g.ByLabel, strings.Join(errs, "; "))
		}
	case query.GroupByJSONPath:
		if _, err := index.JSONPathIndexFunc(g.ByJSONPath); err != nil {
			return fmt.Errorf("invalid JSONPath in --by: %w", err)
		}
	}
	if sortBy != "" {
		return errors.New("--sort-by cannot be used with grouping: groups and their members are sorted by key and name")
	}
	return nil
}

// groupBy is the engine's grouping for mode.
func (g *GroupFlags) groupBy(mode v1alpha1.GroupMode) query.GroupBy {
	return query.GroupBy{Mode: mode, LabelKey: g.ByLabel, JSONPath: g.ByJSONPath, IncludeCompleted: g.IncludeCompleted}
}
