package warm

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Protocol is the version of the wire protocol. The hello, the welcome and the
// stop request are frozen as version 1 writes them: any later version reads and
// writes them the same way, so that any binary can stop the server of any other.
const Protocol = 1

const (
	// maxFrame bounds a frame's payload. A reader allocates no more than this
	// for one frame whatever the length field claims.
	maxFrame = 1 << 20
	// dataChunk is the largest stdout or stderr frame a server writes: a big
	// write is split, so that the client prints as it receives. 256 KiB is
	// what the printers write at once (their buffers); smaller frames cost a
	// system call and an allocation each on both sides, which showed on
	// hundreds of MB of JSON.
	dataChunk = 256 << 10
	// maxWidth bounds RunRequest.Width, a terminal's width in columns.
	maxWidth = 1 << 16
)

// frameType is the first byte of a frame.
type frameType byte

const (
	frameHello   frameType = 'h' // client: hello (JSON)
	frameWelcome frameType = 'w' // server: welcome (JSON)
	frameRequest frameType = 'q' // client: request (JSON)
	frameStdout  frameType = 'o' // server: bytes for the client's stdout
	frameStderr  frameType = 'e' // server: bytes for the client's stderr
	frameExit    frameType = 'x' // server: exitStatus (JSON), the last frame of a run
	frameStatus  frameType = 's' // server: StatusReport (JSON)
	frameStopped frameType = 'd' // server: empty, the answer to stop
	frameFailure frameType = 'f' // server: failure (JSON), a refused request
	framePayload frameType = 'p' // starter to server's stdin: the opaque start payload
	frameWarming frameType = 'a' // server: empty, the answer to warm: it has taken the command
	frameFile    frameType = 'F' // server: empty, asks for the client's stdout (RunRequest.StdoutFile)
)

func (t frameType) known() bool {
	switch t {
	case frameHello, frameWelcome, frameRequest, frameStdout, frameStderr,
		frameExit, frameStatus, frameStopped, frameFailure, framePayload, frameWarming, frameFile:
		return true
	}
	return false
}

func (t frameType) String() string {
	if t.known() {
		return string(rune(t))
	}
	return fmt.Sprintf("0x%02x", byte(t))
}

// errBadFrame marks input that is not a frame of this protocol.
var errBadFrame = errors.New("malformed frame")

// writeFrame writes a frame: its type, its payload's length as a big-endian
// uint32, its payload. It is one Write, so frames written under a mutex never
// interleave.
func writeFrame(w io.Writer, t frameType, payload []byte) error {
	if len(payload) > maxFrame {
		return fmt.Errorf("%s frame of %d bytes exceeds the %d-byte limit", t, len(payload), maxFrame)
	}
	buf := make([]byte, 5+len(payload))
	buf[0] = byte(t)
	binary.BigEndian.PutUint32(buf[1:5], uint32(len(payload)))
	copy(buf[5:], payload)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame. It returns io.EOF only when the input ends before
// a frame starts; an unknown type or a length over the limit is errBadFrame,
// detected before anything is allocated for the payload.
func readFrame(r io.Reader) (frameType, []byte, error) {
	return readFrameInto(r, nil)
}

// readFrameInto is readFrame reading the payload into buf when it is large
// enough: a client copying stdout frames through reuses one buffer.
func readFrameInto(r io.Reader, buf []byte) (frameType, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	t := frameType(h[0])
	if !t.known() {
		return 0, nil, fmt.Errorf("%w: unknown frame type %s", errBadFrame, t)
	}
	n := binary.BigEndian.Uint32(h[1:5])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("%w: %s frame of %d bytes exceeds the %d-byte limit", errBadFrame, t, n, maxFrame)
	}
	p := buf[:0]
	if cap(buf) < int(n) {
		p = make([]byte, n)
	}
	p = p[:n]
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return t, p, nil
}

func writeJSON(w io.Writer, t frameType, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFrame(w, t, b)
}

// readJSON reads one frame of type want into v. A failure frame in its place
// is returned as a *refusedError carrying the server's message.
func readJSON(r io.Reader, want frameType, v any) error {
	t, p, err := readFrame(r)
	if err != nil {
		return err
	}
	return decodeJSON(t, p, want, v)
}

func decodeJSON(t frameType, p []byte, want frameType, v any) error {
	if t == frameFailure && want != frameFailure {
		var f failure
		if err := json.Unmarshal(p, &f); err != nil {
			return fmt.Errorf("%w: failure frame: %v", errBadFrame, err)
		}
		return &refusedError{msg: f.Message}
	}
	if t != want {
		return fmt.Errorf("%w: %s frame where %s was expected", errBadFrame, t, want)
	}
	if err := json.Unmarshal(p, v); err != nil {
		return fmt.Errorf("%w: %s frame: %v", errBadFrame, t, err)
	}
	return nil
}

// hello is the client's first frame.
type hello struct {
	Protocol int      `json:"protocol"`
	Version  string   `json:"version"`
	Identity Identity `json:"identity"`
}

// Refusal reasons of a welcome. After a refusal for protocol or version the
// server answers status and stop only; after one for identity it closes.
const (
	refusedIdentity = "identity"
	refusedProtocol = "protocol"
	refusedVersion  = "version"
)

// welcome is the server's answer to a hello: its own protocol, version and
// identity, and the refusal, if any.
type welcome struct {
	hello
	Refused string `json:"refused,omitempty"`
	Message string `json:"message,omitempty"`
}

// Request operations.
const (
	opRun    = "run"
	opWarm   = "warm"
	opStatus = "status"
	opStop   = "stop"
)

// request is the one request of a connection.
type request struct {
	Op  string      `json:"op"`
	Run *RunRequest `json:"run,omitempty"`
}

// exitStatus ends a run. Stopped says why the server cut the run short, when
// it did (Server.Shutdown, a stop request, the idle timer never does).
type exitStatus struct {
	Code    int    `json:"code"`
	Stopped string `json:"stopped,omitempty"`
}

// failure refuses a request. Declined says nothing of the answer was
// written (the handler declined it, or the client's stdout did not come):
// the client answers directly, even after passing its stdout.
type failure struct {
	Message  string `json:"message"`
	Declined bool   `json:"declined,omitempty"`
}

// refusedError is a failure frame received in place of an answer; its
// message is the server's, a whole sentence.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// RunRequest is one command for the cache server to run: what a direct run
// would have read from its own process.
type RunRequest struct {
	// Args are the command's arguments, without the program name.
	Args []string `json:"args"`
	// Env holds the client's environment variables that EnvAllowed lets
	// through, and nothing else: the server refuses a request with another.
	Env map[string]string `json:"env,omitempty"`
	// Dir is the client's working directory, absolute, against which relative
	// paths in Args and Env (--kubeconfig, KUBECONFIG) resolve: the server runs
	// in "/".
	Dir string `json:"dir,omitempty"`
	// StdoutTerminal and StderrTerminal say whether the client's stdout and
	// stderr are terminals: progress lines and colour depend on it, and the
	// server's own writers are never terminals.
	StdoutTerminal bool `json:"stdoutTerminal,omitempty"`
	StderrTerminal bool `json:"stderrTerminal,omitempty"`
	// Width is the width in columns of the client's stdout terminal, 0 when
	// stdout is not a terminal.
	Width int `json:"width,omitempty"`
	// Credential is what the client authenticated with (Whoami): the server
	// asks the API server with it whether the client may read what the answer
	// holds, and answers nobody whose credential the API server does not say
	// is its own user's. Never logged, kept or reported.
	Credential *Credential `json:"credential,omitempty"`
	// StdoutFile says the client passes its stdout itself (a pipe or a
	// file, never a terminal): once the server asks for it (an F frame),
	// the client sends one byte carrying the descriptor (SCM_RIGHTS), and
	// the server writes the answer straight into it instead of sending it
	// in frames for the client to copy (442 MB for --by-owner -o json of
	// 20,000 realistic pods).
	StdoutFile bool `json:"stdoutFile,omitempty"`
}

// envAllowedNames are the environment variables a request carries besides
// those starting with KUBECTL_IDX_: the kubeconfig's location (KUBECONFIG and
// HOME, for ~/.kube/config) and kubectl's discovery cache directory.
var envAllowedNames = map[string]bool{
	"HOME":         true,
	"KUBECONFIG":   true,
	"KUBECACHEDIR": true,
}

// EnvAllowed reports whether the environment variable name is passed from a
// client to the cache server: KUBECONFIG, HOME, KUBECACHEDIR and every
// KUBECTL_IDX_ variable. Nothing else of the client's environment reaches the
// server, which keeps the environment it started with for everything else
// (PATH for exec plugins, proxies).
func EnvAllowed(name string) bool {
	return envAllowedNames[name] || (strings.HasPrefix(name, "KUBECTL_IDX_") && len(name) > len("KUBECTL_IDX_"))
}

// serverEnvNames are the environment variables a cache server is started
// with, besides those starting with KUBE_FEATURE_ (client-go's feature
// gates): where binaries are found (an exec plugin's), the user's home and
// runtime directory (where the socket lives), the time zone, the proxies and
// CA bundles the starter reaches the cluster through, in-cluster
// configuration, and the Go runtime's settings.
var serverEnvNames = map[string]bool{
	"PATH": true, "HOME": true, "XDG_RUNTIME_DIR": true, "TZ": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "http_proxy": true, "https_proxy": true, "no_proxy": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
	"KUBERNETES_SERVICE_HOST": true, "KUBERNETES_SERVICE_PORT": true, "KUBE_CACHE_MUTATION_DETECTOR": true,
	"GOGC": true, "GOMEMLIMIT": true, "GOMAXPROCS": true, "GODEBUG": true,
}

// ServerEnviron returns what of environ (os.Environ's form) a cache server
// is started with: serverEnvNames and KUBE_FEATURE_ variables, nothing else.
// Tokens, cloud accounts and the rest of a shell's environment stay out of
// a process that lives for minutes; an exec plugin that renews the starter's
// credentials gets the starter's environment from the start payload, not
// from the server's own.
func ServerEnviron(environ []string) []string {
	out := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (serverEnvNames[k] || strings.HasPrefix(k, "KUBE_FEATURE_")) {
			out = append(out, kv)
		}
	}
	return out
}

// validate checks a request received from a client.
func (r *RunRequest) validate() error {
	for k := range r.Env {
		if !EnvAllowed(k) {
			return fmt.Errorf("environment variable %q is not passed to the cache server", k)
		}
	}
	if r.Dir != "" && !filepath.IsAbs(r.Dir) {
		return fmt.Errorf("working directory %q is not absolute", r.Dir)
	}
	if r.Width < 0 || r.Width > maxWidth {
		return fmt.Errorf("terminal width %d is out of range", r.Width)
	}
	return nil
}

// StatusReport is a server's answer to a status request.
type StatusReport struct {
	// Version is the server binary's version.
	Version string `json:"version"`
	// Protocol is the server's protocol version.
	Protocol int `json:"protocol"`
	// Identity is the identity it serves.
	Identity Identity `json:"identity"`
	// PID is its process id.
	PID int `json:"pid"`
	// Socket is the path it listens on.
	Socket string `json:"socket"`
	// Started is when it started listening.
	Started time.Time `json:"started"`
	// IdleTimeout is how long it stays with no run, as a Go duration.
	IdleTimeout string `json:"idleTimeout"`
	// LastRequest is when its last run started, if any did.
	LastRequest *time.Time `json:"lastRequest,omitempty"`
	// Running counts the runs in progress, Served the runs started.
	Running int64  `json:"running"`
	Served  uint64 `json:"served"`
	// Warmed counts the warm requests taken (Conn.Warm).
	Warmed uint64 `json:"warmed"`
	// RefusedPeers counts connections from processes of another uid, closed
	// unread; RefusedHandshakes counts hellos that were malformed or named
	// another identity, protocol or version.
	RefusedPeers      uint64 `json:"refusedPeers"`
	RefusedHandshakes uint64 `json:"refusedHandshakes"`
	// Cache is what Options.Status returned.
	Cache json.RawMessage `json:"cache,omitempty"`
}

// ReadPayload reads the start payload a starter wrote on the server's stdin.
func ReadPayload(r io.Reader) ([]byte, error) {
	t, p, err := readFrame(r)
	if err != nil {
		return nil, fmt.Errorf("reading the cache start payload: %w", err)
	}
	if t != framePayload {
		return nil, fmt.Errorf("reading the cache start payload: %w: %s frame", errBadFrame, t)
	}
	return p, nil
}
