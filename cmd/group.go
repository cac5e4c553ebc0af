package cmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
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

// validate checks the group-by flags against each other and the requests.
func (g *GroupFlags) validate(reqs []query.Request, sortBy string) error {
	if err := g.validateFlags(sortBy); err != nil {
		return err
	}
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

// groupHeader renders a group's header line for human output.
func groupHeader(mode string) func(g *v1alpha1.Group) string {
	return func(g *v1alpha1.Group) string {
		var parts []string
		name := g.Name
		if mode == query.GroupByOwner && !g.Key.None && g.Key.Namespace != "" {
			name += " -n " + g.Key.Namespace
		}
		parts = append(parts, name)
		switch {
		case g.Key.Dangling:
			parts = append(parts, "(dangling: owner not found)")
		case g.Key.Unknown:
			// The reason is in the warning on stderr and in the JSON key.
			parts = append(parts, "(owners above unknown)")
		}
		if n := g.Summary.Node; n != nil && !n.Exists {
			// Pods name a node the cluster does not have: no capacity to show.
			parts = append(parts, n.Status)
		} else if n != nil {
			roles := strings.Join(n.Roles, ",")
			if roles == "" {
				roles = "<none>"
			}
			parts = append(parts, n.Status, roles,
				fmt.Sprintf("cpu %s/%s (%d%%)", n.Requests.CPU, n.Allocatable.CPU, n.CPUPercent),
				fmt.Sprintf("memory %s/%s (%d%%)", humanBytes(n.Requests.MemoryBytes), humanBytes(n.Allocatable.MemoryBytes), n.MemoryPercent))
		}
		parts = append(parts, countLine(g))
		return strings.Join(parts, "  ")
	}
}

// countLine says how many members a group has and, for pods, how many are ready.
func countLine(g *v1alpha1.Group) string {
	kinds := make([]string, 0, len(g.Summary.Kinds))
	for k := range g.Summary.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		n := g.Summary.Kinds[k]
		word := strings.ToLower(k)
		if n != 1 {
			word += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, word))
	}
	if len(parts) == 0 {
		parts = append(parts, "0 pods")
	}
	line := strings.Join(parts, ", ")
	if p := g.Summary.Pods; p != nil {
		line += fmt.Sprintf(", %d/%d ready", p.Ready, p.Total)
	}
	return line
}

// printGrouped asks the engine for a group-by answer and prints it.
func (o *GetOptions) printGrouped(ctx context.Context, s *query.Session, reqs []query.Request, mode, format string, crdColumns map[schema.GroupKind][]apiextensionsv1.CustomResourceColumnDefinition) error {
	doc, missing, err := s.Group(ctx, reqs, o.Group.groupBy(mode))
	if err != nil {
		return err
	}
	for _, w := range doc.Warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	// Validate rejected --sort-by; a lone named object still prints in groups.
	opts := o.printOptions(format)
	opts.SingleItem = false
	err = printers.PrintGrouped(o.Out, doc, o.printer, printers.GroupedOptions{Options: opts, Header: groupHeader(mode), CRDColumns: crdColumns})
	if err != nil {
		return err
	}
	if len(doc.Groups) == 0 && printers.IsHuman(format) && len(missing) == 0 {
		o.printNoResources()
	}
	return utilerrors.NewAggregate(missing)
}

// humanBytes renders a byte count in the largest binary unit that keeps it at
// least 1, with one decimal: "14.5Gi", "512Mi". Quantities like 15184716Ki are
// exact but unreadable in a header line; JSON keeps the exact values.
func humanBytes(b int64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	v := float64(b)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 || v == float64(int64(v)) {
		return fmt.Sprintf("%d%s", int64(v), units[i])
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}
