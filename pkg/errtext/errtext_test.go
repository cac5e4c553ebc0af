package errtext

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

func TestFormatError(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	podsRes := informer.Resource{GVR: pods.WithVersion("v1"), GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true}
	forbidden := apierrors.NewForbidden(pods, "", errors.New(`User "jane" cannot list resource "pods" in API group "" in the namespace "shop"`))
	refused := &url.Error{
		Op:  "Get",
		URL: "https://127.0.0.1:6443/api?timeout=32s",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
	}
	timeout := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api", Err: context.DeadlineExceeded}

	tests := []struct {
		name string
		err  error
		want string
	}{
		{
			name: "status error",
			err:  forbidden,
			want: `Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "shop"`,
		},
		{
			name: "wrapped status error",
			err:  fmt.Errorf("waiting for pods cache to sync: %w", forbidden),
			want: `Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "shop"`,
		},
		{
			name: "not found",
			err:  apierrors.NewNotFound(pods, "web-0"),
			want: `Error from server (NotFound): pods "web-0" not found`,
		},
		{
			name: "unauthorized",
			err:  apierrors.NewUnauthorized("Unauthorized"),
			want: "error: You must be logged in to the server (Unauthorized)",
		},
		{
			name: "connection refused",
			err:  refused,
			want: "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?",
		},
		{
			name: "wrapped connection refused",
			err:  fmt.Errorf("listing pods: %w", refused),
			want: "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?",
		},
		{
			name: "other transport error",
			err:  timeout,
			want: "Unable to connect to the server: context deadline exceeded",
		},
		{
			name: "aggregate of two not found",
			err:  utilerrors.NewAggregate([]error{apierrors.NewNotFound(pods, "a"), apierrors.NewNotFound(pods, "b")}),
			want: "Error from server (NotFound): pods \"a\" not found\nError from server (NotFound): pods \"b\" not found",
		},
		{
			// kubectl get pods nope prints exactly this; Run returns one missing
			// name as an aggregate of one.
			name: "aggregate of one not found",
			err:  utilerrors.NewAggregate([]error{apierrors.NewNotFound(pods, "nope")}),
			want: `Error from server (NotFound): pods "nope" not found`,
		},
		{
			name: "aggregate of a status and a plain error",
			err:  utilerrors.NewAggregate([]error{forbidden, errors.New("reading printer columns of crontabs.stable.example.com: boom")}),
			want: "Error from server (Forbidden): pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"shop\"\n" +
				"error: reading printer columns of crontabs.stable.example.com: boom",
		},
		{
			// kubectl's "The connection to the server ... was refused" would not say
			// which list failed after discovery went through.
			name: "list refused after retries",
			err:  &informer.ListError{Resource: podsRes, Tries: 3, Err: refused},
			want: "error: listing pods: the connection to the server 127.0.0.1:6443 was refused (tried 3 times)",
		},
		{
			name: "list that got no answer within --request-timeout",
			err: fmt.Errorf("waiting: %w", &informer.ListError{
				Resource: podsRes, Tries: 1, Retried: 2 * time.Second, RequestTimeout: 2 * time.Second,
				Err: &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/pods?limit=5000", Err: context.DeadlineExceeded},
			}),
			want: "error: listing pods: the server 127.0.0.1:6443 did not answer within --request-timeout=2s (retried for 2s)",
		},
		{
			name: "plain error",
			err:  errors.New("--sync-timeout must not be negative, got -1s"),
			want: "error: --sync-timeout must not be negative, got -1s",
		},
		{
			name: "plain error already prefixed",
			err:  errors.New("error: unable to match a printer"),
			want: "error: unable to match a printer",
		},
		{
			name: "wrapped plain error",
			err:  fmt.Errorf("waiting for pods to sync: %w", context.Canceled),
			want: "error: waiting for pods to sync: context canceled",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Format(tc.err); got != tc.want {
				t.Errorf("Format() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
