package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var usesLong = `Show which pods and pod templates use a ConfigMap, Secret,
PersistentVolumeClaim or ServiceAccount, and how: mounted as a volume, projected,
referenced from env or envFrom, as an image pull secret, as the service account.
Given a Pod or a workload (Deployment, StatefulSet, Job, CronJob, ...), show
what it uses instead, and whether each object exists.

Pods and workloads of the namespace are read once and indexed by what their
specs refer to. Secrets are only ever read as metadata: no secret data is
fetched or printed.`

var usesExample = `  # Who mounts or references a ConfigMap
  kubectl idx uses configmap/app-config -n shop

  # Pods that would break if a Secret went away
  kubectl idx uses secret/db-credentials -n shop -o json | jq -r '.items[] | select(.kind == "Pod") | .name'

  # Everything a Deployment's pod template needs, and what is missing
  kubectl idx uses deployment/web -n shop`

// usesSubjectKinds are the kinds pod specs refer to.
var usesSubjectKinds = map[schema.GroupKind]string{
	{Kind: index.RefConfigMap}:      index.RefConfigMap,
	{Kind: index.RefSecret}:         index.RefSecret,
	{Kind: index.RefPVC}:            index.RefPVC,
	{Kind: index.RefServiceAccount}: index.RefServiceAccount,
}

// usersKinds are the kinds whose specs are searched, in output order.
var usersKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Version: "v1", Kind: "ReplicationController"},
	{Version: "v1", Kind: "PodTemplate"},
	{Version: "v1", Kind: "Pod"},
}

// UsesOptions holds the flags and state of the uses command.
type UsesOptions struct {
	*RelationOptions
	object objectRef
}

// NewCmdUses returns the uses command.
func NewCmdUses(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UsesOptions{RelationOptions: newRelationOptions(configFlags, streams)}
	cmd := &cobra.Command{
		Use:     "uses (TYPE/NAME | TYPE NAME)",
		Short:   "Show what uses a ConfigMap, Secret, PVC or ServiceAccount, or what a pod uses",
		Long:    usesLong,
		Example: usesExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.addFlags(cmd)
	return cmd
}

// Complete resolves the clients and the object, and checks it is one uses can
// answer for.
func (o *UsesOptions) Complete(cmd *cobra.Command, args []string) error {
	if err := o.complete(cmd); err != nil {
		return err
	}
	var err error
	if o.object, err = o.parseObjectArg("show the uses of", args); err != nil {
		return err
	}
	gk := o.object.res.GVK.GroupKind()
	if _, ok := usesSubjectKinds[gk]; !ok && !index.HasPodSpec(gk) {
		return fmt.Errorf("uses needs a ConfigMap, Secret, PersistentVolumeClaim or ServiceAccount, or an object with a pod spec (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController, PodTemplate); %s/%s is neither", strings.ToLower(o.object.res.GVK.Kind), o.object.name)
	}
	return nil
}

// Run answers and prints.
func (o *UsesOptions) Run(ctx context.Context) error {
	var doc *printers.RelationList
	var err error
	if _, ok := usesSubjectKinds[o.object.res.GVK.GroupKind()]; ok {
		doc, err = o.users(ctx)
	} else {
		doc, err = o.uses(ctx)
	}
	if err != nil {
		return err
	}
	o.printWarnings()
	if len(doc.Items) == 0 && printers.IsHuman(o.format) {
		fmt.Fprintf(o.ErrOut, "Nothing found: %s/%s %s\n", strings.ToLower(o.object.res.GVK.Kind), o.object.name, map[string]string{"users": "is not used by any pod or pod template", "uses": "uses nothing"}[doc.Direction])
	}
	return printers.PrintRelationList(o.Out, doc, o.printer, o.treePrintOptions())
}

// users finds the pods and templates that refer to the object.
func (o *UsesOptions) users(ctx context.Context) (*printers.RelationList, error) {
	ns, err := o.rootNamespace()
	if err != nil {
		return nil, err
	}
	f, err := o.newFactory(informerConfig(o.RelationOptions, ns))
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	// The subject itself, by name and metadata only: a Secret's data is never
	// fetched.
	subject, err := o.namedMetadata(ctx, o.object, ns)
	if err != nil {
		return nil, err
	}
	type typed struct {
		gvk schema.GroupVersionKind
		res informer.Resource
		inf cache.SharedIndexInformer
	}
	var users []typed
	for _, gvk := range usersKinds {
		m, err := o.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		res := informer.FromMapping(m)
		inf, err := f.Informer(res, informer.Full, cache.Indexers{index.UsesIndex: index.UsesIndexFunc})
		if err != nil {
			return nil, err
		}
		users = append(users, typed{gvk: gvk, res: res, inf: inf})
	}
	f.Start(reflectorContext(ctx))
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		return nil, err
	}
	failed := map[schema.GroupVersionResource]bool{}
	for _, s := range skipped {
		failed[s.Resource.GVR] = true
		o.warn("cannot list %s, the answer may be incomplete: %s", s.Resource.Name(), warningText(s.Err))
	}
	kind := usesSubjectKinds[o.object.res.GVK.GroupKind()]
	key := index.UsesKey(kind, ns, o.object.name)
	doc := &printers.RelationList{APIVersion: printers.GroupListAPIVersion, Kind: printers.UsesListKind, Direction: "users", Items: []printers.RelationItem{}}
	subjectItem := printers.RelationItem{APIVersion: o.object.res.GVK.GroupVersion().String(), Kind: o.object.res.GVK.Kind, Namespace: ns, Name: o.object.name}
	if subject != nil {
		subjectItem = printers.RelationItemFor(o.object.res.GVK, subject)
	}
	exists := subject != nil
	subjectItem.Exists = &exists
	doc.Subject = &subjectItem
	for _, u := range users {
		if failed[u.res.GVR] {
			continue
		}
		objs, err := u.inf.GetIndexer().ByIndex(index.UsesIndex, key)
		if err != nil {
			return nil, err
		}
		var items []printers.RelationItem
		for _, obj := range objs {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, err
			}
			spec, ok := index.PodSpecOf(obj)
			if !ok {
				continue
			}
			podName := ""
			if u.gvk.Kind == "Pod" {
				podName = m.GetName()
			}
			it := printers.RelationItemFor(u.gvk, m)
			for _, r := range index.SpecReferences(spec, podName) {
				if r.Kind == kind && r.Name == o.object.name {
					it.Via, it.Optional = r.Via, r.Optional
				}
			}
			items = append(items, it)
		}
		sortItems(items)
		doc.Items = append(doc.Items, items...)
	}
	if subject == nil {
		if len(doc.Items) == 0 {
			return nil, o.object.notFound()
		}
		o.warn("%s/%s does not exist, yet the objects listed refer to it", strings.ToLower(o.object.res.GVK.Kind), o.object.name)
	}
	doc.Warnings = o.docWarnings()
	return doc, nil
}

// uses lists what a pod or workload refers to and whether each exists.
func (o *UsesOptions) uses(ctx context.Context) (*printers.RelationList, error) {
	ns, err := o.rootNamespace()
	if err != nil {
		return nil, err
	}
	obj, err := o.namedFull(ctx, o.object, ns)
	if err != nil {
		return nil, err
	}
	m, _ := meta.Accessor(obj)
	spec, _ := index.PodSpecOf(obj)
	podName := ""
	if o.object.res.GVK.Kind == "Pod" {
		podName = o.object.name
	}
	refs := index.SpecReferences(spec, podName)

	// Which of them exist: metadata of the four kinds in the namespace.
	f, err := o.newFactory(informerConfig(o.RelationOptions, ns))
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	stores := map[string]cache.SharedIndexInformer{}
	resources := map[string]informer.Resource{}
	for gk, kind := range usesSubjectKinds {
		mp, err := o.mapper.RESTMapping(gk, "v1")
		if err != nil {
			continue
		}
		res := informer.FromMapping(mp)
		inf, err := f.Informer(res, informer.MetadataOnly, nil)
		if err != nil {
			return nil, err
		}
		stores[kind], resources[kind] = inf, res
	}
	f.Start(reflectorContext(ctx))
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		for kind, r := range resources {
			if r.GVR == s.Resource.GVR {
				delete(stores, kind)
			}
		}
		o.warn("cannot list %s, whether those objects exist is unknown: %s", s.Resource.Name(), warningText(s.Err))
	}
	subject := printers.RelationItemFor(o.object.res.GVK, m)
	doc := &printers.RelationList{APIVersion: printers.GroupListAPIVersion, Kind: printers.UsesListKind, Direction: "uses", Subject: &subject, Items: []printers.RelationItem{}}
	for _, r := range refs {
		it := printers.RelationItem{APIVersion: "v1", Kind: r.Kind, Namespace: ns, Name: r.Name, Via: r.Via, Optional: r.Optional}
		if inf, ok := stores[r.Kind]; ok {
			_, exists, err := inf.GetIndexer().GetByKey(ns + "/" + r.Name)
			if err != nil {
				return nil, err
			}
			it.Exists = &exists
		}
		doc.Items = append(doc.Items, it)
	}
	doc.Warnings = o.docWarnings()
	return doc, nil
}

func informerConfig(o *RelationOptions, ns string) informer.Config {
	return informer.Config{Namespace: ns, SyncTimeout: o.SyncTimeout, MaxConcurrentLists: relationMaxLists}
}

// namedMetadata reads one object's metadata by name, nil when it does not
// exist. Not being allowed to read it is the error itself.
func (o *RelationOptions) namedMetadata(ctx context.Context, ref objectRef, ns string) (metav1.Object, error) {
	obj, err := o.named(ctx, ref, ns, informer.MetadataOnly)
	if err != nil || obj == nil {
		return nil, err
	}
	return meta.Accessor(obj)
}

// namedFull reads one whole object by name, or kubectl's NotFound.
func (o *RelationOptions) namedFull(ctx context.Context, ref objectRef, ns string) (any, error) {
	obj, err := o.named(ctx, ref, ns, informer.Full)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, ref.notFound()
	}
	return obj, nil
}

func (o *RelationOptions) named(ctx context.Context, ref objectRef, ns string, mode informer.Mode) (any, error) {
	cfg := informerConfig(o, ns)
	cfg.FieldSelector = "metadata.name=" + ref.name
	f, err := o.newFactory(cfg)
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	inf, err := f.Informer(ref.res, mode, nil)
	if err != nil {
		return nil, err
	}
	f.Start(reflectorContext(ctx))
	if err := f.WaitForSync(ctx); err != nil {
		return nil, err
	}
	obj, ok, err := inf.GetIndexer().GetByKey(ref.key(ns))
	if err != nil || !ok {
		return nil, err
	}
	return obj, nil
}

// sortItems orders items by namespace, then name.
func sortItems(items []printers.RelationItem) {
	slices.SortFunc(items, func(a, b printers.RelationItem) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
