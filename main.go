// Command kubectl-idx is the kubectl plugin `kubectl idx`: cross-resource queries and
// change feeds served from client-go shared informers with custom indexes.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/cmd"
	// Before any kubectl package translates its help texts.
	_ "github.com/kubectl-idx/kubectl-idx/internal/translations"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cmd.Execute(streams, os.Args[1:]))
}
