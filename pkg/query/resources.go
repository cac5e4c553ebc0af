package query

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// ParseResourceArgs turns command arguments into requests, as kubectl get reads
// them: "TYPE[,TYPE...] [NAME...]" or "TYPE/NAME ...". Types may be plurals,
// singulars, short names, kinds, group-qualified ("deployments.apps"),
// version-qualified ("deployments.v1.apps") or categories ("all"). singleItem is
// true when exactly one object was named, in which case kubectl prints the object
// itself rather than a List.
func ParseResourceArgs(mapper meta.RESTMapper, categories restmapper.CategoryExpander, args []string) (reqs []Request, singleItem bool, err error) {
	if len(args) == 0 {
		return nil, false, errors.New("you must specify the type of resource to get")
	}
	slashed := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slashed++
		}
	}
	if slashed > 0 {
		if slashed != len(args) {
			return nil, false, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl idx resource/<resource_name>' instead of 'kubectl idx resource resource/<resource_name>'")
		}
		byType := map[schema.GroupVersionResource]int{}
		for _, a := range args {
			typ, name, _ := strings.Cut(a, "/")
			if typ == "" || name == "" || strings.Contains(name, "/") {
				return nil, false, fmt.Errorf("arguments in resource/name form must have a single resource and name, got %q", a)
			}
			m, err := MappingFor(mapper, typ)
			if err != nil {
				return nil, false, err
			}
			res := informer.FromMapping(m)
			if i, ok := byType[res.GVR]; ok {
				reqs[i].Names = appendUnique(reqs[i].Names, name)
				continue
			}
			byType[res.GVR] = len(reqs)
			reqs = append(reqs, Request{Resource: res, Names: []string{name}})
		}
		return reqs, len(args) == 1, nil
	}

	names := args[1:]
	for _, n := range names {
		if n == "" {
			return nil, false, errors.New("resource name may not be empty")
		}
	}
	seen := map[schema.GroupVersionResource]bool{}
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			continue
		}
		mappings, err := mappingsFor(mapper, categories, typ)
		if err != nil {
			return nil, false, err
		}
		for _, m := range mappings {
			res := informer.FromMapping(m)
			if seen[res.GVR] {
				continue
			}
			seen[res.GVR] = true
			reqs = append(reqs, Request{Resource: res, Names: append([]string(nil), names...)})
		}
	}
	if len(reqs) == 0 {
		return nil, false, errors.New("you must specify the type of resource to get")
	}
	return reqs, len(reqs) == 1 && len(names) == 1, nil
}

// mappingsFor resolves one type argument, expanding categories such as "all".
func mappingsFor(mapper meta.RESTMapper, categories restmapper.CategoryExpander, typ string) ([]*meta.RESTMapping, error) {
	m, err := MappingFor(mapper, typ)
	if err == nil {
		return []*meta.RESTMapping{m}, nil
	}
	if categories != nil {
		if grs, ok := categories.Expand(typ); ok && len(grs) > 0 {
			out := make([]*meta.RESTMapping, 0, len(grs))
			for _, gr := range grs {
				m, err := MappingFor(mapper, gr.String())
				if err != nil {
					return nil, err
				}
				out = append(out, m)
			}
			return out, nil
		}
	}
	return nil, err
}

// MappingFor resolves a resource or kind argument the way kubectl's resource
// builder does: first as a (possibly fully qualified) resource, then as a kind.
func MappingFor(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	fullGVR, gr := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	if fullGVR != nil {
		gvk, _ = mapper.KindFor(*fullGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(gr.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}

	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK == nil {
		gvk := gk.WithVersion("")
		fullGVK = &gvk
	}
	if !fullGVK.Empty() {
		if m, err := mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m, nil
		}
	}
	m, err := mapper.RESTMapping(gk)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the server doesn't have a resource type %q", gr.Resource)
		}
		return nil, err
	}
	return m, nil
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
