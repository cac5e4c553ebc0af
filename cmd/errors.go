package cmd

import (
	"errors"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// FormatError renders err the way kubectl does: API errors as
// `Error from server (Reason): ...`, connection failures as kubectl words them,
// everything else as `error: ...`. Aggregated errors print one line each.
func FormatError(err error) string {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) && len(agg.Errors()) == 1 {
		return FormatError(agg.Errors()[0])
	}
	if errors.As(err, &agg) && len(agg.Errors()) > 1 {
		lines := make([]string, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			lines = append(lines, FormatError(e))
		}
		return strings.Join(lines, "\n")
	}
	// kubectl's formatter matches on the concrete type, so hand it the innermost
	// API status or URL error when one is wrapped.
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if e, ok := status.(error); ok {
			if msg, ok := cmdutil.StandardErrorMessage(e); ok {
				return msg
			}
		}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		if msg, ok := cmdutil.StandardErrorMessage(urlErr); ok {
			return msg
		}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "error: ") {
		msg = "error: " + msg
	}
	return msg
}
