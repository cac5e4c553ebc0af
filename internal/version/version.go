// Package version holds the build identity of kubectl-idx, injected at link time:
//
//	go build -ldflags "-X github.com/kubectl-idx/kubectl-idx/internal/version.Version=v1.2.3 ..."
package version

// Version, Commit and Date describe the build. A plain `go build` or `go install`
// leaves them at their defaults.
var (
	Version = "dev"
	Commit  = "none"
	Date    = "unknown"
)
