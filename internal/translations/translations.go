// Package translations keeps kubectl's message catalogs unloaded. The kubectl
// packages kubectl idx borrows printers from translate their own commands'
// help texts when they are initialized, which parses an embedded catalog:
// 15 ms and 4 MB of every process start, up to a third of a warm answer, for
// text kubectl idx never shows (its own help and messages are not translated).
//
// It must be initialized before any package that calls i18n.T: Go
// initializes, of the packages whose imports are ready, the first by import
// path, and this one's sorts before every k8s.io package. main imports it;
// TestTranslationsAreNotLoaded checks the order holds.
package translations

import "k8s.io/kubectl/pkg/util/i18n"

func init() {
	if err := i18n.SetLoadTranslationsFunc(func() error { return nil }); err != nil {
		panic(err)
	}
}
