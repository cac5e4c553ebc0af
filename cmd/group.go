package cmd

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
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

// mode returns the grouping asked for ("" for none) and an error when more
// than one was asked for.
func (g *GroupFlags) mode() (string, error) {
	var set []string
	var mode string
	add := func(on bool, flag, m string) {
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

// validate checks the group-by flags against the kinds asked for.
func (g *GroupFlags) validate(reqs []query.Request) error {
	if g.ByNode {
		for _, r := range reqs {
			if !index.HasNode(r.Resource.GVK.GroupKind()) {
				return fmt.Errorf("--by-node groups objects by the node they run on; %s have no node (use it with pods)", r.Resource.Name())
			}
		}
	}
	return nil
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
func (g *GroupFlags) groupBy(mode string) query.GroupBy {
	return query.GroupBy{Mode: mode, LabelKey: g.ByLabel, JSONPath: g.ByJSONPath, IncludeCompleted: g.IncludeCompleted}
}

// printGrouped prints a group-by answer; contexts, when set, are the
// contexts of a merged answer over several.
func (o *GetOptions) printGrouped(doc *v1alpha1.GroupList, mode, format string, tables map[schema.GroupKind]*metav1.Table, contexts map[string]map[schema.GroupKind]*metav1.Table) error {
	// Validate rejected --sort-by; a lone named object still prints in groups.
	opts := o.printOptions(format)
	opts.SingleItem = false
	return printers.PrintGrouped(o.Out, doc, o.printer, printers.GroupedOptions{Options: opts, Header: printers.GroupHeader(mode), ServerTables: tables, ContextTables: contexts})
}
