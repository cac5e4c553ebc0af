package mcp

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// errorKind names the type of a tool error, the word a tool error starts
// with, so that an agent tells a refusal from an outage from its own
// mistake: the API server's reason (Forbidden, Unauthorized, NotFound,
// ...), Unreachable for a server that did not answer, Timeout, InvalidWhere
// for a --where expression, InvalidArgument, MemoryBound, CursorExpired, or
// Error.
func errorKind(err error) string {
	var te *toolError
	if errors.As(err, &te) {
		return te.kind
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) && len(agg.Errors()) > 0 {
		return errorKind(agg.Errors()[0])
	}
	var whereErr *where.Error
	if errors.As(err, &whereErr) {
		return "InvalidWhere"
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if r := status.Status().Reason; r != metav1.StatusReasonUnknown && r != "" {
			return string(r)
		}
		return "ServerError"
	}
	var listErr *informer.ListError
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case errors.Is(err, informer.ErrSyncTimeout), errors.Is(err, context.DeadlineExceeded):
		return "Timeout"
	case errors.As(err, &listErr), errors.As(err, &urlErr), errors.As(err, &netErr):
		return "Unreachable"
	case strings.Contains(err.Error(), "doesn't have a resource type"):
		return "InvalidArgument"
	}
	return "Error"
}
