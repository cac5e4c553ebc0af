package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// checkpointFlag is --checkpoint of the feeds (watch, events -w).
type checkpointFlag struct {
	// Checkpoint is the file's path; "" for none.
	Checkpoint string
}

func (c *checkpointFlag) addFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.Checkpoint, "checkpoint", "", "Keep in this file where the feed stands, after every write to stdout, and resume from it: started again with the same file, the feed prints only what happened since, or, where the server no longer has that point, what changed, marked \"gap\". Created if it does not exist; refused if it was written for another feed or another cluster, or is not a regular file of your own (a symbolic link, a pipe, another user's file).")
}

// checkpoints are the open checkpoint and the handles of its streams, by
// target; a nil *checkpoints is no --checkpoint.
type checkpoints struct {
	file    *checkpoint.File
	handles map[int]*checkpoint.Feed
}

// of returns target i's handle, nil without --checkpoint.
func (c *checkpoints) of(i int) *checkpoint.Feed {
	if c == nil {
		return nil
	}
	return c.handles[i]
}

// close closes the checkpoint once the feeds have ended with err, and
// returns err, or else the checkpoint's.
func (c *checkpoints) close(err error) error {
	if c == nil {
		return err
	}
	if cerr := c.file.Close(); err == nil {
		err = cerr
	}
	return err
}

// openCheckpoint opens path and resumes streams, streams[i] being target i's
// when it is live (the others' contexts are unavailable: the checkpoint
// keeps what it holds of them), and says on stderr what reading the file
// found. It returns nil for no path.
func (o *QueryOptions) openCheckpoint(path string, streams map[int]checkpoint.Stream, unavailable []string) (*checkpoints, error) {
	if path == "" {
		return nil, nil
	}
	f, err := checkpoint.Open(path)
	if err != nil {
		return nil, err
	}
	warned := f.Warnings()
	for _, w := range warned {
		o.warnf("%s", w)
	}
	var order []int
	var list []checkpoint.Stream
	for i := range len(o.targets) {
		if s, ok := streams[i]; ok {
			order = append(order, i)
			list = append(list, s)
		}
	}
	handles, err := f.Resume(list, unavailable)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	for _, w := range f.Warnings()[len(warned):] {
		o.warnf("%s", w)
	}
	c := &checkpoints{file: f, handles: map[int]*checkpoint.Feed{}}
	for j, i := range order {
		c.handles[i] = handles[j]
	}
	return c, nil
}

// contextName is the kubeconfig context a checkpoint's stream of t names:
// its own over several contexts, else the one --context names or the
// kubeconfig's current one.
func (o *QueryOptions) contextName(t query.Target) string {
	if t.Context != "" {
		return t.Context
	}
	if o.Flags == nil || o.ConfigFlags == nil {
		return ""
	}
	if o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "" {
		return *o.ConfigFlags.Context
	}
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	return raw.CurrentContext
}

// kubeSystem is the namespace whose UID tells a cluster from one made anew:
// no one can delete it, and a new cluster creates it with a new UID.
var kubeSystem = query.ObjectRef{
	Resource: informer.Resource{
		GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
	},
	Name: metav1.NamespaceSystem,
}

// clusterOf identifies the cluster s asks, for the checkpoint's stream: the
// server and CA of its REST config and the UID of its kube-system namespace,
// read with the feed's own client. A user who may not read that namespace is
// told nothing: the server and CA identify the cluster alone.
func clusterOf(ctx context.Context, s *query.Session) (*checkpoint.Cluster, error) {
	cfg := s.Config()
	var uid types.UID
	if cfg.RESTConfig != nil || cfg.GetMetadata != nil {
		var err error
		uid, err = s.UID(ctx, kubeSystem)
		if err != nil && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading namespace kube-system, which identifies the cluster for --checkpoint: %w", err)
		}
	}
	c, err := checkpoint.ClusterOf(cfg.RESTConfig, uid)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// streamFilters are the flags that narrow a feed, for its checkpoint's
// stream: a checkpoint written with others is refused.
func (o *QueryOptions) streamFilters(more ...checkpoint.Filter) []checkpoint.Filter {
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
	for _, f := range more {
		if f.Value != "" {
			out = append(out, f)
		}
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

// requestNames are the objects named on the command line, as resource/name.
func requestNames(reqs []query.Request) string {
	var names []string
	for _, r := range reqs {
		for _, n := range r.Names {
			names = append(names, r.Resource.Name()+"/"+n)
		}
	}
	return strings.Join(names, ",")
}
