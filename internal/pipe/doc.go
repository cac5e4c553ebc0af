// Package pipe tells a process that streams to stdout when the reader of its
// pipe has gone away (`| head` is done) before it writes again.
package pipe
