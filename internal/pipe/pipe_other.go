//go:build !linux

package pipe

import "io"

// ReaderGone returns nil: only Linux reports a pipe's departed reader
// without a write. Elsewhere the feed learns it at its next write, which fails
// with EPIPE and ends the feed as quietly.
func ReaderGone(io.Writer) <-chan struct{} { return nil }
