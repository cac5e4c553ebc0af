package query

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// MergeGroupLists merges the groupings several contexts answered into one
// document; answers without one (failed contexts) are passed over. Owner
// groups stay apart per context (key.context names it: two clusters'
// Deployment/web are two controllers); label, JSONPath, namespace and node
// groups gather the members of every context under one key. Each merged
// group keeps every context's members (Members[].Context) and summary
// (Contexts), and its own summary adds them up. The document's warnings are
// left to the caller, who words each context's.
func MergeGroupLists(answers []Answer[*Listing]) *v1alpha1.GroupList {
	var out *v1alpha1.GroupList
	type merged struct {
		g    *v1alpha1.Group
		rank []string
	}
	byID := map[string]*merged{}
	var order []*merged
	for _, a := range answers {
		if a.Value == nil || a.Value.Groups == nil {
			continue
		}
		doc := a.Value.Groups
		if out == nil {
			out = v1alpha1.NewGroupList(doc.GroupBy)
			out.Expression = doc.Expression
		}
		for _, g := range doc.Groups {
			key := g.Key
			id := groupID(key, g.Name)
			rank := []string{g.Name}
			if doc.GroupBy == GroupByOwner && !key.None {
				key.Context = a.Context
				id = a.Context + "\x00" + id
				rank = []string{key.Kind, key.Namespace, key.Name}
			}
			m := byID[id]
			if m == nil {
				m = &merged{g: &v1alpha1.Group{Name: g.Name, Key: key, Summary: v1alpha1.GroupSummary{Kinds: map[string]int{}}}, rank: rank}
				byID[id] = m
				order = append(order, m)
			}
			for _, mem := range g.Members {
				mem.Context = a.Context
				m.g.Members = append(m.g.Members, mem)
			}
			m.g.Contexts = append(m.g.Contexts, v1alpha1.GroupContext{Context: a.Context, Summary: g.Summary})
			addSummary(&m.g.Summary, g.Summary)
		}
	}
	// Named groups by key, then in the contexts' order (a stable sort); the
	// <none> group last, as in one context's answer.
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.g.Key.None != b.g.Key.None {
			return !a.g.Key.None
		}
		return slices.Compare(a.rank, b.rank) < 0
	})
	if out == nil {
		out = v1alpha1.NewGroupList("")
	}
	out.Groups = make([]v1alpha1.Group, len(order))
	for i, m := range order {
		out.Groups[i] = *m.g
	}
	return out
}

// groupID identifies a group across contexts by its key.
func groupID(k v1alpha1.GroupKey, name string) string {
	value := ""
	if k.Value != nil {
		value = "=" + *k.Value
	}
	return strings.Join([]string{fmt.Sprint(k.None), k.APIVersion, k.Kind, k.Namespace, k.Name, k.Node, value, name}, "\x00")
}

// addSummary adds src's counts and sums into dst.
func addSummary(dst *v1alpha1.GroupSummary, src v1alpha1.GroupSummary) {
	dst.Members += src.Members
	for k, n := range src.Kinds {
		dst.Kinds[k] += n
	}
	if src.Pods != nil {
		if dst.Pods == nil {
			dst.Pods = &v1alpha1.PodSummary{}
		}
		addPods(dst.Pods, *src.Pods)
	}
	if src.Resources != nil {
		if dst.Resources == nil {
			dst.Resources = &v1alpha1.ResourceSummary{Requests: addResources(v1alpha1.Resources{}, v1alpha1.Resources{}), Limits: addResources(v1alpha1.Resources{}, v1alpha1.Resources{})}
		}
		dst.Resources.Pods += src.Resources.Pods
		dst.Resources.Requests = addResources(dst.Resources.Requests, src.Resources.Requests)
		dst.Resources.Limits = addResources(dst.Resources.Limits, src.Resources.Limits)
	}
	if src.Node != nil {
		dst.Node = addNode(dst.Node, src.Node)
	}
}

// addPods adds src's pod counts into dst.
func addPods(dst *v1alpha1.PodSummary, src v1alpha1.PodSummary) {
	dst.Total += src.Total
	dst.Ready += src.Ready
	dst.Running += src.Running
	dst.Pending += src.Pending
	dst.Succeeded += src.Succeeded
	dst.Failed += src.Failed
	dst.Unknown += src.Unknown
}

// addNode adds up two clusters' nodes of the same name: their requests,
// limits and allocatable, ready when both are, the statuses and roles of
// both.
func addNode(dst, src *v1alpha1.NodeSummary) *v1alpha1.NodeSummary {
	if dst == nil {
		c := *src
		c.Roles = slices.Clone(src.Roles)
		return &c
	}
	dst.Exists = dst.Exists || src.Exists
	dst.Ready = dst.Ready && src.Ready
	dst.Unschedulable = dst.Unschedulable || src.Unschedulable
	// A cordoned node is "Ready,SchedulingDisabled": each part once.
	parts := strings.Split(dst.Status, ",")
	for _, part := range strings.Split(src.Status, ",") {
		if !slices.Contains(parts, part) {
			parts = append(parts, part)
		}
	}
	dst.Status = strings.Join(parts, ",")
	for _, r := range src.Roles {
		if !slices.Contains(dst.Roles, r) {
			dst.Roles = append(dst.Roles, r)
		}
	}
	sort.Strings(dst.Roles)
	dst.Requests = addResources(dst.Requests, src.Requests)
	dst.Limits = addResources(dst.Limits, src.Limits)
	dst.Allocatable = addResources(dst.Allocatable, src.Allocatable)
	dst.CPUPercent, dst.MemoryPercent = 0, 0
	if a := dst.Allocatable.CPUMillis; a > 0 {
		dst.CPUPercent = dst.Requests.CPUMillis * 100 / a
	}
	if a := dst.Allocatable.MemoryBytes; a > 0 {
		dst.MemoryPercent = dst.Requests.MemoryBytes * 100 / a
	}
	return dst
}

// addResources adds two resource sums, rendered as resourcesOf renders one.
func addResources(a, b v1alpha1.Resources) v1alpha1.Resources {
	out := v1alpha1.Resources{CPUMillis: a.CPUMillis + b.CPUMillis, MemoryBytes: a.MemoryBytes + b.MemoryBytes}
	out.CPU = resource.NewMilliQuantity(out.CPUMillis, resource.DecimalSI).String()
	out.Memory = resource.NewQuantity(out.MemoryBytes, resource.BinarySI).String()
	for _, other := range []map[string]string{a.Other, b.Other} {
		for name, v := range other {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				continue
			}
			if prev, ok := out.Other[name]; ok {
				p := resource.MustParse(prev)
				q.Add(p)
			}
			if out.Other == nil {
				out.Other = map[string]string{}
			}
			out.Other[name] = q.String()
		}
	}
	return out
}
