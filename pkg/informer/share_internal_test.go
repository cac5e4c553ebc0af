package informer

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSharerForgetsOldGenerations: a Sharer holds at most two generations
// of parts, keeps the parts still asked for, and objects keep what they
// shared whatever it forgets.
func TestSharerForgetsOldGenerations(t *testing.T) {
	s := NewSharer()
	s.generation = 4
	obj := func(app string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}}
	}
	first := obj("web")
	s.Share(first)
	var apps []*metav1.PartialObjectMetadata
	for i := range 20 {
		apps = append(apps, obj(fmt.Sprint("app-", i)))
		s.Share(apps[i])
		// web's labels are asked for between every two others: they stay.
		again := obj("web")
		s.Share(again)
		if fmt.Sprintf("%p", again.Labels) != fmt.Sprintf("%p", first.Labels) {
			t.Fatalf("after %d other objects, web's labels are no longer shared", i+1)
		}
		if len(s.cur) > s.generation || len(s.old) > s.generation {
			t.Fatalf("the sharer holds %d and %d parts, want at most %d per generation", len(s.cur), len(s.old), s.generation)
		}
	}
	if first.Labels["app"] != "web" {
		t.Error("an object lost what it shared when the sharer forgot it")
	}
	// app-0's labels were not asked for since: forgotten, the next object
	// with them has them as its own.
	again := obj("app-0")
	s.Share(again)
	if fmt.Sprintf("%p", again.Labels) == fmt.Sprintf("%p", apps[0].Labels) {
		t.Error("labels no object asked for in two generations are still held")
	}
}
