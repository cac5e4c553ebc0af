// Package errtext words errors the way kubectl does, one line each, for the
// commands' stderr and for the warnings that name what an answer misses: API
// errors, connection failures, flag values Go's parsers reject, -o dot or -o
// mermaid where no graph is drawn. It also says what follows an error when
// no kubeconfig is found, and rewrites a command line that asked for what
// another command does.
package errtext

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	// ListError, to word a list that failed for good.
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// Format renders err the way kubectl does: API errors as
// `Error from server (Reason): ...`, connection failures as kubectl words them,
// everything else as `error: ...`. A list that failed for good on the transport
// (*informer.ListError) keeps its own wording, which names the type listed.
// Aggregated errors print one line each. -o dot or -o mermaid on a command
// without graphs says which commands have them.
func Format(err error) string {
	err = graphFormatError(err)
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) && len(agg.Errors()) == 1 {
		return Format(agg.Errors()[0])
	}
	if errors.As(err, &agg) && len(agg.Errors()) > 1 {
		lines := make([]string, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			lines = append(lines, Format(e))
		}
		return strings.Join(lines, "\n")
	}
	// A list the transport kept failing says which type, which server and what
	// went wrong; kubectl's wording of the URL error inside would drop the type.
	var listErr *informer.ListError
	if errors.As(err, &listErr) {
		return "error: " + listErr.Error()
	}
	// A --where expression that does not compile is one line, then the
	// expression with a caret under the place when there is one.
	var whereErr *where.Error
	if errors.As(err, &whereErr) {
		return "error: " + strings.TrimRight(err.Error(), "\n")
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
	// One error, one line: a trailing newline (kubectl's custom-columns-file
	// error ends with one) is dropped, and line breaks inside, which come from
	// flag values quoted back, are escaped.
	msg := lineBreaks.Replace(strings.TrimRight(err.Error(), "\r\n"))
	if !strings.HasPrefix(msg, "error: ") {
		msg = "error: " + msg
	}
	return msg
}

// lineBreaks escapes line breaks as Go would quote them.
var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)

// Flag rewords the flag values pflag rejects with Go's own parse errors
// (`strconv.ParseBool: parsing "maybe": invalid syntax`, `time: missing unit
// in duration "1"`) to say what the flag takes; other flag errors pass as
// they are. Commands get it from the root command's flag error function.
func Flag(err error) error {
	// pflag's InvalidValueError, by its methods: pflag is no direct dependency.
	var invalid interface {
		GetValue() string
		Unwrap() error
	}
	if !errors.As(err, &invalid) || invalid.Unwrap() == nil {
		return err
	}
	cause := invalid.Unwrap()
	var want string
	var num *strconv.NumError
	switch {
	case errors.As(cause, &num) && errors.Is(num.Err, strconv.ErrRange):
		want = "out of range"
	case errors.As(cause, &num) && num.Func == "ParseBool":
		want = "must be true or false"
	case errors.As(cause, &num) && num.Func == "ParseFloat":
		want = "must be a number"
	case errors.As(cause, &num):
		want = "must be an integer"
	case strings.HasPrefix(cause.Error(), "time: "):
		want = "must be a duration such as 30s, 5m or 1h"
	default:
		return err
	}
	// Keep pflag's `invalid argument "x" for "-v, --v" flag: ` and its
	// spelling of the flag.
	return fmt.Errorf("%s%s", strings.TrimSuffix(err.Error(), cause.Error()), want)
}

// Warning is err as Format words it, without the "error: " prefix, for use
// inside a warning line: a --where error without its caret lines.
func Warning(err error) string {
	text := strings.TrimPrefix(Format(err), "error: ")
	var whereErr *where.Error
	if errors.As(err, &whereErr) {
		text, _, _ = strings.Cut(text, "\n")
	}
	return text
}

// graphFormatError words the printer error of a command without graphs (get,
// watch) asked for -o dot or -o mermaid as printers.NoGraph does; other errors pass
// as they are.
func graphFormatError(err error) error {
	var e genericclioptions.NoCompatiblePrinterError
	if errors.As(err, &e) && e.OutputFormat != nil && printers.IsGraph(*e.OutputFormat) {
		return printers.NoGraph(*e.OutputFormat)
	}
	return err
}
