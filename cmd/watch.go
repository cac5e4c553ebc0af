package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	// Value types (Resource, Mode) and the factory hook tests set; no informer starts here.
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var watchLong = `Print every change to objects of the given types as it happens: a change feed
from client-go shared informers that does not stop and loses nothing.

The current state comes first, as ADDED events (unless --watch-only), then every
creation, change and deletion. When the server ends a watch, the connection drops
or the API server restarts, the informers reconnect; if they had to list again, the
feed prints exactly what changed meanwhile: objects deleted in the gap as DELETED
(marked "detectedOnRelist" in JSON), each changed object as one MODIFIED, new ones
as ADDED, and nothing it printed already. stderr says when a watch was interrupted
and when it reconnected. --request-timeout bounds each request, watches included:
a watch that reaches it is renewed, not ended.

The table shows TIME, EVENT, KIND, NAMESPACE and NAME, then the kind's usual
columns. -o json prints one JSON document per line (NDJSON):
{"type": "ADDED|MODIFIED|DELETED", "time": RFC 3339, "object": {...}}, plus
"detectedOnRelist": true, "leftScope": true (DELETED of an object that left the
--owner scope and still exists) and, with --diff, "diff": [{"path", "old", "new"}].
-o yaml prints one YAML document per event; -o name one name per event; jsonpath
and go-template apply to each event document, one line per event.

Output is written as events arrive, so it works in pipes exactly as on a terminal.
Ctrl-C or SIGTERM ends the feed with exit code 0 after printing what was received;
so does a closed stdout, as after | head.`

var watchExample = `  # Deployments in the current namespace: the current state, then every change
  kubectl idx watch deployments

  # Pods, ReplicaSets and Deployments of one app, with the fields each change touched
  kubectl idx watch pods,rs,deploy -n shop -l app=web --diff

  # Everything a Deployment owns, following the ReplicaSets of new rollouts
  kubectl idx watch pods,rs --owner deployment/web

  # Deletions across all namespaces, as JSON lines for jq
  kubectl idx watch pods -A -o json | jq -c 'select(.type=="DELETED")'

  # Changes only, one line each: event type and name
  kubectl idx watch configmaps --watch-only -o jsonpath='{.type} {.object.metadata.name}'`

// WatchPrintFlags are the output flags of `kubectl idx watch`: kubectl's flag
// groups for the formats a feed can print one event at a time.
type WatchPrintFlags struct {
	JSONYamlPrintFlags *genericclioptions.JSONYamlPrintFlags
	NamePrintFlags     *genericclioptions.NamePrintFlags
	TemplateFlags      *genericclioptions.KubeTemplatePrintFlags

	OutputFormat *string
	NoHeaders    *bool
	ShowLabels   *bool
	ColumnLabels *[]string
}

// NewWatchPrintFlags returns the flags with kubectl's defaults.
func NewWatchPrintFlags() *WatchPrintFlags {
	output, noHeaders, showLabels := "", false, false
	columnLabels := []string{}
	return &WatchPrintFlags{
		JSONYamlPrintFlags: genericclioptions.NewJSONYamlPrintFlags(),
		NamePrintFlags:     genericclioptions.NewNamePrintFlags(""),
		TemplateFlags:      genericclioptions.NewKubeTemplatePrintFlags(),
		OutputFormat:       &output,
		NoHeaders:          &noHeaders,
		ShowLabels:         &showLabels,
		ColumnLabels:       &columnLabels,
	}
}

// AddFlags registers the flags on cmd, with kubectl's help texts.
func (f *WatchPrintFlags) AddFlags(cmd *cobra.Command) {
	f.JSONYamlPrintFlags.AddFlags(cmd)
	f.NamePrintFlags.AddFlags(cmd)
	f.TemplateFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(f.OutputFormat, "output", "o", *f.OutputFormat, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, wide). JSON prints one event per line.")
	cmd.Flags().BoolVar(f.NoHeaders, "no-headers", *f.NoHeaders, "When using the default output format, don't print headers (default print headers).")
	cmd.Flags().BoolVar(f.ShowLabels, "show-labels", *f.ShowLabels, "When printing, show all labels as the last column (default hide labels column).")
	cmd.Flags().StringSliceVarP(f.ColumnLabels, "label-columns", "L", *f.ColumnLabels, "Accepts a comma separated list of labels that are going to be presented as columns. Names are case-sensitive. You can also use multiple flag options like -L label1 -L label2...")
}

// format returns the output format, "go-template" when only --template was given.
func (f *WatchPrintFlags) format() string {
	format := *f.OutputFormat
	if tmpl := f.TemplateFlags.TemplateArgument; format == "" && tmpl != nil && *tmpl != "" {
		format = "go-template"
	}
	return format
}

// ToPrinter returns the delegate printer for formats the feed does not print
// itself (name, jsonpath, templates), nil for tables, json and yaml, and
// kubectl's error listing the allowed formats for anything else.
func (f *WatchPrintFlags) ToPrinter() (cliprinters.ResourcePrinter, error) {
	format := f.format()
	switch format {
	case "", "wide", "json", "yaml":
		return nil, nil
	}
	if p, err := f.NamePrintFlags.ToPrinter(format); !genericclioptions.IsNoCompatiblePrinterError(err) {
		return p, err
	}
	if p, err := f.TemplateFlags.ToPrinter(format); !genericclioptions.IsNoCompatiblePrinterError(err) {
		return p, err
	}
	allowed := []string{"json", "yaml", "wide"}
	allowed = append(allowed, f.NamePrintFlags.AllowedFormats()...)
	allowed = append(allowed, f.TemplateFlags.AllowedFormats()...)
	return nil, genericclioptions.NoCompatiblePrinterError{OutputFormat: &format, AllowedFormats: allowed}
}

// WatchOptions holds the flags and resolved state of `kubectl idx watch`.
type WatchOptions struct {
	*Flags
	PrintFlags *WatchPrintFlags

	LabelSelector string
	FieldSelector string
	Owner         string
	WatchOnly     bool
	Diff          bool
	SyncTimeout   time.Duration
	// ShowOwner adds the OWNER column to the table.
	ShowOwner bool

	// Resolved by Complete; requests and owner by Run.
	args       []string
	expander   restmapper.CategoryExpander
	namespace  string
	requests   []query.Request
	owner      *query.Request
	printer    cliprinters.ResourcePrinter
	restConfig *rest.Config
	mapper     meta.RESTMapper
	// newFactory builds informer factories; tests swap in fake clients.
	newFactory func(cfg informer.Config) (*informer.Factory, error)
	// getMetadata reads one object's metadata (the --owner object's UID).
	getMetadata func(ctx context.Context, res informer.Resource, namespace, name string) (metav1.Object, error)
	// closed, when non-nil, is closed when stdout's reader has gone away.
	closed <-chan struct{}
	// contexts are the contexts asked, when more than one (runContexts).
	contexts []string
	// context names the one context of a copy made by forContext, for its
	// warnings.
	context string

	// stderr serializes warnings, which informer goroutines write.
	stderr sync.Mutex

	genericiooptions.IOStreams
}

// NewWatchOptions returns WatchOptions with kubectl's printing flags.
func NewWatchOptions(f *Flags, streams genericiooptions.IOStreams) *WatchOptions {
	return &WatchOptions{
		Flags:       newFlags(f),
		PrintFlags:  NewWatchPrintFlags(),
		SyncTimeout: 60 * time.Second,
		IOStreams:   streams,
	}
}

// NewCmdWatch returns the watch command.
func NewCmdWatch(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewWatchOptions(f, streams)
	cmd := &cobra.Command{
		Use:     "watch (TYPE[.VERSION][.GROUP][,TYPE...] [NAME ...] | TYPE/NAME ...) [flags]",
		Short:   "Print every change to objects of the given types, as a feed that survives reconnects",
		Long:    watchLong,
		Example: watchExample,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	// Types and names complete as for `kubectl idx`.
	c := &completer{getter: f.ConfigFlags, flags: f, requestTimeout: f.ConfigFlags.Timeout, timeout: 5 * time.Second}
	cmd.ValidArgsFunction = c.typeAndName
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	cmd.Flags().StringVar(&o.Owner, "owner", "", "Only objects owned by this object, given as TYPE/NAME (e.g. deployment/web), directly or through owners in between such as ReplicaSets, including the object itself when its type is watched.")
	cmd.Flags().BoolVar(&o.ShowOwner, "show-owner", false, "In the table, show each object's top-level controller (Deployment, StatefulSet, CronJob, a custom resource, ...) as an OWNER column, Kind/name, as it was when the event was printed; <none> for objects no controller owns.")
	cmd.Flags().BoolVar(&o.WatchOnly, "watch-only", false, "Print changes only, not the current state first.")
	cmd.Flags().BoolVar(&o.Diff, "diff", false, "For MODIFIED events, print the fields that changed with their old and new values (resourceVersion, managedFields and generation counters left out).")
	cmd.Flags().DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "How long to wait for the informer caches to sync before giving up; 0 waits forever.")
	return cmd
}

// Complete resolves the namespace, the clients and the printer and keeps the
// arguments; it sends no request to the server.
func (o *WatchOptions) Complete(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return errors.New(`you must specify the type of resource to watch; use "kubectl api-resources" for a complete list of supported resources`)
	}
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	o.printer = p
	o.args = args
	if o.closed == nil {
		o.closed = stdoutClosed(o.Out)
	}
	if o.newFactory != nil {
		// Tests resolved the clients already.
		return nil
	}
	if o.contexts, err = o.Flags.contextNames(); err != nil || o.contexts != nil {
		return err
	}
	if o.namespace, o.restConfig, o.mapper, o.expander, err = resolveClients(o.ConfigFlags, o.AllNamespaces); err != nil {
		return err
	}
	return nil
}

// Validate checks the flags and the shape of the arguments; it does no I/O.
func (o *WatchOptions) Validate() error {
	if o.Flags != nil && o.AllNamespaces && namesObjects(o.args) {
		return errors.New("a resource cannot be retrieved by name across all namespaces")
	}
	return o.validateFlags()
}

// resolve maps the arguments and --owner's type through discovery, the first
// step of Run (unless done already).
func (o *WatchOptions) resolve() error {
	if o.requests != nil {
		return nil
	}
	var err error
	if o.requests, _, err = query.ParseResourceArgs(o.mapper, o.expander, o.args); err != nil {
		return err
	}
	if o.Owner == "" {
		return nil
	}
	typ, name, _ := strings.Cut(o.Owner, "/")
	m, err := query.MappingFor(o.mapper, typ)
	if err != nil {
		return err
	}
	o.owner = &query.Request{Resource: informer.FromMapping(m), Names: []string{name}}
	if o.Flags != nil && o.AllNamespaces && o.owner.Resource.Namespaced {
		return fmt.Errorf("--owner %s names a namespaced object: use it with --namespace, not --all-namespaces", o.Owner)
	}
	return nil
}

// validateFlags checks the flag values.
func (o *WatchOptions) validateFlags() error {
	if o.Owner != "" {
		typ, name, ok := strings.Cut(o.Owner, "/")
		if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("--owner must be TYPE/NAME, e.g. deployment/web, got %q", o.Owner)
		}
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return fmt.Errorf("invalid label selector %q: %w", o.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
		return fmt.Errorf("invalid field selector %q: %w", o.FieldSelector, err)
	}
	if o.SyncTimeout < 0 {
		return fmt.Errorf("--sync-timeout must not be negative, got %s", o.SyncTimeout)
	}
	if o.Diff && o.PrintFlags.format() == "name" {
		return errors.New("--diff cannot be used with -o name: names carry no fields; use -o json or the default table")
	}
	return nil
}

// Run asks the query engine for the feed and prints events until ctx ends or
// stdout closes.
func (o *WatchOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runContexts(ctx)
	}
	if err := o.resolve(); err != nil {
		return err
	}
	format := o.PrintFlags.format()
	reqs, sources := o.feedRequests(format)

	// Stop when stdout's reader has gone: with nothing to print, a feed would
	// otherwise only notice at its next write, and `| head` would hang until then.
	ctx, cancel := o.untilStdoutCloses(ctx)
	defer cancel()

	s := o.session()
	out := bufio.NewWriterSize(o.Out, 64<<10)
	popts := o.printOptions(format, sources)
	if o.ShowOwner && printers.IsHuman(format) {
		owners, stop := s.TopOwners(ctx)
		defer stop()
		popts.Owner = owners.Of
	}
	p := printers.NewEventPrinter(popts, o.printer)
	return s.Watch(ctx, reqs, o.watchOptions(),
		func(ev *feed.Event) error { return p.Print(out, ev) },
		func() error {
			if err := p.Flush(out); err != nil {
				return err
			}
			return out.Flush()
		})
}

// feedRequests are the types to watch, each read as much as format needs,
// and the printer's sources, one per type.
func (o *WatchOptions) feedRequests(format string) ([]query.Request, []printers.WatchSource) {
	human := printers.IsHuman(format)
	sources := make([]printers.WatchSource, len(o.requests))
	reqs := make([]query.Request, len(o.requests))
	for i, r := range o.requests {
		sources[i] = printers.WatchSource{GVK: r.Resource.GVK}
		reqs[i] = r
		switch {
		case human && o.Diff:
			// The server's rows, with whole objects to report changes field by field.
			reqs[i].Mode = informer.FullRows
		case human:
			// The server's rows: every kind printed with its own columns.
			reqs[i].Mode = informer.Rows
		case o.Diff:
			// Changes are reported field by field.
		case format == "name":
			reqs[i].Mode = informer.MetadataOnly
		}
	}
	return reqs, sources
}

// untilStdoutCloses returns ctx ended when stdout's reader goes away.
func (o *WatchOptions) untilStdoutCloses(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if o.closed != nil {
		go func() {
			select {
			case <-o.closed:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// session is the query engine over the resolved clients.
func (o *WatchOptions) session() *query.Session {
	return query.NewSession(query.Config{
		RESTConfig:        o.restConfig,
		Mapper:            o.mapper,
		Namespace:         o.namespace,
		LabelSelector:     o.LabelSelector,
		FieldSelector:     o.FieldSelector,
		KeepManagedFields: o.PrintFlags.JSONYamlPrintFlags.ShowManagedFields,
		SyncTimeout:       o.SyncTimeout,
		WarningText:       warningText,
		NewFactory:        o.newFactory,
		GetMetadata:       o.getMetadata,
	})
}

// printOptions are the printer's options for format.
func (o *WatchOptions) printOptions(format string, sources []printers.WatchSource) printers.WatchOptions {
	return printers.WatchOptions{
		Format:       format,
		NoHeaders:    *o.PrintFlags.NoHeaders,
		ShowLabels:   *o.PrintFlags.ShowLabels,
		ColumnLabels: *o.PrintFlags.ColumnLabels,
		Diff:         o.Diff,
		Sources:      sources,
	}
}

// watchOptions are the feed's options, its warnings written by o.
func (o *WatchOptions) watchOptions() query.WatchOptions {
	opts := query.WatchOptions{
		WatchOnly:       o.WatchOnly,
		Diff:            o.Diff,
		OnWatchLost:     o.watchLost,
		OnWatchRestored: o.watchRestored,
		Warn:            func(err error) { o.warnf("%s", err) },
	}
	if o.owner != nil {
		opts.Owner = &query.ObjectRef{Resource: o.owner.Resource, Name: o.owner.Names[0]}
	}
	return opts
}

// forContext returns options that watch the one context name, with its own
// clients and types, whose warnings name the context and are written under
// o's lock.
func (o *WatchOptions) forContext(name string) (*WatchOptions, error) {
	c := &WatchOptions{
		Flags:         o.Flags.forContext(name),
		PrintFlags:    o.PrintFlags,
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		Owner:         o.Owner,
		WatchOnly:     o.WatchOnly,
		Diff:          o.Diff,
		SyncTimeout:   o.SyncTimeout,
		ShowOwner:     o.ShowOwner,
		args:          o.args,
		printer:       o.printer,
		context:       name,
		IOStreams:     genericiooptions.IOStreams{In: o.In, Out: o.Out, ErrOut: &lockedWriter{mu: &o.stderr, w: o.ErrOut}},
	}
	var err error
	if c.namespace, c.restConfig, c.mapper, c.expander, err = resolveClients(c.ConfigFlags, c.AllNamespaces); err != nil {
		return nil, err
	}
	if err := c.resolve(); err != nil {
		return nil, err
	}
	return c, nil
}

// lockedWriter writes to w under mu: the warnings of several contexts' feeds
// never interleave.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runContexts follows the feeds of several contexts in one stream: every
// event names its context, each context reconnects on its own, and one that
// cannot start or fails for good is a warning naming it while the others go
// on. It ends when ctx ends or stdout closes; the exit code says whether a
// context failed.
func (o *WatchOptions) runContexts(ctx context.Context) error {
	format := o.PrintFlags.format()
	ctx, cancel := o.untilStdoutCloses(ctx)
	defer cancel()

	// Each context's types are resolved first: the printer knows every kind
	// before the first row.
	resolved := fanOut(ctx, o.contexts, func(_ context.Context, name string) (*WatchOptions, error) {
		return o.forContext(name)
	})
	var failed atomic.Int32
	var sources []printers.WatchSource
	at := map[schema.GroupVersionKind]int{}
	sourceOf := make([][]int, len(resolved))
	for i, r := range resolved {
		if r.Err != nil {
			failed.Add(1)
			for _, w := range contextWarnings(r.Context, r.Err) {
				o.warnf("%s", w)
			}
			continue
		}
		for _, req := range r.Answer.requests {
			gvk := req.Resource.GVK
			if _, ok := at[gvk]; !ok {
				at[gvk] = len(sources)
				sources = append(sources, printers.WatchSource{GVK: gvk})
			}
			sourceOf[i] = append(sourceOf[i], at[gvk])
		}
	}
	if int(failed.Load()) == len(resolved) {
		return contextsOutcome(len(resolved), len(resolved))
	}

	popts := o.printOptions(format, sources)
	popts.Contexts = true
	p := printers.NewEventPrinter(popts, o.printer)
	out := bufio.NewWriterSize(o.Out, 64<<10)
	var mu sync.Mutex
	var printErr error
	var wg sync.WaitGroup
	sessions := make([]*query.Session, len(resolved))
	owners := map[string]func(runtime.Object) string{}
	for i, r := range resolved {
		if r.Answer == nil {
			continue
		}
		sessions[i] = r.Answer.session()
		if o.ShowOwner && printers.IsHuman(format) {
			top, stop := sessions[i].TopOwners(ctx)
			defer stop()
			owners[r.Context] = top.Of
		}
	}
	if len(owners) > 0 {
		p.SetContextOwners(owners)
	}
	for i, r := range resolved {
		c, s := r.Answer, sessions[i]
		if c == nil {
			continue
		}
		reqs, _ := c.feedRequests(format)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Watch(ctx, reqs, c.watchOptions(),
				func(ev *feed.Event) error {
					ev.Source = sourceOf[i][ev.Source]
					ev.Context = r.Context
					mu.Lock()
					defer mu.Unlock()
					if err := p.Print(out, ev); err != nil {
						printErr = err
						cancel()
						return err
					}
					return nil
				},
				func() error {
					mu.Lock()
					defer mu.Unlock()
					if err := p.Flush(out); err != nil {
						printErr = err
						cancel()
						return err
					}
					if err := out.Flush(); err != nil {
						printErr = err
						cancel()
						return err
					}
					return nil
				})
			if err != nil && ctx.Err() == nil {
				failed.Add(1)
				for _, w := range contextWarnings(r.Context, err) {
					o.warnf("%s", w)
				}
			}
		}()
	}
	wg.Wait()
	if printErr != nil {
		return printErr
	}
	if err := contextsOutcome(int(failed.Load()), len(resolved)); err != nil {
		return err
	}
	return ctx.Err()
}

// watchLost says on stderr that a watch is down.
func (o *WatchOptions) watchLost(res informer.Resource, err error) {
	o.warnf("watch of %s interrupted: %s; reconnecting", res.Name(), watchCause(err))
}

// watchCause words why a watch is down in a few words: the server's message, or
// the transport's error without the request URL. kubectl's wording of a refused
// connection ("did you specify the right host or port?") suits a command that
// never connected, not a feed that was connected a moment ago.
func watchCause(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

// watchRestored says on stderr that a watch is back.
func (o *WatchOptions) watchRestored(r informer.Reconnect) {
	o.warnf("watch of %s reconnected after %s", r.Resource.Name(), roundDuration(r.Down))
}

func (o *WatchOptions) warnf(format string, args ...any) {
	o.stderr.Lock()
	defer o.stderr.Unlock()
	msg := fmt.Sprintf(format, args...)
	if o.context != "" {
		msg = prefixContext(o.context, msg)
	}
	fmt.Fprintf(o.ErrOut, "warning: %s\n", msg)
}

// roundDuration keeps two or three significant digits: 15ms, 2.3s, 1m5s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
