package cmd

import (
	"fmt"
	"reflect"

	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Exit codes. A complete answer exits 0 and an error 1, as kubectl does. With
// several contexts, an answer some contexts could not give exits
// ExitPartial, after a warning line per failed context; when every context
// failed the command exits 1.
const (
	ExitError   = 1
	ExitPartial = 2
)

// exitError ends the command with its code, once what it has to say is
// printed.
type exitError struct {
	code int
	msg  string
	// verdict marks a code that carries a full answer's verdict (why's),
	// not a failure.
	verdict bool
}

// Error returns what the exit code says, which the command has printed.
func (e *exitError) Error() string { return e.msg }

// report turns what the targets answered into what the user sees, the same
// way for every command and for one context or several:
//
//   - warnings on stderr, each naming its context when several were asked,
//     a failed context's error among them;
//   - the answer on stdout (print, handed every answer and those warnings;
//     it returns how much it printed);
//   - nothing, kubectl's notice of an empty answer ("No resources found"), on
//     stderr when a table printed nothing and every context answered in full;
//   - the exit code: 0; 1 with the one context's error, or when no context
//     could answer; ExitPartial when some could not.
//
// One context's error comes after what it answered in part (the objects
// found when some named do not exist), as kubectl prints it.
func report[T any](o *QueryOptions, answers []query.Answer[T], nothing string, print func(answers []query.Answer[T], warnings []string) (int, error)) error {
	// What an answer may be missing is said with the answer: a context that
	// gave none has its error to say.
	var warnings []string
	failed := 0
	for _, a := range answers {
		if !o.several() {
			if answered(a.Value) {
				warnings = a.Warnings
			}
			break
		}
		if a.Err != nil {
			failed++
			warnings = append(warnings, errtext.ContextWarnings(a.Context, a.Err)...)
		}
		if answered(a.Value) {
			for _, w := range a.Warnings {
				warnings = append(warnings, errtext.PrefixContext(a.Context, w))
			}
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	var err error
	if !o.several() {
		if err = answers[0].Err; err != nil {
			failed = 1
			if !answered(answers[0].Value) {
				return err
			}
		}
	} else if err = contextsOutcome(failed, len(answers)); failed == len(answers) {
		return err
	}
	n, printErr := print(answers, warnings)
	if printErr != nil {
		return printErr
	}
	if n == 0 && failed == 0 && nothing != "" && o.human() {
		fmt.Fprintln(o.ErrOut, nothing)
	}
	return err
}

// answered reports whether v holds an answer: not nil.
func answered(v any) bool {
	r := reflect.ValueOf(v)
	return r.IsValid() && !(r.Kind() == reflect.Pointer && r.IsNil())
}

// contextsOutcome is the exit of a command over several contexts: nil when
// every context answered, ExitPartial when some did, an error when none did.
// Each failed context's warning lines are printed by then.
func contextsOutcome(failed, total int) error {
	switch {
	case failed == 0:
		return nil
	case failed < total:
		return &exitError{code: ExitPartial, msg: fmt.Sprintf("%d of %d contexts failed", failed, total)}
	}
	return fmt.Errorf("no context could answer: all %d failed", total)
}
