package errtext

import (
	"errors"
	"fmt"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// ContextWarnings words a context's failure as warning lines, each naming
// the context: one per error of an aggregate (objects not found).
func ContextWarnings(name string, err error) []string {
	if err == nil {
		return nil
	}
	errs := []error{err}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		errs = agg.Errors()
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, PrefixContext(name, Warning(e)))
	}
	return out
}

// PrefixContext names the context a warning is about.
func PrefixContext(name, warning string) string {
	return fmt.Sprintf("context %q: %s", name, warning)
}
