package served

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// Payload is what a cache process is started with, on its stdin: how to
// reach the cluster as the command that starts it does. It may hold --token.
type Payload struct {
	// Identity is the identity the starter found: the process answers
	// nothing unless its own credentials are the same identity's.
	Identity warm.Identity `json:"identity"`
	// Kubeconfig is the starter's KUBECONFIG, its files absolute; nil when it
	// is not set.
	Kubeconfig *string `json:"kubeconfig,omitempty"`
	// Flags are the connection flags the starter was given, each value as
	// given (paths absolute).
	Flags map[string][]string `json:"flags,omitempty"`
	// ExecEnv is the starter's environment when its credentials come from
	// an exec plugin, and nothing otherwise: the process hands it to the
	// plugin when it renews them, as the starter's own run would have, and
	// keeps it out of its own environment.
	ExecEnv []string `json:"execEnv,omitempty"`
}

// Errors of Ask after which the command answers directly.
var (
	// ErrNoCache wraps what keeps a command from reaching a cache process
	// before it tries: its identity cannot be found (a server without
	// SelfSubjectReview), or the system has no cache. Worth a warning line.
	ErrNoCache = errors.New("no warm cache")
	// ErrDirect says the API server could not be reached to ask who asks:
	// the direct run meets it too, and says so in its own words, within its
	// own --request-timeout. Worth nothing more.
	ErrDirect = errors.New("answered directly")
	// ErrStarting says no cache process ran: one is starting (Starting),
	// and the command answers directly meanwhile.
	ErrStarting = errors.New("the cache server is starting")
)

// Client asks commands of the cache process of its connection's identity.
type Client struct {
	// Config is the command's connection: its credentials are the asker's.
	Config *rest.Config
	// Version is this binary's (warm.Spec.Version).
	Version string
	// Args are the arguments `cache serve` is started with; Payload makes
	// its start payload for the identity found.
	Args    []string
	Payload func(id warm.Identity) ([]byte, error)
	// Start starts a cache process beside a direct run; nil is StartServer.
	// Tests give a process of their own.
	Start func(ctx context.Context, spec warm.Spec, req *warm.RunRequest) *Starting
}

// Ask runs req, a command, on the cache process of the identity the API
// server gives c.Config's credentials (warm.IdentityOf), asked now with them,
// handing the process the credential the request was made with, and returns
// its exit code as the process reports it, its output copied to stdout and
// stderr; closed, when it is closed, says stdout's reader went away, which
// ends the run as it ends a direct one (exit code 0).
//
// When no process runs for the identity, a feed (follows) starts one and
// runs there (a feed may never end, and its informers there are its own);
// any other command gets a process starting in the background (Starting)
// and ErrStarting: it answers directly, as fast as without the cache, and
// hands the process its arguments once it has (Starting.Warm), so that the
// next question finds its informers warm.
//
// Errors: the API server's refusal (Unauthorized) and an exec plugin's
// failure are the command's, as a direct run words them; ErrDirect, ErrNoCache
// and errors wrapping warm.ErrUnavailable send the command to a direct run;
// any other is the command's, its output having begun.
func (c *Client) Ask(ctx context.Context, req *warm.RunRequest, follows bool, stdout, stderr io.Writer, closed <-chan struct{}) (int, *Starting, error) {
	spec, cred, err := c.spec(ctx)
	if err != nil {
		return -1, nil, err
	}
	r := *req
	r.Credential = cred
	var conn *warm.Conn
	if follows {
		conn, err = warm.Connect(ctx, spec)
	} else {
		conn, err = warm.Dial(ctx, spec)
		if errors.Is(err, warm.ErrNotRunning) {
			start := c.Start
			if start == nil {
				start = StartServer
			}
			return -1, start(ctx, spec, &r), ErrStarting
		}
	}
	if err != nil {
		return -1, nil, err
	}
	code, err := run(ctx, conn, &r, stdout, stderr, closed)
	return code, nil, err
}

// spec says which cache process answers and how to start one, and returns
// the credential the asker's requests carry.
func (c *Client) spec(ctx context.Context) (warm.Spec, *warm.Credential, error) {
	if c.Config == nil {
		return warm.Spec{}, nil, fmt.Errorf("%w: no client configuration to identify", ErrNoCache)
	}
	id, asker, err := warm.IdentityOf(ctx, c.Config)
	var status apierrors.APIStatus
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return warm.Spec{}, nil, ctx.Err()
	case errors.Is(err, warm.ErrNoSelfReview):
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", ErrNoCache, warm.ErrNoSelfReview)
	case apierrors.IsForbidden(err):
		return warm.Spec{}, nil, fmt.Errorf("%w: the API server does not let this user ask who they are (SelfSubjectReview): %w", ErrNoCache, err)
	case errors.As(err, &status), informer.CredentialsFailed(err):
		// Unauthorized and the like, or an exec plugin that failed: a direct
		// run fails with the same error, in the same words (and would run a
		// failing plugin again).
		return warm.Spec{}, nil, err
	default:
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", ErrDirect, err)
	}
	payload, err := c.Payload(id)
	if err != nil {
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", ErrNoCache, err)
	}
	return warm.Spec{Identity: id, Version: c.Version, Args: c.Args, Payload: payload}, asker.Credential, nil
}

// run runs req on conn, printing what the process sends; closed ending it
// counts as the reader's going away, exit code 0.
func run(ctx context.Context, conn *warm.Conn, req *warm.RunRequest, stdout, stderr io.Writer, closed <-chan struct{}) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var gone sync.Once
	closedOut := false
	if closed != nil {
		go func() {
			select {
			case <-closed:
				gone.Do(func() { closedOut = true })
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	code, err := conn.Run(ctx, req, stdout, stderr)
	gone.Do(func() {})
	if closedOut {
		return 0, nil
	}
	return code, err
}

// Starting is a cache process started beside a direct run.
type Starting struct {
	spec warm.Spec
	req  *warm.RunRequest
	done chan struct{}
	// err is Connect's, once done is closed.
	err error
}

// NewStarting returns a Starting of spec for req that is done once done is
// closed, with err: for tests that start a process their own way.
func NewStarting(spec warm.Spec, req *warm.RunRequest, done chan struct{}, err error) *Starting {
	return &Starting{spec: spec, req: req, done: done, err: err}
}

// StartServer starts the cache process of spec in the background (Connect:
// of two commands starting at once, one starts it). The connection Connect
// makes is closed at once: the process waits 5 s for a request, less than a
// direct run may take (16 s for -o json of 100,000 pods); Warm dials again
// once the command has answered.
func StartServer(ctx context.Context, spec warm.Spec, req *warm.RunRequest) *Starting {
	s := &Starting{spec: spec, req: req, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		conn, err := warm.Connect(ctx, spec)
		if err == nil {
			conn.Close()
		}
		s.err = err
	}()
	return s
}

// Warm waits for the process to answer and hands it the command, which it
// runs with its output discarded so that its informers are warm for the
// next question; it does not wait for that. The error is why the process
// could not be started or reached.
func (s *Starting) Warm(ctx context.Context) error {
	<-s.done
	if s.err != nil {
		return s.err
	}
	conn, err := warm.Dial(ctx, s.spec)
	if err != nil {
		return err
	}
	return conn.Warm(ctx, s.req)
}
