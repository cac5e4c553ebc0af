package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

func TestGuardWhere(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		secrets bool
		refused bool
	}{
		{`object.status.phase != "Running"`, true, false},
		{`object.data.k == "v"`, false, false},
		{`object.data.k == "v"`, true, true},
		{`object["data"]["k"] == "v"`, true, true},
		{`has(object.stringData)`, false, true},
		{`object.spec.containers.exists(c, has(c.env))`, false, true},
		{`object.spec.containers[0]["env"].size() > 0`, false, true},
		{`object.metadata.annotations["note"] == "x"`, true, false},
		{`object.metadata.annotations[?"note"].orValue("") == "x"`, true, false},
		{`object.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] != ""`, false, true},
		{`"kubectl.kubernetes.io/last-applied-configuration" in object.metadata.annotations`, false, true},
		{`object.metadata.annotations.exists(k, k.startsWith("a"))`, false, true},
		{`object.metadata.annotations.all(k, true)`, false, true},
		{`object.metadata.annotations[object.metadata.name] == ""`, false, true},
		{`owner != null && owner.metadata.name.startsWith("web")`, true, false},
	} {
		err := guardWhere([]string{tc.expr}, tc.secrets)
		if (err != nil) != tc.refused {
			t.Errorf("%s (secrets %v): %v, want refused %v", tc.expr, tc.secrets, err, tc.refused)
		}
		if err != nil && errorKind(err) != "InvalidWhere" {
			t.Errorf("%s: kind %s", tc.expr, errorKind(err))
		}
	}
}

func TestCutString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij… (cut: 11 characters)"},
		{strings.Repeat("é", 12), 10, strings.Repeat("é", 10) + "… (cut: 12 characters)"},
	} {
		if got := cutString(tc.in, tc.max); got != tc.want {
			t.Errorf("cutString(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestFit(t *testing.T) {
	size := func(k int) int { return 100 + 10*k }
	for _, tc := range []struct{ n, max, want int }{
		{0, 50, 0},
		{5, 1000, 5},
		{20, 200, 10},
		{20, 205, 10},
		{20, 100, 1}, // an answer always moves on
	} {
		if got := fit(tc.n, tc.max, size); got != tc.want {
			t.Errorf("fit(%d, %d) = %d, want %d", tc.n, tc.max, got, tc.want)
		}
	}
}

func TestErrorKind(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	whereErr := func() error {
		_, err := where.Parse([]string{"object..x"}, timeZero)
		return err
	}()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{apierrors.NewForbidden(gr, "", errors.New("no")), "Forbidden"},
		{fmt.Errorf("listing: %w", apierrors.NewUnauthorized("no")), "Unauthorized"},
		{apierrors.NewNotFound(gr, "x"), "NotFound"},
		{&informer.ListError{Resource: informer.Resource{GVR: gr.WithVersion("v1")}, Err: errors.New("refused")}, "Unreachable"},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), "Timeout"},
		{whereErr, "InvalidWhere"},
		{badArgument("x"), "InvalidArgument"},
		{errors.New(`the server doesn't have a resource type "podz"`), "InvalidArgument"},
		{errors.New("something else"), "Error"},
	} {
		if got := errorKind(tc.err); got != tc.want {
			t.Errorf("errorKind(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

var timeZero = time.Time{}
