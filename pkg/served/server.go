package served

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// Options configure a Server.
type Options struct {
	// Identity is the identity the starter found for the process's
	// credentials: the server answers nothing unless it finds the same.
	Identity warm.Identity
	// Version is the binary's (warm.Options.Version).
	Version string
	// Context names the kubeconfig context the process was started in, for
	// cache status.
	Context string
	// IdleTimeout is how long the process waits with nothing to answer;
	// DropAfter how long it keeps an informer, or an encoding, nobody uses.
	IdleTimeout, DropAfter time.Duration
	// Execute runs one command as a direct run of it would, with run's
	// arguments and streams in place of the process's own, and returns its
	// exit code: the command tree's. Its commands call run.Verify before
	// reading anything and run.Bind to read the pool.
	Execute func(ctx context.Context, run *Run, streams genericiooptions.IOStreams) int
}

// Server is the cache process: the warm pool of one identity and the socket
// it answers on.
type Server struct {
	opts Options
	host string
	pool *pool.Pool
	srv  *warm.Server
	// encodings keeps the JSON encodings of the objects -o json answers
	// print, for the next answer.
	encodings *printers.Encodings
	// podResources keeps the pods' requests and limits for the runs'
	// groupings.
	podResources *index.PodResourcesCache
	// trim hands back what the commands' lists left behind once none runs.
	trim *trimmer

	// ready is closed once the server has found its identity itself and
	// started its pool (pool is nil if it could not): no command is
	// answered before.
	ready chan struct{}

	// verified remembers whom the API server said a credential belongs to
	// (Run.Verify), by a hash of the credential and the connection it was
	// used on: a credential's user never changes, only whether it is still
	// accepted, which every question asks again.
	verifiedMu sync.Mutex
	verified   map[[sha256.Size]byte]warm.Identity
}

// maxVerified bounds the credentials a server remembers: an exec plugin's
// tokens rotate, and each is verified once.
const maxVerified = 64

// New returns a Server of opts; Serve runs it.
func New(opts Options) *Server {
	return &Server{opts: opts, verified: map[[sha256.Size]byte]warm.Identity{}, ready: make(chan struct{}), trim: newTrimmer()}
}

// Serve listens on the socket of the server's identity, makes sure cfg's
// credentials are that identity's, starts the pool over cfg and answers
// commands until the server shuts down: idle for opts.IdleTimeout, asked to
// stop, replaced, its credentials rejected for good, or ctx ended. cfg is
// the starter's connection, an exec plugin of it given the starter's
// environment.
func (s *Server) Serve(ctx context.Context, cfg *rest.Config) error {
	s.host = cfg.Host
	// The socket first, under the identity the starter found: it owns the
	// process's umask while it binds, and a command starting at the same
	// time finds it at once instead of starting another. Nothing is
	// answered until the server has found the same identity itself (ready).
	srv, err := warm.NewServer(warm.Options{
		Identity: s.opts.Identity, Version: s.opts.Version, IdleTimeout: s.opts.IdleTimeout,
		Handler: s.handle, Status: s.status,
	})
	if err != nil {
		return err
	}
	s.srv = srv
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	if err := s.start(ctx, cfg); err != nil {
		close(s.ready)
		srv.Shutdown(err.Error())
		<-served
		return err
	}
	defer s.pool.Close()
	// -o json answers keep each object's encoding as long as an informer
	// keeps an object nobody asks about.
	keep, stop := context.WithCancel(ctx)
	defer stop()
	s.encodings = printers.NewEncodings(keep, s.opts.DropAfter)
	s.podResources = index.NewPodResourcesCache(keep, s.opts.DropAfter)
	close(s.ready)
	return <-served
}

// Run returns the Run of req, arrived now.
func (s *Server) Run(req *warm.RunRequest) *Run {
	return &Run{server: s, req: req, start: time.Now()}
}

// start asks the API server who cfg's credentials belong to, refuses to go
// on unless that is the identity the starter found, and starts the pool.
func (s *Server) start(ctx context.Context, cfg *rest.Config) error {
	whoCtx, cancel := context.WithTimeout(ctx, warm.DefaultStartTimeout)
	id, _, err := warm.IdentityOf(whoCtx, cfg)
	cancel()
	if err != nil {
		return err
	}
	if id != s.opts.Identity {
		return errors.New("the credentials the cache server was started with are not its starter's user's")
	}
	own := s.watch401(cfg)
	if s.pool, err = query.NewPool(own, pool.Options{DropAfter: s.opts.DropAfter}); err != nil {
		return err
	}
	go s.recheck(s.srv.Done(), own, recheckEvery)
	return nil
}

// recheckEvery is how often a cache server asks the API server who its own
// credentials belong to: what it holds was read with them, and is dropped
// (the server exits) soon after the API server stops accepting them (a
// ServiceAccount deleted, a token revoked), whether or not its watches have
// had to list again since.
const recheckEvery = 20 * time.Second

// recheck asks, every interval until done, who cfg's credentials belong to,
// and shuts the server down when they are rejected (cfg counts the 401s,
// watch401) or are another identity's now.
func (s *Server) recheck(done <-chan struct{}, cfg *rest.Config, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		id, _, err := warm.IdentityOf(ctx, cfg)
		cancel()
		if err == nil && id != s.opts.Identity {
			s.srv.Shutdown("its credentials now belong to another user")
			return
		}
	}
}

// verify returns the identity of cfg, a served run's connection with the
// asker's credential (warm.Credential.Apply), asking the API server who the
// credential belongs to the first time it is seen. An error is the API
// server's or the transport's: the credential is not accepted, or the server
// cannot be reached.
func (s *Server) verify(ctx context.Context, cfg *rest.Config, cred *warm.Credential) (warm.Identity, error) {
	key := credentialKey(cfg, cred)
	s.verifiedMu.Lock()
	id, ok := s.verified[key]
	s.verifiedMu.Unlock()
	if ok {
		return id, nil
	}
	id, _, err := warm.IdentityOf(ctx, cfg)
	if err != nil {
		return warm.Identity{}, err
	}
	s.verifiedMu.Lock()
	defer s.verifiedMu.Unlock()
	if len(s.verified) >= maxVerified {
		clear(s.verified)
	}
	s.verified[key] = id
	return id, nil
}

// credentialKey hashes what decides whom a served run's requests are made
// as: the server, the credential and the impersonation.
func credentialKey(cfg *rest.Config, cred *warm.Credential) [sha256.Size]byte {
	h := sha256.New()
	b, _ := json.Marshal(struct {
		Host        string
		CA          []byte
		CAFile      string
		Insecure    bool
		Credential  *warm.Credential
		Impersonate rest.ImpersonationConfig
	}{cfg.Host, cfg.CAData, cfg.CAFile, cfg.Insecure, cred, cfg.Impersonate})
	h.Write(b)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// handle answers one command as a direct run of the client would, here.
func (s *Server) handle(ctx context.Context, req *warm.RunRequest, stdout, stderr io.Writer) int {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return warm.Decline
	}
	if s.pool == nil {
		return warm.Decline
	}
	s.trim.start()
	defer s.trim.done()
	run := s.Run(req)
	streams := genericiooptions.IOStreams{
		In:     strings.NewReader(""),
		Out:    terminalWriter{stdout, req.StdoutTerminal},
		ErrOut: terminalWriter{stderr, req.StderrTerminal},
	}
	code := s.opts.Execute(ctx, run, streams)
	if src := run.source; src != nil {
		if code == 0 {
			warnStale(streams.ErrOut, src.AsOf(), run.start, run.maxStaleness)
		}
		src.Done()
	}
	return code
}

// terminalWriter is a served run's stdout or stderr: what the server writes
// goes to the client, whose terminal it may be.
type terminalWriter struct {
	io.Writer
	terminal bool
}

// IsTerminal says whether the client's stream is a terminal.
func (w terminalWriter) IsTerminal() bool { return w.terminal }

// warnStale says on stderr when an answer under --max-staleness holds types
// that were not shown current as of the command's start, and how old the
// oldest of them is: the answer may miss the changes of that stretch.
func warnStale(errOut io.Writer, asOf []pool.AsOf, start time.Time, maxStaleness time.Duration) {
	var names []string
	var oldest time.Time
	for _, a := range asOf {
		if !a.Time.Before(start) {
			continue
		}
		if name := a.Resource.Name(); !slices.Contains(names, name) {
			names = append(names, name)
		}
		if oldest.IsZero() || a.Time.Before(oldest) {
			oldest = a.Time
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(errOut, "warning: answered from the warm cache as it was %s before this command (--max-staleness=%s): %s\n",
		start.Sub(oldest).Round(time.Millisecond), maxStaleness, strings.Join(names, ", "))
}

// status reports what the pool holds and the process's memory; pkg/warm adds
// the rest (warm.StatusReport).
func (s *Server) status() any {
	st := v1alpha1.NewCacheStatus()
	st.Context, st.Server = s.opts.Context, s.host
	select {
	case <-s.ready:
	default:
		// Still finding its identity: nothing to report yet.
		return st
	}
	if s.pool == nil {
		return st
	}
	ps := s.pool.Status()
	st.DropAfter = ps.DropAfter.String()
	st.Requests = &v1alpha1.CacheRequests{DroppedInformers: ps.Dropped}
	st.Memory = processMemory()
	st.Memory.EncodedObjects, st.Memory.EncodedBytes = s.encodings.Kept()
	st.Informers = query.CacheInformers(ps)
	return st
}

// processMemory reads the process's resident memory (Linux) and Go heap.
func processMemory() *v1alpha1.CacheMemory {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := &v1alpha1.CacheMemory{Heap: int64(ms.HeapInuse)}
	if data, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				m.RSS = pages * int64(os.Getpagesize())
			}
		}
	}
	return m
}

// watch401 returns cfg with a transport that shuts the server down when the
// API server keeps answering 401 Unauthorized to the pool's own requests:
// the credentials it was started with stopped working and cannot be renewed
// here, and the next command starts a server with its own, or fails directly
// in kubectl's words. Credentials an exec plugin or an auth provider gives
// are renewed by client-go after a 401 (the plugin runs again), so a 401 on
// them is borne as long as a request after it can succeed: the server shuts
// down after rejectedInARow 401s with no other answer between. A token,
// a certificate or a password is never renewed: the first 401 ends it.
func (s *Server) watch401(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	limit := int32(1)
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		limit = rejectedInARow
	}
	u := &unauthorized{limit: limit, rejected: func() {
		if s.srv != nil {
			s.srv.Shutdown("the API server rejected its credentials (401 Unauthorized)")
		}
	}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &unauthorizedRoundTripper{u: u, next: rt}
	})
	return cfg
}

// rejectedInARow is how many 401 answers in a row, with no other answer
// between, end a cache server whose credentials client-go renews: client-go
// runs the exec plugin again after the first, so the second request already
// carries what the plugin gives now.
const rejectedInARow = 3

// unauthorized counts the 401 answers to the pool's requests in a row and
// calls rejected once limit of them came with no other answer between.
type unauthorized struct {
	limit    int32
	inARow   atomic.Int32
	rejected func()
}

// unauthorizedRoundTripper tells its unauthorized of every answer.
type unauthorizedRoundTripper struct {
	u    *unauthorized
	next http.RoundTripper
}

func (r *unauthorizedRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	switch {
	case err != nil:
	case resp.StatusCode == http.StatusUnauthorized:
		if r.u.inARow.Add(1) >= r.u.limit {
			r.u.rejected()
		}
	default:
		r.u.inARow.Store(0)
	}
	return resp, err
}

// WrappedRoundTripper lets client-go reach the transport underneath.
func (r *unauthorizedRoundTripper) WrappedRoundTripper() http.RoundTripper { return r.next }
