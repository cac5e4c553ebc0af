package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// cacheServer is `kubectl idx cache serve`: the warm pool of one identity
// and the socket it answers on. Every command it answers runs the same code
// as a direct run (execute), in this process, with the client's arguments
// and streams, its targets' informers borrowed from the pool.
type cacheServer struct {
	identity warm.Identity
	context  string
	host     string
	pool     *informer.Pool
	srv      *warm.Server
}

// runCacheServer reads the start payload from in, connects as the starter
// does, and serves until the server shuts down: idle for idle, asked to
// stop, replaced, its credentials rejected, or ctx ended.
func runCacheServer(ctx context.Context, in io.Reader, idle, dropAfter time.Duration) error {
	data, err := warm.ReadPayload(in)
	if err != nil {
		return err
	}
	var p servePayload
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("reading the cache start payload: %w", err)
	}
	// The starter's kubeconfig files, absolute: this process runs in "/".
	if p.Kubeconfig != nil {
		os.Setenv(clientcmd.RecommendedConfigPathEnvVar, *p.Kubeconfig)
	} else {
		os.Unsetenv(clientcmd.RecommendedConfigPathEnvVar)
	}
	flags := genericclioptions.NewConfigFlags(true)
	fs := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	flags.AddFlags(fs)
	for name, values := range p.Flags {
		for _, v := range values {
			if err := fs.Set(name, v); err != nil {
				return fmt.Errorf("--%s from the cache start payload: %w", name, err)
			}
		}
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return err
	}
	name, err := contextName(flags)
	if err != nil {
		return err
	}
	id, err := warm.NewIdentity(cfg, name)
	if err != nil {
		return err
	}
	if id != p.Identity {
		return fmt.Errorf("the connection the cache server was started with is not its starter's")
	}
	s := &cacheServer{identity: id, context: name, host: cfg.Host}
	// The server first: it owns the process's umask while it binds.
	srv, err := warm.NewServer(warm.Options{
		Identity: id, Version: cacheVersion(), IdleTimeout: idle,
		Handler: s.handle, Status: s.status,
	})
	if err != nil {
		return err
	}
	s.srv = srv
	if s.pool, err = query.NewPool(s.watch401(cfg), informer.PoolOptions{DropAfter: dropAfter}); err != nil {
		srv.Shutdown(err.Error())
		_ = srv.Serve(ctx)
		return err
	}
	defer s.pool.Close()
	// -o json answers keep each object's encoding as long as an informer
	// keeps an object nobody asks about.
	keep, stop := context.WithCancel(ctx)
	defer stop()
	printers.KeepEncodings(keep, dropAfter)
	return srv.Serve(ctx)
}

// handle answers one command as a direct run of the client would, here.
func (s *cacheServer) handle(ctx context.Context, req *warm.RunRequest, stdout, stderr io.Writer) int {
	run := &runContext{args: req.Args, served: &servedRun{server: s, req: req, start: time.Now()}}
	streams := genericiooptions.IOStreams{
		In:     strings.NewReader(""),
		Out:    terminalWriter{stdout, req.StdoutTerminal},
		ErrOut: terminalWriter{stderr, req.StderrTerminal},
	}
	code := execute(ctx, streams, req.Args, run)
	if src := run.served.source; src != nil {
		src.Done()
	}
	return code
}

// status reports what the pool holds and the process's memory; pkg/warm adds
// the rest (warm.StatusReport).
func (s *cacheServer) status() any {
	st := v1alpha1.NewCacheStatus()
	ps := s.pool.Status()
	st.Context, st.Server = s.context, s.host
	st.DropAfter = ps.DropAfter.String()
	st.Requests = &v1alpha1.CacheRequests{DroppedInformers: ps.Dropped}
	st.Memory = processMemory()
	st.Informers = query.CacheInformers(ps)
	return st
}

// processMemory reads the process's resident memory (Linux) and Go heap.
func processMemory() *v1alpha1.CacheMemory {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := &v1alpha1.CacheMemory{Heap: int64(ms.HeapInuse)}
	m.EncodedObjects, m.EncodedBytes = printers.EncodingsKept()
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
// API server answers 401 Unauthorized: the credentials it was started with
// stopped working, and the next command starts a server with fresh ones, or
// fails directly in kubectl's words.
func (s *cacheServer) watch401(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &unauthorized{next: rt, rejected: func() {
			if s.srv != nil {
				s.srv.Shutdown("the API server rejected its credentials (401 Unauthorized)")
			}
		}}
	})
	return cfg
}

// unauthorized tells rejected of every 401 answer.
type unauthorized struct {
	next     http.RoundTripper
	rejected func()
}

func (u *unauthorized) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := u.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		u.rejected()
	}
	return resp, err
}

// WrappedRoundTripper lets client-go reach the transport underneath.
func (u *unauthorized) WrappedRoundTripper() http.RoundTripper { return u.next }
