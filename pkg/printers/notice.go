package printers

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Notice is kubectl's notice of an empty answer: in, a format naming the
// namespace, when every context's answer is of the same one (scopes), else
// none.
func Notice(scopes []string, none, in string) string {
	if len(scopes) == 0 || scopes[0] == metav1.NamespaceAll || slices.ContainsFunc(scopes, func(s string) bool { return s != scopes[0] }) {
		return none
	}
	return fmt.Sprintf(in, scopes[0])
}

// ListingScopes are the scopes of the listings answered.
func ListingScopes(answers []query.Answer[*query.Listing]) []string {
	var scopes []string
	for _, a := range answers {
		if a.Value != nil {
			scopes = append(scopes, a.Value.Scope)
		}
	}
	return scopes
}

// NoResources is kubectl's notice of a listing with nothing in it.
func NoResources(answers []query.Answer[*query.Listing]) string {
	return Notice(ListingScopes(answers), "No resources found", "No resources found in %s namespace.")
}
