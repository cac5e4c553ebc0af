package printers

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// GroupHeader renders the header line of a group of mode (the GroupList's
// groupBy) for human output: the group, its owner or node state, and counts.
func GroupHeader(mode v1alpha1.GroupMode) func(g *v1alpha1.Group) string {
	return func(g *v1alpha1.Group) string {
		var parts []string
		name := g.Name
		if mode == v1alpha1.GroupByOwner && !g.Key.None && g.Key.Namespace != "" {
			name += " -n " + g.Key.Namespace
		}
		if g.Key.Context != "" {
			name += " --context " + g.Key.Context
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
		// A node's header already weighs its requests against allocatable;
		// its JSON has the limits and other resources.
		if r := g.Summary.Resources; r != nil && mode != "node" {
			if s := resourceList(r.Requests); s != "" {
				parts = append(parts, "requests "+s)
			}
			if s := resourceList(r.Limits); s != "" {
				parts = append(parts, "limits "+s)
			}
		}
		return strings.Join(parts, "  ")
	}
}

// resourceList renders the non-zero resources of r for a header line: cpu,
// memory, then the others by name ("cpu 1040m, memory 1.1Gi, nvidia.com/gpu
// 2"). Byte quantities (memory, ephemeral-storage, hugepages-*) are rounded as
// humanBytes does; JSON has them exact. Empty when every resource is zero.
func resourceList(r v1alpha1.Resources) string {
	var parts []string
	if r.CPUMillis != 0 {
		parts = append(parts, "cpu "+r.CPU)
	}
	if r.MemoryBytes != 0 {
		parts = append(parts, "memory "+humanBytes(r.MemoryBytes))
	}
	names := make([]string, 0, len(r.Other))
	for name := range r.Other {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := r.Other[name]
		if name == "ephemeral-storage" || strings.HasPrefix(name, "hugepages-") {
			if q, err := resource.ParseQuantity(v); err == nil {
				v = humanBytes(q.Value())
			}
		}
		parts = append(parts, name+" "+v)
	}
	return strings.Join(parts, ", ")
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
