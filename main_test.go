package main

import (
	"testing"

	"github.com/chai2010/gettext-go"
	"k8s.io/kubectl/pkg/util/i18n"
)

// TestTranslationsAreNotLoaded checks internal/translations was initialized
// before the kubectl packages that translate their help texts when they are:
// had one come first, kubectl's catalog would be bound under the domain k8s.
func TestTranslationsAreNotLoaded(t *testing.T) {
	// What the kubectl packages ran while they were initialized.
	_ = i18n.T("Display one or many resources")
	if d := gettext.SetDomain(""); d == "k8s" {
		t.Errorf("kubectl's message catalog was loaded (domain %q): a package translated before internal/translations was initialized", d)
	}
}
