package informer

import "k8s.io/client-go/rest"

// Source is where a question's informers come from. A question asks its
// Source for a Factory, configures it, starts it, waits for it and shuts it
// down, the same way whatever the Source:
//
//   - OneShot, the Source of a direct run, builds a Factory of informers of
//     its own: Start lists, Shutdown stops them.
//   - A warm pool's Source (package pool), the Source of the cache server,
//     lends the question informers the pool keeps warm across questions,
//     through its factories' Lender: Start starts nothing, WaitForSync also
//     waits until the lender has settled them (caught up with the server,
//     and readable by the asker), and Shutdown hands them back, running.
//
// Either way the stores a question reads are read-only, and an answer is
// written once, against a Factory.
type Source interface {
	// NewFactory returns a Factory for one question: cfg says what the
	// question narrows by. restConfig is the user's connection; a Source
	// bound to a connection of its own (a warm pool's) may ignore it.
	NewFactory(restConfig *rest.Config, cfg Config) (*Factory, error)
}

// OneShot is the Source of a direct run: NewFactory, informers that live as
// long as the question.
var OneShot Source = oneShot{}

type oneShot struct{}

func (oneShot) NewFactory(restConfig *rest.Config, cfg Config) (*Factory, error) {
	return NewFactory(restConfig, cfg)
}
