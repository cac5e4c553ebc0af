package errtext

import (
	"errors"
	"slices"
	"testing"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

func TestContextWarnings(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{name: "no error", err: nil, want: nil},
		{name: "one error", err: errors.New("forbidden"), want: []string{`context "a": forbidden`}},
		{name: "error: prefix dropped", err: errors.New("error: boom"), want: []string{`context "a": boom`}},
		{
			name: "aggregate, a line each",
			err:  utilerrors.NewAggregate([]error{errors.New(`pods "web" not found`), errors.New(`pods "db" not found`)}),
			want: []string{`context "a": pods "web" not found`, `context "a": pods "db" not found`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ContextWarnings("a", tc.err)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ContextWarnings() = %q, want %q", got, tc.want)
			}
		})
	}
}
