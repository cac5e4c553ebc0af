package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// header is the first line of a checkpoint: the format and its version.
// This kubectl idx writes version and reads it and the versions before it
// from oldestVersion (doc.go says what each adds).
const (
	headerPrefix  = "kubectl-idx checkpoint v"
	version       = 2
	oldestVersion = 1
)

var header = headerPrefix + strconv.Itoa(version)

// host is what a checkpoint takes of its process: the user whose files it
// may use, the clock its records are stamped with, and the journal size
// below which its file is not rewritten; tests stand in others, and a step
// between the look at a path and its open, where they replace the file.
type host struct {
	// euid is the user whose files a checkpoint may be: the process's
	// effective user, who owns the files it creates.
	euid func() int
	now  func() time.Time
	// minCompaction is the journal size below which a checkpoint is not
	// rewritten however small its snapshot: a feed of a few objects that
	// change often rewrites its file every 1 MiB of changes, not at every
	// change.
	minCompaction int64
	// afterLstat runs between lock's look at the path and its open.
	afterLstat func(string)
}

// processHost is this process's host.
func processHost() host {
	return host{euid: os.Geteuid, now: time.Now, minCompaction: 1 << 20, afterLstat: func(string) {}}
}

// syncInterval is how often appended records are fsynced: a crash of the
// machine loses at most that much of the checkpoint (the feed then prints
// those lines again), a killed process nothing it wrote.
const syncInterval = time.Second

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Stream identifies one kubeconfig context's feed. Two streams are the same
// when every field is; Resources are compared as a set (a source's objects
// are recorded under its resource's name).
type Stream struct {
	// Context is the kubeconfig context's name.
	Context string `json:"context"`
	// Command is "watch" or "events".
	Command string `json:"command"`
	// Resources are the types the feed watches, as resource names
	// ("pods", "deployments.apps"), in the feed's source order.
	Resources []string `json:"resources"`
	// Namespace is the namespace, "" for all of them.
	Namespace string `json:"namespace"`
	// Filters are the other flags that narrow the feed, by flag name, with
	// their values as given or resolved ("--owner": "deployment/web uid
	// 0f3c...").
	Filters []Filter `json:"filters,omitempty"`
	// Cluster is the cluster the context's feed reads, compared as
	// sameCluster says; nil when not known: a stream of a version 1 file, or
	// one a caller gives without it, which is recorded and resumed without
	// the check.
	Cluster *Cluster `json:"cluster,omitempty"`
}

// check returns why s cannot be written and read back as it is: a string
// that is not UTF-8, which JSON would change, or a flag given twice.
func (s *Stream) check() error {
	strs := append([]string{s.Context, s.Command, s.Namespace}, s.Resources...)
	if c := s.Cluster; c != nil {
		strs = append(strs, c.Server, c.CA, string(c.KubeSystemUID))
	}
	flags := map[string]bool{}
	for _, f := range s.Filters {
		if flags[f.Flag] {
			return fmt.Errorf("the flag %s is given twice", shown(f.Flag))
		}
		flags[f.Flag] = true
		strs = append(strs, f.Flag, f.Value)
	}
	for _, v := range strs {
		if !utf8.ValidString(v) {
			return fmt.Errorf("%s is not UTF-8", shown(v))
		}
	}
	return nil
}

// streamName words the stream of context c for a message.
func streamName(c string) string {
	if c == "" {
		return "the feed"
	}
	return "the feed of context " + contextName(c)
}

// Filter is one flag that narrows a stream and its value.
type Filter struct {
	Flag  string `json:"flag"`
	Value string `json:"value"`
}

// File is an open, locked checkpoint. Open it, Resume the streams of the
// feed, record through their Feed handles, and Close it when the feed has
// stopped.
type File struct {
	path string
	host host

	mu   sync.Mutex
	file *os.File
	// streams are what the file holds (or, once resumed, what the feed
	// records), in the order Resume was given them, then the ones kept for
	// contexts that could not start.
	streams []*streamModel
	// fresh is set for a file that held nothing; clean when it ended with
	// {"closed":true}; created when Open created it; resumed once Resume
	// took the feed's streams up.
	fresh, clean, created, resumed bool
	// format is the version of the file read, 0 for a fresh one.
	format int
	// cut is set when the file's last record was cut short.
	cut      bool
	warnings []string
	// snapshot is the size of the last snapshot written, journal what was
	// appended since.
	snapshot, journal int64
	unsynced          bool
	err               error
	stop, stopped     chan struct{}
	closing, closed   bool
	// compacting is set while a snapshot is written in the background;
	// pending are the records appended since it was taken.
	compacting bool
	pending    [][]byte
	background sync.WaitGroup
	// syncMu keeps a file from being closed while it is fsynced.
	syncMu sync.Mutex
	// rewrites counts the snapshots written.
	rewrites int
}

// streamModel is one stream's state, as the records add up.
type streamModel struct {
	stream  Stream
	printed int64
	// recorded is when the stream's last record was written; zero when the
	// file does not say (written before records were stamped).
	recorded time.Time
	sources  map[string]*sourceModel
	owners   map[types.UID][]metav1.OwnerReference
	// unavailable marks a stream kept for a context that could not start:
	// it is carried unchanged.
	unavailable bool
}

type sourceModel struct {
	resourceVersion string
	// since is since when every change of the source was recorded one by
	// one: its first position, or the last relist, which folded what came
	// before. Zero when the file does not say.
	since     time.Time
	relisting *feed.Gap
	objects   map[string]object
}

func newStreamModel(s Stream) *streamModel {
	m := &streamModel{stream: s, sources: map[string]*sourceModel{}, owners: map[types.UID][]metav1.OwnerReference{}}
	for _, r := range s.Resources {
		m.sources[r] = &sourceModel{objects: map[string]object{}}
	}
	return m
}

// The records, as JSON.

// snapshotRecord holds every stream's whole state.
type snapshotRecord struct {
	Writer  *writerInfo   `json:"writer,omitempty"`
	Streams []streamState `json:"streams"`
}

// writerInfo names the process that wrote the file, for the error another
// feed gets while it holds it.
type writerInfo struct {
	PID int `json:"pid"`
}

type streamState struct {
	Stream Stream `json:"stream"`
	// Printed counts the events the stream's feeds printed, over every run,
	// up to this record.
	Printed int64 `json:"printed"`
	// Recorded is when the stream's last record was written, by the
	// writer's clock.
	Recorded metav1.Time   `json:"recorded,omitzero"`
	Sources  []sourceState `json:"sources"`
	Owners   []ownerState  `json:"owners,omitempty"`
}

type sourceState struct {
	Resource string `json:"resource"`
	// ResourceVersion is the position: every change up to it was printed.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Since is since when every change of the source was printed one by
	// one (sourceModel.since).
	Since metav1.Time `json:"since,omitzero"`
	// Relisting is set while a relist is being printed: resumed, the feed
	// lists again rather than watch from the position (see Feed.Relisting).
	Relisting *feed.Gap `json:"relisting,omitempty"`
	Objects   []object  `json:"objects,omitempty"`
}

// object is one object a feed knows.
type object struct {
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name"`
	UID             types.UID `json:"uid"`
	ResourceVersion string    `json:"resourceVersion"`
	// Unprinted marks an object --owner follows without having printed it
	// in this version (out of the scope).
	Unprinted bool `json:"unprinted,omitempty"`
	// Refs, when present, are the references --owner follows from it.
	Refs *[]metav1.OwnerReference `json:"refs,omitempty"`
	// At is when the record that put the object in this version was
	// written: about when the feed printed the change, or, for the objects
	// of a source's first list, when the feed started.
	At metav1.Time `json:"at,omitzero"`
}

type ownerState struct {
	UID  types.UID               `json:"uid"`
	Refs []metav1.OwnerReference `json:"refs"`
}

// changeRecord is one stream's change.
type changeRecord struct {
	Stream int `json:"stream"`
	// Time is when the record was written, by the writer's clock.
	Time      metav1.Time       `json:"time,omitzero"`
	Positions map[string]string `json:"positions,omitempty"`
	Put       []sourcedObject   `json:"put,omitempty"`
	Drop      []sourcedObject   `json:"drop,omitempty"`
	PutOwners []ownerState      `json:"putOwners,omitempty"`
	// DropOwners are owners no longer remembered on their own.
	DropOwners []types.UID `json:"dropOwners,omitempty"`
	Printed    int         `json:"printed,omitempty"`
	// Relisting marks a relist about to be printed.
	Relisting *relistingMark `json:"relisting,omitempty"`
}

type sourcedObject struct {
	Resource string `json:"resource"`
	object
}

type relistingMark struct {
	Resource string   `json:"resource"`
	Gap      feed.Gap `json:"gap"`
}

// anyRecord is any line's JSON, to tell which kind it is.
type anyRecord struct {
	Streams *[]streamState `json:"streams"`
	Stream  *int           `json:"stream"`
	Closed  bool           `json:"closed"`
}

// Open opens the checkpoint at path, creating it (0600) if it does not
// exist, locks it, and reads what it holds. A file held by another feed,
// damaged, or of another format is an error naming it, as is anything at
// path but a regular file of the user's own: a symbolic link is not
// followed (doc.go's Files).
func Open(path string) (*File, error) {
	return openWith(path, processHost())
}

// openWith is Open on h.
func openWith(path string, h host) (*File, error) {
	fd, created, err := h.lock(path)
	if err != nil {
		return nil, err
	}
	f := &File{path: path, host: h, file: fd, created: created}
	h.removeStaleTemps(path)
	if err := f.read(); err != nil {
		fd.Close()
		return nil, err
	}
	f.stop, f.stopped = make(chan struct{}), make(chan struct{})
	go f.syncLoop()
	return f, nil
}

// Path is the checkpoint's path.
func (f *File) Path() string { return f.path }

// Warnings say what reading the file found worth telling, a last record cut
// short, a feed that did not stop cleanly, then what Resume did: a stream
// resumed without knowing its cluster.
func (f *File) Warnings() []string { return slices.Clone(f.warnings) }

// read takes up what the file holds.
func (f *File) read() error {
	data, err := io.ReadAll(f.file)
	if err != nil {
		return fmt.Errorf("reading checkpoint %s: %w", f.path, err)
	}
	if len(data) == 0 {
		// New, or created empty to be one.
		f.fresh = true
		return nil
	}
	damaged := func(line int, format string, args ...any) error {
		return fmt.Errorf("checkpoint %s is damaged: line %d: %s", f.path, line, fmt.Sprintf(format, args...))
	}
	r := bufio.NewReader(bytes.NewReader(data))
	first, err := r.ReadString('\n')
	first = strings.TrimSuffix(first, "\n")
	v, ok := strings.CutPrefix(first, headerPrefix)
	if err != nil || !ok || !isDecimal(v) {
		if len(first) > 40 {
			first = first[:40] + "..."
		}
		return fmt.Errorf("checkpoint %s is not a kubectl idx checkpoint: its first line is %q", f.path, first)
	}
	if f.format, _ = strconv.Atoi(v); f.format < oldestVersion || f.format > version || v != strconv.Itoa(f.format) {
		return fmt.Errorf("checkpoint %s has format version %s; this kubectl idx reads versions %d to %d", f.path, v, oldestVersion, version)
	}
	lineNo := 1
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		lineNo++
		cut := err == io.EOF
		payload, perr := checkedPayload(line)
		if perr != nil || cut {
			if !cut {
				return damaged(lineNo, "%v", perr)
			}
			if lineNo == 2 {
				return damaged(lineNo, "its first record is cut short")
			}
			// The feed was killed while appending its last record: the
			// lines it covered may be printed again, as after any kill.
			f.cut = true
			f.warnings = append(f.warnings, fmt.Sprintf("checkpoint %s: its last record was cut short, as when a feed is killed while writing it; resuming from the record before", f.path))
			break
		}
		if f.clean {
			return damaged(lineNo, "a record follows the end")
		}
		if err := f.apply(payload, lineNo == 2); err != nil {
			return damaged(lineNo, "%v", err)
		}
	}
	if !f.clean {
		f.warnings = append(f.warnings, fmt.Sprintf("checkpoint %s: the feed that wrote it did not stop cleanly; the lines it printed after its last record will be printed again", f.path))
	}
	return nil
}

// isDecimal reports whether s is a version number: decimal digits only.
func isDecimal(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// checkedPayload returns a line's JSON after checking its checksum.
func checkedPayload(line []byte) ([]byte, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	sum, payload, ok := bytes.Cut(line, []byte(" "))
	if !ok || len(sum) != 8 {
		return nil, errors.New("not a checksummed record")
	}
	want, err := strconv.ParseUint(string(sum), 16, 32)
	if err != nil {
		return nil, errors.New("not a checksummed record")
	}
	if crc32.Checksum(payload, crcTable) != uint32(want) {
		return nil, errors.New("checksum mismatch")
	}
	return payload, nil
}

// apply takes up one record; first says it is the file's first.
func (f *File) apply(payload []byte, first bool) error {
	var kind anyRecord
	if err := json.Unmarshal(payload, &kind); err != nil {
		return err
	}
	switch {
	case kind.Streams != nil:
		if !first {
			return errors.New("a snapshot after the first record")
		}
		var s snapshotRecord
		if err := json.Unmarshal(payload, &s); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, st := range s.Streams {
			if seen[st.Stream.Context] {
				return fmt.Errorf("%s is there twice", streamName(st.Stream.Context))
			}
			seen[st.Stream.Context] = true
			if err := st.Stream.check(); err != nil {
				return fmt.Errorf("%s: %w", streamName(st.Stream.Context), err)
			}
			if f.format == 1 {
				// Version 1 did not record clusters: a field of that name
				// is not one this kubectl idx wrote.
				st.Stream.Cluster = nil
			}
			f.streams = append(f.streams, modelOf(st))
		}
		return nil
	case first:
		return errors.New("the first record is not a snapshot")
	case kind.Closed:
		f.clean = true
		return nil
	case kind.Stream != nil:
		var c changeRecord
		if err := json.Unmarshal(payload, &c); err != nil {
			return err
		}
		if c.Stream < 0 || c.Stream >= len(f.streams) {
			return fmt.Errorf("a change of stream %d, of %d", c.Stream, len(f.streams))
		}
		return f.streams[c.Stream].applyChange(&c)
	}
	return errors.New("an unknown record")
}

func modelOf(st streamState) *streamModel {
	m := newStreamModel(st.Stream)
	m.printed, m.recorded = st.Printed, st.Recorded.Time
	for _, src := range st.Sources {
		sm := m.sources[src.Resource]
		if sm == nil {
			sm = &sourceModel{objects: map[string]object{}}
			m.sources[src.Resource] = sm
		}
		sm.resourceVersion, sm.relisting, sm.since = src.ResourceVersion, src.Relisting, src.Since.Time
		for _, o := range src.Objects {
			sm.objects[objectKey(o.Namespace, o.Name)] = o
		}
	}
	for _, o := range st.Owners {
		m.owners[o.UID] = o.Refs
	}
	return m
}

func objectKey(namespace, name string) string { return namespace + "/" + name }

// applyChange adds a change up.
func (m *streamModel) applyChange(c *changeRecord) error {
	source := func(res string) (*sourceModel, error) {
		if sm := m.sources[res]; sm != nil {
			return sm, nil
		}
		return nil, fmt.Errorf("a change of resource %q, which the stream does not watch", res)
	}
	t := c.Time.Time
	if !t.IsZero() {
		m.recorded = t
	}
	if c.Relisting != nil {
		sm, err := source(c.Relisting.Resource)
		if err != nil {
			return err
		}
		g := c.Relisting.Gap
		// What changed before the relist is folded in it.
		sm.relisting, sm.since = &g, t
	}
	for res, rv := range c.Positions {
		sm, err := source(res)
		if err != nil {
			return err
		}
		if sm.resourceVersion == "" {
			sm.since = t
		}
		sm.resourceVersion = rv
		if sm.relisting != nil && !before(rv, sm.relisting.To) {
			// The relist has been printed.
			sm.relisting = nil
		}
	}
	for _, o := range c.Drop {
		sm, err := source(o.Resource)
		if err != nil {
			return err
		}
		delete(sm.objects, objectKey(o.Namespace, o.Name))
	}
	for _, o := range c.Put {
		sm, err := source(o.Resource)
		if err != nil {
			return err
		}
		obj := o.object
		obj.At = c.Time
		sm.objects[objectKey(o.Namespace, o.Name)] = obj
	}
	for _, uid := range c.DropOwners {
		delete(m.owners, uid)
	}
	for _, o := range c.PutOwners {
		m.owners[o.UID] = o.Refs
	}
	m.printed += int64(c.Printed)
	return nil
}

// before reports whether resourceVersion a is older than b; versions that
// do not compare are not.
func before(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c < 0
}

// clone returns a copy of m that its changes do not reach: maps are copied,
// the objects in them are values never changed once recorded.
func (m *streamModel) clone() *streamModel {
	c := &streamModel{stream: m.stream, printed: m.printed, recorded: m.recorded, sources: map[string]*sourceModel{}, owners: maps.Clone(m.owners), unavailable: m.unavailable}
	for r, sm := range m.sources {
		c.sources[r] = &sourceModel{resourceVersion: sm.resourceVersion, since: sm.since, relisting: sm.relisting, objects: maps.Clone(sm.objects)}
	}
	return c
}

// state is the model as a snapshot holds it.
func (m *streamModel) state() streamState {
	st := streamState{Stream: m.stream, Printed: m.printed, Recorded: metav1.NewTime(m.recorded)}
	resources := slices.Clone(m.stream.Resources)
	for r := range m.sources {
		if !slices.Contains(resources, r) {
			resources = append(resources, r)
		}
	}
	for _, r := range resources {
		sm := m.sources[r]
		src := sourceState{Resource: r, ResourceVersion: sm.resourceVersion, Since: metav1.NewTime(sm.since), Relisting: sm.relisting}
		for _, k := range slices.Sorted(maps.Keys(sm.objects)) {
			src.Objects = append(src.Objects, sm.objects[k])
		}
		st.Sources = append(st.Sources, src)
	}
	for _, uid := range slices.Sorted(maps.Keys(m.owners)) {
		st.Owners = append(st.Owners, ownerState{UID: uid, Refs: m.owners[uid]})
	}
	return st
}

// encode returns a record's line: its checksum, a space, its JSON.
func encode(rec any) ([]byte, error) {
	payload, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(payload)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(payload, crcTable))
	line = append(line, payload...)
	return append(line, '\n'), nil
}

// Feed is the handle of one stream of an open checkpoint.
type Feed struct {
	f *File
	i int
	// restored is what the checkpoint held of the stream, nil when it held
	// nothing to resume from.
	restored *feed.State
	relist   map[int]*feed.Gap
}

// Resume checks that the checkpoint was written for streams (and, for the
// contexts in unavailable, which could not start, keeps what it holds of
// them unchanged), and returns a handle per stream, in their order. A
// checkpoint that held nothing takes the streams up. Any difference between
// the streams and those the checkpoint was written for is an error naming
// it: a checkpoint is never reused for another feed.
func (f *File) Resume(streams []Stream, unavailable []string) ([]*Feed, error) {
	if c, ok := duplicateContext(streams, unavailable); ok {
		return nil, fmt.Errorf("checkpoint %s: context %s is given twice", f.path, contextName(c))
	}
	for _, s := range streams {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("checkpoint %s cannot record %s: %w", f.path, streamName(s.Context), err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var models []*streamModel
	if f.fresh {
		for _, s := range streams {
			models = append(models, newStreamModel(s))
		}
	} else {
		var err error
		if models, err = f.match(streams, unavailable); err != nil {
			return nil, err
		}
	}
	f.streams = models
	handles := make([]*Feed, len(streams))
	for i := range streams {
		handles[i] = &Feed{f: f, i: i, relist: map[int]*feed.Gap{}}
		if !f.fresh {
			handles[i].restored, handles[i].relist = models[i].restore()
			if handles[i].restored == nil {
				// The feed starts afresh: what came before is not in it.
				for _, sm := range models[i].sources {
					sm.since = time.Time{}
				}
			}
		}
	}
	f.fresh, f.resumed = false, true
	// Resumed, the file starts afresh: one snapshot, no end mark.
	if err := f.compactLocked(false); err != nil {
		return nil, err
	}
	return handles, nil
}

// match returns the file's streams in the order of streams, those of
// unavailable contexts after them, or the first difference. Contexts are
// matched by their names as given, "" (no context: a run with --server and
// credentials only) being a name like any other; only the error words them
// for reading (shown).
func (f *File) match(streams []Stream, unavailable []string) ([]*streamModel, error) {
	stored := map[string]*streamModel{}
	var storedNames, askedNames []string
	for _, m := range f.streams {
		stored[m.stream.Context] = m
		storedNames = append(storedNames, m.stream.Context)
	}
	for _, s := range streams {
		askedNames = append(askedNames, s.Context)
	}
	askedNames = append(askedNames, unavailable...)
	if !sameSet(storedNames, askedNames) {
		return nil, f.mismatch("the contexts", contextList(storedNames), contextList(askedNames))
	}
	var out []*streamModel
	for _, s := range streams {
		m := stored[s.Context]
		// Another cluster first: whatever else differs, the file is not
		// this cluster's.
		if err := f.sameCluster(s.Context, m.stream.Cluster, s.Cluster); err != nil {
			return nil, err
		}
		if err := f.sameStream(m.stream, s); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	for _, c := range unavailable {
		out = append(out, stored[c])
	}
	// Nothing changes before every stream matched: a refused Resume leaves
	// the models as the file holds them.
	for i, m := range out {
		if m.unavailable = i >= len(streams); m.unavailable {
			continue
		}
		s := streams[i]
		if m.stream.Cluster == nil && s.Cluster != nil {
			f.warnings = append(f.warnings, fmt.Sprintf("checkpoint %s: %s was recorded without its cluster, by a kubectl idx that wrote format version 1: resuming without checking that it is the same cluster, which is recorded from now on", f.path, streamName(s.Context)))
		}
		s.Cluster = merged(m.stream.Cluster, s.Cluster)
		m.stream = s
	}
	return out, nil
}

// duplicateContext returns a context two of streams and unavailable name,
// and whether there is one.
func duplicateContext(streams []Stream, unavailable []string) (string, bool) {
	seen := map[string]bool{}
	for _, s := range streams {
		if seen[s.Context] {
			return s.Context, true
		}
		seen[s.Context] = true
	}
	for _, c := range unavailable {
		if seen[c] {
			return c, true
		}
		seen[c] = true
	}
	return "", false
}

// contextName words context c for a message: "(no context)" for "", which
// no name shown bare can be (shown).
func contextName(c string) string {
	if c == "" {
		return "(no context)"
	}
	return shown(c)
}

func contextList(names []string) string {
	out := make([]string, len(names))
	for i, c := range names {
		out[i] = contextName(c)
	}
	return strings.Join(out, ",")
}

// shown words a name from a stream for a one-line message: bare when it is
// made of the characters of Kubernetes and kubeconfig names (letters, digits,
// "-._:/@+="), quoted otherwise. Two names never read the same: a context
// named "(none)" or "a,b", a name with a space, a newline or bytes that are
// not UTF-8 is quoted, and a list of bare names joined with commas reads
// back as that list.
func shown(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-._:/@+=", r)) {
			return strconv.Quote(s)
		}
	}
	return s
}

func shownList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = shown(n)
	}
	return strings.Join(out, ",")
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// sameStream returns the first difference between the stream the file was
// written for and the one asked for, as an error.
func (f *File) sameStream(was, is Stream) error {
	in := ""
	if was.Context != "" {
		in = " in context " + contextName(was.Context)
	}
	switch {
	case was.Command != is.Command:
		return f.mismatch("the command"+in, "kubectl idx "+shown(was.Command), "kubectl idx "+shown(is.Command))
	case !sameSet(was.Resources, is.Resources):
		return f.mismatch("the types"+in, shownList(was.Resources), shownList(is.Resources))
	case was.Namespace != is.Namespace:
		return f.mismatch("the namespace"+in, namespaceName(was.Namespace), namespaceName(is.Namespace))
	}
	filters := func(fs []Filter) map[string]string {
		m := map[string]string{}
		for _, f := range fs {
			m[f.Flag] = f.Value
		}
		return m
	}
	a, b := filters(was.Filters), filters(is.Filters)
	flags := slices.Sorted(maps.Keys(a))
	for flag := range b {
		if _, ok := a[flag]; !ok {
			flags = append(flags, flag)
		}
	}
	for _, flag := range flags {
		if a[flag] != b[flag] {
			return f.mismatch(shown(flag)+in, filterValue(a, flag), filterValue(b, flag))
		}
	}
	return nil
}

func namespaceName(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return shown(ns)
}

func filterValue(m map[string]string, flag string) string {
	v, ok := m[flag]
	if !ok {
		return "not given"
	}
	return strconv.Quote(v)
}

func (f *File) mismatch(what, was, is string) error {
	verbs := [2]string{"was", "is"}
	if strings.HasPrefix(what, "the contexts") || strings.HasPrefix(what, "the types") {
		verbs = [2]string{"were", "are"}
	}
	return fmt.Errorf("checkpoint %s was written for another feed: %s %s %s, %s %s; resume with the same command, or give another file", f.path, what, verbs[0], was, verbs[1], is)
}

// restore returns the model as the feed's State, nil when it holds no
// position to resume from, and the relists under way by source.
func (m *streamModel) restore() (*feed.State, map[int]*feed.Gap) {
	relist := map[int]*feed.Gap{}
	st := &feed.State{Positions: map[int]string{}}
	for i, r := range m.stream.Resources {
		sm := m.sources[r]
		if sm.resourceVersion == "" {
			// The feed stopped before it had recorded where every source
			// stood: it starts afresh.
			return nil, map[int]*feed.Gap{}
		}
		st.Positions[i] = sm.resourceVersion
		if sm.relisting != nil {
			relist[i] = sm.relisting
		}
		for _, k := range slices.Sorted(maps.Keys(sm.objects)) {
			o := sm.objects[k]
			kn := feed.Known{Source: i, Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion, Printed: !o.Unprinted}
			if o.Refs != nil {
				kn.Followed, kn.Refs = true, *o.Refs
			}
			st.Objects = append(st.Objects, kn)
		}
	}
	for _, uid := range slices.Sorted(maps.Keys(m.owners)) {
		st.Owners = append(st.Owners, feed.Owner{UID: uid, Refs: m.owners[uid]})
	}
	return st, relist
}

// Restored is what the checkpoint held of the stream: the feed's State to
// resume from (feed.Config.Restore), nil when there is none and the feed
// starts afresh.
func (h *Feed) Restored() *feed.State { return h.restored }

// Relist returns the relist source was printing when the checkpoint's last
// record was written, nil when none was: the feed then resumes by listing
// again, not by watching from the position, lest the changes that relist
// folded be printed one by one after it.
func (h *Feed) Relist(source int) *feed.Gap { return h.relist[source] }

// Printed is how many events the stream's feeds have printed, over every
// run, as far as the checkpoint covers them.
func (h *Feed) Printed() int64 {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	return h.f.streams[h.i].printed
}

// Record appends d, a change the feed has flushed the events of.
func (h *Feed) Record(d *feed.Delta) error {
	f := h.f
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.streams[h.i]
	c := &changeRecord{Stream: h.i, Time: f.stamp(), Printed: d.Printed}
	name := func(src int) (string, error) {
		if src < 0 || src >= len(m.stream.Resources) {
			return "", fmt.Errorf("a change of source %d, of %d", src, len(m.stream.Resources))
		}
		return m.stream.Resources[src], nil
	}
	if len(d.Positions) > 0 {
		c.Positions = map[string]string{}
		for src, rv := range d.Positions {
			r, err := name(src)
			if err != nil {
				return err
			}
			c.Positions[r] = rv
		}
	}
	for _, k := range d.Put {
		r, err := name(k.Source)
		if err != nil {
			return err
		}
		c.Put = append(c.Put, sourcedObject{Resource: r, object: objectOf(k)})
	}
	for _, k := range d.Drop {
		r, err := name(k.Source)
		if err != nil {
			return err
		}
		c.Drop = append(c.Drop, sourcedObject{Resource: r, object: object{Namespace: k.Namespace, Name: k.Name}})
	}
	for _, o := range d.PutOwners {
		c.PutOwners = append(c.PutOwners, ownerState{UID: o.UID, Refs: slimRefs(o.Refs)})
	}
	c.DropOwners = d.DropOwners
	return f.appendLocked(m, c)
}

// Relisting appends that source's informer is listing again, before the
// relist's events are printed: until a position at or past the gap's end is
// recorded, a feed resumed from the checkpoint lists again too (Relist).
func (h *Feed) Relisting(source int, gap feed.Gap) error {
	f := h.f
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.streams[h.i]
	if source < 0 || source >= len(m.stream.Resources) {
		return fmt.Errorf("a relist of source %d, of %d", source, len(m.stream.Resources))
	}
	return f.appendLocked(m, &changeRecord{Stream: h.i, Time: f.stamp(), Relisting: &relistingMark{Resource: m.stream.Resources[source], Gap: gap}})
}

// stamp is the time a record is written with, to the second the file keeps.
func (f *File) stamp() metav1.Time {
	return metav1.NewTime(f.host.now().Truncate(time.Second))
}

func objectOf(k feed.Known) object {
	o := object{Namespace: k.Namespace, Name: k.Name, UID: k.UID, ResourceVersion: k.ResourceVersion, Unprinted: !k.Printed}
	if k.Followed {
		refs := slimRefs(k.Refs)
		o.Refs = &refs
	}
	return o
}

// slimRefs keeps what the feed compares of references, and their names for
// whoever reads the file: not the controller flags.
func slimRefs(refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, len(refs))
	for i, r := range refs {
		out[i] = metav1.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID}
	}
	return out
}

// appendLocked adds c up and appends it, rewriting the file when the
// changes outweigh the snapshot.
func (f *File) appendLocked(m *streamModel, c *changeRecord) error {
	if f.err != nil {
		return f.err
	}
	if f.closed {
		return fmt.Errorf("checkpoint %s is closed", f.path)
	}
	if err := m.applyChange(c); err != nil {
		return err
	}
	line, err := encode(c)
	if err != nil {
		return err
	}
	if _, err := f.file.Write(line); err != nil {
		// What was written of the line is cut short: a resumed feed drops
		// it. Nothing more is written, the feed ends.
		f.err = fmt.Errorf("writing checkpoint %s: %w", f.path, err)
		return f.err
	}
	f.journal += int64(len(line))
	f.unsynced = true
	if f.compacting {
		f.pending = append(f.pending, line)
	} else if f.journal > max(f.snapshot, f.host.minCompaction) && !f.closing {
		// The snapshot is written and fsynced apart, while records go on
		// being appended; those are appended to it too before it replaces
		// the file.
		f.compacting, f.pending = true, nil
		models := make([]*streamModel, len(f.streams))
		for i, m := range f.streams {
			models[i] = m.clone()
		}
		f.background.Add(1)
		go f.compact(models)
	}
	return nil
}

// compact rewrites the file as a snapshot of models, then the records
// appended since they were taken.
func (f *File) compact(models []*streamModel) {
	defer f.background.Done()
	tmp, size, err := f.writeSnapshot(models, false)
	f.mu.Lock()
	if err == nil && f.err == nil {
		var old *os.File
		if old, err = f.installLocked(tmp, size, f.pending); err == nil {
			tmp = nil
			f.mu.Unlock()
			f.retire(old)
			f.mu.Lock()
		}
	}
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("writing checkpoint %s: %w", f.path, err)
	}
	f.compacting, f.pending = false, nil
	f.mu.Unlock()
	if tmp != nil {
		tmp.Close()
		os.Remove(tmp.Name())
	}
}

// compactLocked rewrites the file as one snapshot, with the end mark when
// closed, holding the lock throughout: when the feed starts and stops.
func (f *File) compactLocked(closed bool) error {
	tmp, size, err := f.writeSnapshot(f.streams, closed)
	if err != nil {
		return f.failLocked(err)
	}
	old, err := f.installLocked(tmp, size, nil)
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return f.failLocked(err)
	}
	f.retire(old)
	return nil
}

// writeSnapshot writes the snapshot of models, and the end mark when
// closed, to a temporary file in the checkpoint's directory, locked and
// fsynced, and returns it with its size. It reads models only.
func (f *File) writeSnapshot(models []*streamModel, closed bool) (*os.File, int64, error) {
	snap := snapshotRecord{Writer: &writerInfo{PID: os.Getpid()}, Streams: []streamState{}}
	for _, m := range models {
		snap.Streams = append(snap.Streams, m.state())
	}
	line, err := encode(snap)
	if err != nil {
		return nil, 0, err
	}
	buf := append([]byte(header+"\n"), line...)
	if closed {
		end, err := encode(struct {
			Closed bool `json:"closed"`
		}{true})
		if err != nil {
			return nil, 0, err
		}
		buf = append(buf, end...)
	}
	// CreateTemp makes a new file (O_CREATE|O_EXCL, 0600) under a random
	// name beside the checkpoint: nothing put there beforehand, a symbolic
	// link or another user's file, is opened instead; and the rename that
	// installs it replaces what is at the path, never what a link there
	// points to.
	tmp, err := os.CreateTemp(f.dir(), "."+filepath.Base(f.path)+".tmp-*")
	if err != nil {
		return nil, 0, err
	}
	if err := lockFile(tmp); err == nil {
		if _, err = tmp.Write(buf); err == nil {
			err = tmp.Sync()
		}
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, 0, err
	}
	return tmp, int64(len(buf)), nil
}

func (f *File) dir() string {
	if dir := filepath.Dir(f.path); dir != "" {
		return dir
	}
	return "."
}

// installLocked appends pending to tmp, renames it over the checkpoint and
// makes it the file records are appended to; it returns the file it
// replaced, which the caller retires.
func (f *File) installLocked(tmp *os.File, size int64, pending [][]byte) (*os.File, error) {
	var journal int64
	for _, l := range pending {
		if _, err := tmp.Write(l); err != nil {
			return nil, err
		}
		journal += int64(len(l))
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return nil, err
	}
	old := f.file
	f.file = tmp
	f.snapshot, f.journal, f.unsynced = size, journal, journal > 0
	f.rewrites++
	return old, nil
}

// retire makes the rename that replaced old durable and closes old, whose
// lock goes with it (the new file is locked already). A failed fsync of the
// directory leaves the rename to the file system's own pace: the next one
// makes it durable.
func (f *File) retire(old *os.File) {
	_ = syncDir(f.dir())
	f.syncMu.Lock()
	old.Close()
	f.syncMu.Unlock()
}

func (f *File) failLocked(err error) error {
	f.err = fmt.Errorf("writing checkpoint %s: %w", f.path, err)
	return f.err
}

// syncLoop fsyncs what was appended, once a second at most, without holding
// the lock the records are appended under: an fsync can take long, a
// feed's record should not.
func (f *File) syncLoop() {
	defer close(f.stopped)
	wait.Until(f.syncAppended, syncInterval, f.stop)
}

// syncAppended fsyncs the file if a record was appended since it last did.
func (f *File) syncAppended() {
	f.mu.Lock()
	fd, need := f.file, f.unsynced && f.err == nil && !f.closed
	f.unsynced = false
	f.mu.Unlock()
	if !need {
		return
	}
	f.syncMu.Lock()
	err := fd.Sync()
	f.syncMu.Unlock()
	if err != nil && !errors.Is(err, os.ErrClosed) {
		// A file replaced meanwhile was fsynced by its replacement.
		f.mu.Lock()
		_ = f.failLocked(err)
		f.mu.Unlock()
	}
}

// Close writes the final snapshot with the end mark, which says the feed
// stopped cleanly, and releases the file; a file no Resume took up is left
// as it was. Call it once every stream's feed
// has returned.
func (f *File) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closing = true
	f.mu.Unlock()
	f.background.Wait()
	f.mu.Lock()
	var err error
	if f.err == nil && f.resumed {
		// A file never resumed (a Resume refused) is left as it was: with
		// the warning it holds for the feed it was written for.
		err = f.compactLocked(true)
	}
	if err == nil {
		err = f.err
	}
	f.closed = true
	if f.fresh && f.created {
		// Never resumed: nothing to keep, unless what is at the path now is
		// no longer the file created.
		if opened, err := f.file.Stat(); err == nil {
			if now, err := os.Lstat(f.path); err == nil && os.SameFile(opened, now) {
				os.Remove(f.path)
			}
		}
	}
	f.file.Close()
	f.mu.Unlock()
	close(f.stop)
	<-f.stopped
	return err
}

// removeStaleTemps removes the temporary files a feed killed while
// rewriting path left; only the holder of the lock writes them.
func (h host) removeStaleTemps(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "."+base+".tmp-") {
			continue
		}
		// Only a regular file of this user's is one a feed wrote.
		if fi, err := e.Info(); err == nil && h.ownFile(fi) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
