// Package profiling is kubectl's --profile and --profile-output: a Go
// profile of one invocation.
package profiling

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/pflag"
)

// Profile is kubectl's --profile and --profile-output: a Go profile of
// one invocation, for finding where a slow or large query spends its time
// and memory (`go tool pprof profile.pprof`).
type Profile struct {
	name, output string
	file         *os.File
}

// AddFlags adds --profile and --profile-output to flags.
func (p *Profile) AddFlags(flags *pflag.FlagSet) {
	flags.StringVar(&p.name, "profile", "none", "Name of profile to capture. One of (none|cpu|heap|allocs|goroutine|threadcreate|block|mutex|trace)")
	flags.StringVar(&p.output, "profile-output", "profile.pprof", "Name of the file to write the profile to")
}

// Start begins the profile; Stop writes it.
func (p *Profile) Start() error {
	var err error
	switch p.name {
	case "none", "":
		return nil
	case "cpu":
		if p.file, err = os.Create(p.output); err == nil {
			err = pprof.StartCPUProfile(p.file)
		}
	case "trace":
		if p.file, err = os.Create(p.output); err == nil {
			err = trace.Start(p.file)
		}
	case "block":
		runtime.SetBlockProfileRate(1)
	case "mutex":
		runtime.SetMutexProfileFraction(1)
	default:
		if pprof.Lookup(p.name) == nil {
			return fmt.Errorf("unknown profile '%s'", p.name)
		}
	}
	if err != nil && p.file != nil {
		_ = p.file.Close()
		p.file = nil
	}
	return err
}

// Stop writes the profile started by Start, if any.
func (p *Profile) Stop() error {
	switch p.name {
	case "none", "":
		return nil
	case "cpu":
		pprof.StopCPUProfile()
	case "trace":
		trace.Stop()
	default:
		prof := pprof.Lookup(p.name)
		if prof == nil {
			// Start refused it: there is nothing to write.
			return nil
		}
		if p.name == "heap" {
			runtime.GC()
		}
		f, err := os.Create(p.output)
		if err != nil {
			return err
		}
		p.file = f
		if err := prof.WriteTo(f, 0); err != nil {
			return errors.Join(err, f.Close())
		}
	}
	if p.file == nil {
		return nil
	}
	err := p.file.Close()
	p.file = nil
	return err
}
