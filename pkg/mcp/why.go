package mcp

import (
	"context"
	"slices"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/diagnose"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// WhyArgs are the why tool's arguments.
type WhyArgs struct {
	Object        string   `json:"object,omitempty" jsonschema:"the object, KIND/NAME as kubectl names it (deployment/web, pod/web-7d9c-x2x, service/web, node/worker-1); empty diagnoses every top-level owner and Service of the namespace"`
	Namespace     string   `json:"namespace,omitempty" jsonschema:"the namespace; default: the context's"`
	AllNamespaces bool     `json:"allNamespaces,omitempty" jsonschema:"without an object: every namespace"`
	Where         []string `json:"where,omitempty" jsonschema:"CEL expressions, as kubectl idx why --where: with an object, the objects of its subtree to diagnose; without, the subjects"`
	Limit         int      `json:"limit,omitempty" jsonschema:"most causes in this answer (default 100, at most 5000)"`
	Cursor        string   `json:"cursor,omitempty" jsonschema:"nextCursor of the previous answer to the same arguments"`
	Common
}

// question is what names the question of the arguments: all but the
// cursor, the limit and the staleness bound, which page the answer or bound
// its wait.
func (in WhyArgs) question() WhyArgs {
	in.Cursor, in.Limit, in.MaxStalenessSeconds = "", 0, 0
	return in
}

// why asks every context the question of `kubectl idx why` (Session.Why,
// or WhyAll without an object) and pages the causes, worst first across the
// contexts, each context's in its own order.
func (s *Server) why(ctx context.Context, in WhyArgs) (*v1alpha1.WhyAnswer, error) {
	var typ, name string
	if in.Object != "" {
		var err error
		if typ, name, err = objectArg(in.Object); err != nil {
			return nil, err
		}
	}
	if err := guardWhere(in.Where, true); err != nil {
		return nil, err
	}
	c, p, err := s.open("why", in.Limit, in.Cursor, in.question(), scope{Context: in.Context, Namespace: in.Namespace, AllNamespaces: in.AllNamespaces, MaxStaleness: seconds(in.MaxStalenessSeconds), Where: in.Where})
	if err != nil {
		return nil, err
	}
	defer c.done()
	answers := ask(ctx, c, func(ctx context.Context, sess *query.Session) (*v1alpha1.Diagnosis, error) {
		if typ == "" {
			return sess.WhyAll(ctx, query.WhyOptions{Now: c.start})
		}
		obj, err := sess.Object(typ, name)
		if err != nil {
			return nil, err
		}
		if err := c.authorize(ctx, sess, obj); err != nil {
			return nil, err
		}
		return sess.Why(ctx, obj, query.WhyOptions{Now: c.start})
	})
	warnings, err := outcome(c, answers)
	if err != nil {
		return nil, err
	}
	answer := v1alpha1.NewWhyAnswer()
	answer.Status = string(v1alpha1.DiagnosisHealthy)
	type ranked struct {
		cause v1alpha1.Cause
		view  v1alpha1.CauseView
	}
	var causes []ranked
	cut := func(str string) string { return cutString(str, s.cfg.MaxString) }
	for _, a := range answers {
		d := a.Value
		if d == nil {
			continue
		}
		switch {
		case d.Status == v1alpha1.DiagnosisUnhealthy:
			answer.Status = string(v1alpha1.DiagnosisUnhealthy)
		case d.Status == v1alpha1.DiagnosisUnknown && answer.Status == string(v1alpha1.DiagnosisHealthy):
			answer.Status = string(v1alpha1.DiagnosisUnknown)
		}
		for _, sub := range d.Subjects {
			if sub.Status == v1alpha1.DiagnosisHealthy {
				answer.Healthy++
				continue
			}
			answer.Subjects = append(answer.Subjects, v1alpha1.SubjectView{Context: a.Context, Object: cut(sub.Object.String()), Namespace: sub.Object.Namespace,
				Status: string(sub.Status), Summary: cut(sub.Summary)})
		}
		for _, k := range d.Checked {
			answer.Checked[k.Kind] += k.Count
		}
		for _, u := range d.Unseen {
			if !slices.Contains(answer.Unseen, u) {
				answer.Unseen = append(answer.Unseen, u)
			}
		}
		for _, cause := range d.Causes {
			v := v1alpha1.CauseView{Context: a.Context, Reason: cut(cause.Reason), Severity: string(cause.Severity), Object: cut(cause.Object.String()),
				Namespace: cause.Object.Namespace, Missing: cause.Object.Missing, Message: cut(cause.Message), Evidence: []string{}}
			if cause.Subject != nil {
				v.Subject = cut(cause.Subject.String())
			}
			for _, e := range cause.Evidence {
				v.Evidence = append(v.Evidence, cut(e.String()))
			}
			causes = append(causes, ranked{cause: cause, view: v})
		}
	}
	// Worst first across the contexts, each context's own order kept
	// within a class.
	slices.SortStableFunc(causes, func(a, b ranked) int { return diagnose.Compare(a.cause, b.cause) })
	answer.AsOf = asOf(answers, func(d *v1alpha1.Diagnosis) []v1alpha1.AsOf { return d.AsOf })
	answer.Warnings = append(answer.Warnings, warnings...)
	start, end, next := p.byPosition(len(causes))
	return fitPage(s.cfg.MaxBytes, answer, start, len(causes), causes[start:end], func(out *v1alpha1.WhyAnswer, page []ranked) {
		out.Causes = make([]v1alpha1.CauseView, len(page))
		for i, r := range page {
			out.Causes[i] = r.view
		}
	}, next), nil
}
