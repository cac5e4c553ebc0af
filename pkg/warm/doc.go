// Package warm is the transport of the warm cache: a background process per
// identity that keeps informers warm across invocations, the unix socket it
// listens on, who may talk to it, and how it starts, answers and ends. What it
// keeps warm and how a question is answered belong to the caller (package
// served): this package moves a command's arguments, and the credential it
// was asked with, to the process and its output back, and never looks at the
// arguments or the output. It names identities (IdentityOf: who the API
// server says a credential belongs to) and resolves credentials (Whoami),
// since who may reach a process is its business. The informers the caller
// keeps warm, how they are shown current for each question and authorized
// for its asker, are package pool's (pkg/pool), which this package does not
// import.
//
// # Security model
//
// A cache server holds what its user's credentials let it read from the
// cluster, in memory. Everything here is about handing that to nobody but the
// same user with the same credentials.
//
// Who can connect. The server listens on a unix domain socket, never on TCP or
// any other network socket. The socket lives in a directory only the user can
// enter: $XDG_RUNTIME_DIR/kubectl-idx when XDG_RUNTIME_DIR is a directory the
// user owns (on Linux, /run/user/UID: a tmpfs of the user's, emptied at
// logout), else kubectl-idx/run in the user's cache directory (~/.cache on
// Linux, ~/Library/Caches on macOS). The directory is created with mode 0700
// and checked, without following a symbolic link, every time it is used, and
// every few seconds by a running server: it must be a directory, owned by the
// user, with no permission for group or others. Otherwise nothing is done,
// and the error names the directory and what is wrong with it; nothing
// changes its mode or owner. The socket is created with mode 0600 (the process
// umask is 0177 while it is bound, so it is never wider). Those are the walls;
// the door is checked too: on every connection the server asks the kernel for
// the uid of the process at the other end (SO_PEERCRED on Linux, LOCAL_PEERCRED
// as getpeereid(3) reads it on macOS) and closes a connection from any other
// uid before reading a byte of it; status counts them. The client asks the same
// of the server before it sends anything, so a socket put in place by another
// user is never talked to. Any process of the user may ask, as any may read
// the user's kubeconfig: the cache gives nobody more than the user's own
// credentials would. Root can pass the walls, and root can read the
// kubeconfig as well.
//
// Who the server is. A server serves one Identity: a SHA-256 over a
// length-prefixed encoding of the API server's URL, the CA it is trusted by
// (its content), the TLS server name and the insecure flag, and the user the
// API server says the credentials belong to (Whoami: a SelfSubjectReview made
// with them, after impersonation): name, UID, groups and extra values,
// sorted, without the id of the very credential. Two people, or two CI jobs,
// sharing a kubeconfig whose exec plugin reads the environment are two users
// to the API server, so two identities and two servers; a token an exec
// plugin renews, or another kubeconfig of the same user, keeps one. The hash
// is full-length because it is a key: the socket is named after its first 128
// bits, which keeps paths short, and the handshake compares all 256 bits (in
// constant time). The identity is computed in memory and written nowhere. A
// server started for an identity asks who its own credentials belong to
// before it answers anything, and exits unless that is the identity.
//
// With whose rights it answers. The identity routes a client to a server; it
// authorizes nothing. Every run request carries the client's Credential (the
// Authorization header and client certificate its requests carried, as
// client-go resolved them, exec plugin included), and the caller answers with
// it: the server asks the API server once per credential whether it is the
// server's user, and every informer a question reads is authorized for the
// asker with that credential during the question (pool.Asker), before
// anything is printed, --max-staleness or not. The credential travels on the
// socket only, to a process of the same uid, which keeps it for the request's
// life.
//
// What is kept, and where. Objects read from the cluster stay in the server's
// memory, and are sent only over the socket, to the user's own processes.
// Nothing read from the cluster is written to disk: the server's only files
// are its socket and an empty lock file, its stdout and stderr are the null
// device, it writes no log, and its core file size limit is zero, so a crash
// dumps nothing (the kernel may still swap its memory, as any process's).
// Credentials reach the server on its stdin (Spec.Payload), never in its
// arguments, which every user can see with ps, nor in its environment: it is
// started with only the variables ServerEnviron keeps. NewServer makes the
// process untraceable (PR_SET_DUMPABLE 0 on Linux, PT_DENY_ATTACH on macOS), so
// that no other process of the user reads its memory, environment or
// descriptors through ptrace or /proc.
//
// When it ends. A server exits after IdleTimeout (10 minutes unless
// configured) with no run; a run in progress, such as a watch, keeps it alive,
// and status requests do not. It exits when asked to (Stop), when a client of
// another version replaces it, when the caller decides its credentials
// stopped working (Server.Shutdown: the warm side calls it when the API server
// rejects them for good), when its directory stops being private, and when its
// socket is removed or replaced. Runs in progress are cancelled and told why.
// It removes its lock file as it exits, unless a client is starting a server.
//
// Windows. Windows has AF_UNIX sockets but no way to learn the uid of the
// process at the other end, so there is no cache: Connect, Status, Stop and
// NewServer return ErrUnsupported (the client's errors also wrap
// ErrUnavailable), and commands run directly. The same holds on every system
// other than Linux and macOS.
//
// # Protocol
//
// A connection carries frames: one type byte, the payload's length as a
// big-endian uint32, the payload. A payload is at most 1 MiB; a reader refuses
// a longer one, or an unknown type, before allocating anything, and garbage is
// an error, never a panic. Control frames are JSON; stdout and stderr frames
// are raw bytes, at most 256 KiB each.
//
//	client                                   server
//	  ----------- connect(2) ------------------> peer uid checked, else closed
//	  peer uid checked, else closed
//	  h {"protocol":1,"version":V,"identity":ID} ->
//	  <- w {"protocol":1,"version":V,"identity":ID[,"refused":R,"message":M]}
//	  q {"op":"run","run":{RunRequest}}         ->
//	  <- o stdout bytes | e stderr bytes, as the run writes them
//	  <- x {"code":N[,"stopped":why]}
//	or, when the client's stdout is a pipe or a file ("stdoutFile":true)
//	  q {"op":"run","run":{...,"stdoutFile":true}} ->
//	  <- F
//	  one byte carrying the stdout descriptor (SCM_RIGHTS) ->
//	  <- o (empty, once, before the first byte written into the descriptor)
//	  <- e stderr bytes (stdout goes straight into the descriptor)
//	  <- x {"code":N[,"stopped":why]}
//	or
//	  q {"op":"warm","run":{RunRequest}}        ->
//	  <- a (taken; the client closes, the server runs it on its own)
//	or
//	  q {"op":"status"}  ->  <- s StatusReport
//	  q {"op":"stop"}    ->  <- d (the socket is already gone), then it exits
//
// A warm request is a command the client answered itself: the server runs
// it with its output discarded, to its end or until the server shuts down,
// so that its informers (and, for -o json, its objects' encodings) are warm
// for the next one; the client going away does not end it, and status
// counts it as warmed, not running.
//
// A refusal R is "identity" (the connection is closed), "protocol" or
// "version" (only status and stop are answered, so a newer binary can stop
// an older server). A refused request is answered with f {"message":M}. The
// hello, the welcome and the stop request are frozen: every later protocol
// version reads and writes them as version 1 does. The server waits at most
// 5 s for the hello and for the request; the client waits at most
// Spec.DialTimeout (2 s) for the connection and the welcome. After its request
// the client sends nothing: when it closes the connection (it is gone, or the
// user pressed ^C) the run's context is cancelled.
//
// A RunRequest carries what a direct run would have read from its own
// process: the arguments, the environment variables EnvAllowed lets through
// (KUBECONFIG, HOME, KUBECACHEDIR, KUBECTL_IDX_*; the server refuses others),
// the working directory (the server runs in "/"), whether stdout and stderr
// are terminals and stdout's width, and the client's Credential.
//
// # Lifecycle
//
// Connect verifies the directory and dials the identity's socket. If a server
// of the same version answers, that is the connection. If nothing answers (no
// socket, or a socket a dead server left), it takes an exclusive flock on the
// identity's lock file, so that of two commands starting at once one starts a
// server and the other finds it; dials again; and if still nothing answers,
// starts Spec.Command detached (its own session, stdin a pipe carrying the
// payload, stdout and stderr the null device, working directory "/") and waits
// for it to answer, within Spec.StartTimeout. The server removes a stale
// socket only after a dial shows nothing answers on it, and only a socket in
// the verified directory. A server of another version is asked to stop, waited
// for until its process has exited, and replaced. A server that accepts but
// does not answer the handshake within Spec.DialTimeout is hung: Connect fails.
// Dial is Connect without the start: it returns a running server of its
// version, or an error wrapping ErrNotRunning. Every Connect error but the context's wraps ErrUnavailable, as does a Run
// error before any output arrived: the command then runs directly, with one
// warning line. A Run error after output arrived is the command's error.
//
// # Wiring
//
// Package served is this wiring (pkg/served; cmd keeps the flags and the
// warnings). A command with --cache (or KUBECTL_IDX_CACHE=auto) asks through
// served.Client:
//
//	id, asker, err := warm.IdentityOf(ctx, cfg) // the API server's error is the command's
//	spec := warm.Spec{
//		Identity: id, Version: version,
//		Args:     []string{"cache", "serve"},
//		Payload:  startPayload, // the connection flags; may hold --token: stdin only
//	}
//	req, _ := warm.NewRunRequest(os.Args[1:], stdout, stderr)
//	req.Credential = asker.Credential
//	conn, err := warm.Dial(ctx, spec)
//	if err == nil {
//		code, err = conn.Run(ctx, req, stdout, stderr)
//		// err == nil: exit with code; an error that is not ErrUnavailable
//		// (output had begun): report it, exit 1.
//	}
//	if errors.Is(err, warm.ErrNotRunning) {
//		go func() { conn, err = warm.Connect(ctx, spec) }() // starts one
//		// ... the direct run; once it has answered, when Connect did:
//		conn.Warm(ctx, req)
//	}
//	// other errors.Is(err, warm.ErrUnavailable):
//	fmt.Fprintf(stderr, "warning: %v; answering directly\n", err)
//	// ... the direct run
//
// `kubectl idx cache serve`, which Connect starts, reads the payload
// (ReadPayload) and runs served.Server:
//
//	srv, err := warm.NewServer(warm.Options{
//		Identity: payloadIdentity, Version: version, IdleTimeout: idle,
//		Handler: func(ctx context.Context, req *warm.RunRequest, out, errOut io.Writer) int {
//			// wait until IdentityOf of its own credentials gave the identity;
//			// parse req.Args with req.Env, req.Dir and req.*Terminal in place of
//			// the process's own and req.Credential in place of the kubeconfig's;
//			// if IdentityOf with it gives another identity, return warm.Decline;
//			// else answer from the warm informers, each authorized with it.
//		},
//		Status: poolStatus, // counts, times and resourceVersions, no objects
//	})
//	// its own credentials rejected for good: srv.Shutdown("credentials rejected")
//	return srv.Serve(ctx)
//
// `kubectl idx cache status` and `cache stop` call Status and Stop with the
// same Spec; both work whatever the server's version and start nothing.
package warm
