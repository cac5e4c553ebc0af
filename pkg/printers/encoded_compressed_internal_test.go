package printers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// configMaps are n ConfigMaps of 1.3 KB of JSON, a config file each.
func configMaps(n int) []runtime.Object {
	objs := make([]runtime.Object, n)
	for i := range objs {
		objs[i] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("settings-%d", i), Namespace: "shop", UID: types.UID(fmt.Sprintf("cm-%d", i)), ResourceVersion: "3"},
			Data:       map[string]string{"owner": fmt.Sprint(i), "app.yaml": strings.Repeat("server:\n  port: 8080\n  timeout: 30s\n", 20)},
		}
	}
	return objs
}

// listItemPrefix is the prefix of an item's lines in a List's -o json.
const listItemPrefix = "        "

// freshJSON is obj printed as gvk as -o json writes it at prefix: json.Marshal's
// bytes, indented.
func freshJSON(t *testing.T, obj runtime.Object, gvk schema.GroupVersionKind, prefix string) []byte {
	t.Helper()
	compact, err := json.Marshal(readOnlyPrintable(obj, gvk))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, compact, prefix, "    "); err != nil {
		t.Fatal(err)
	}
	return want.Bytes()
}

// checkKeptIsFresh fails unless each object's kept encoding, decompressed,
// is json.Marshal's bytes of it indented as -o json indents them, at the
// prefix of a List's items and at a deeper one, and each was kept (not
// encoded again).
func checkKeptIsFresh(t *testing.T, c *Encodings, gvk schema.GroupVersionKind, objs []runtime.Object) {
	t.Helper()
	for _, o := range objs {
		key := keyOfEncoding(o, gvk)
		for _, prefix := range []string{listItemPrefix, "                    "} {
			var got bytes.Buffer
			got.WriteString("kept: ")
			if !c.appendKept(&got, key, o, prefix) {
				t.Fatalf("%s: no kept encoding", key.uid)
			}
			if want := append([]byte("kept: "), freshJSON(t, o, gvk, prefix)...); !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%s at %q: kept encoding\n%s\nwant\n%s", key.uid, prefix, got.Bytes(), want)
			}
		}
	}
}

// TestKeptEncodingsCompressed: pods, many enough to make their kind's
// dictionary, and ConfigMaps, too few for one, are printed from their
// compressed encodings byte for byte as they are encoded afresh, and kept
// in fewer bytes than their JSON: with the dictionary, in less than a
// tenth.
func TestKeptEncodingsCompressed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := NewEncodings(ctx, time.Hour)
	pods, cms := clusterPods(t, 300), configMaps(5)

	for _, k := range []struct {
		gvk  schema.GroupVersionKind
		objs []runtime.Object
	}{{podGVK, pods}, {configMapGVK, cms}} {
		want := jsonListOf(t, nil, k.gvk, k.objs)
		for answer := range 3 {
			if got := jsonListOf(t, c, k.gvk, k.objs); got != want {
				t.Fatalf("%s answer %d with encodings kept differs from a fresh one", k.gvk.Kind, answer)
			}
		}
		checkKeptIsFresh(t, c, k.gvk, k.objs)
	}

	if d := c.kinds[podGVK]; d == nil || d.dict == nil {
		t.Fatal("no dictionary for 300 pods")
	}
	if d := c.kinds[configMapGVK]; d == nil || d.dict != nil || len(d.sample) == 0 {
		t.Fatalf("5 ConfigMaps: %+v, want a sample and no dictionary", d)
	}
	var podJSON, podKept, withDict int
	for _, o := range pods {
		e := c.byUID[keyOfEncoding(o, podGVK)]
		podJSON += e.size
		podKept += len(e.block)
		if e.dict != nil {
			withDict++
		}
	}
	if withDict < len(pods)-20 || podKept*10 > podJSON {
		t.Errorf("pods: %d of %d kept with the dictionary, %d bytes for %d of JSON", withDict, len(pods), podKept, podJSON)
	}
	for _, o := range cms {
		if e := c.byUID[keyOfEncoding(o, configMapGVK)]; e.dict != nil || len(e.block) >= e.size {
			t.Errorf("ConfigMap %d bytes of %d kept, with dictionary %v", len(e.block), e.size, e.dict != nil)
		}
	}
	n, size := c.Kept()
	var sum int64
	for _, e := range c.byUID {
		sum += int64(len(e.block))
	}
	sum += dictBytes + int64(len(c.kinds[configMapGVK].sample))
	if n != len(pods)+len(cms) || size != sum {
		t.Errorf("Kept() = %d objects, %d bytes; want %d, %d", n, size, len(pods)+len(cms), sum)
	}
}

// TestKeptEncodingsCorrupted: an entry whose block is damaged, cut short,
// or decompressed with another dictionary is never printed: the object is
// encoded afresh and its entry replaced.
func TestKeptEncodingsCorrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := NewEncodings(ctx, time.Hour)
	pods := clusterPods(t, 40)
	jsonListOf(t, c, podGVK, pods)
	pod := pods[len(pods)-1]
	key := keyOfEncoding(pod, podGVK)
	good := c.byUID[key]
	if good.dict == nil {
		t.Fatal("the last of 40 pods was kept without the dictionary")
	}
	other := s2.MakeDict(bytes.Repeat([]byte(`{"metadata":{"name":"x"}}`), 100), nil)

	var damaged []*encoding
	for i := 0; i < len(good.block); i += 7 {
		block := bytes.Clone(good.block)
		block[i] ^= 0x5a
		damaged = append(damaged, &encoding{obj: pod, block: block, dict: good.dict, prefix: good.prefix, size: good.size, sum: good.sum})
	}
	damaged = append(damaged,
		&encoding{obj: pod, block: good.block[:len(good.block)/2], dict: good.dict, prefix: good.prefix, size: good.size, sum: good.sum},
		&encoding{obj: pod, block: good.block, dict: other, prefix: good.prefix, size: good.size, sum: good.sum},
		&encoding{obj: pod, block: good.block, dict: nil, prefix: good.prefix, size: good.size, sum: good.sum},
	)
	// Damage that still decompresses to as many bytes, but others, is what
	// only the checksum finds. A changed byte that gives the same bytes (a
	// copy of spaces from another run of spaces) is no damage: it may be
	// printed. Each is read at the prefix it was kept at, and at another.
	kept := freshJSON(t, pod, podGVK, good.prefix)
	decoded := 0
	for i, e := range damaged {
		var b []byte
		var err error
		if e.dict != nil {
			b, err = e.dict.Decode(nil, e.block)
		} else {
			b, err = s2.Decode(nil, e.block)
		}
		harmless := err == nil && bytes.Equal(b, kept)
		if err == nil && len(b) == e.size && !harmless {
			decoded++
		}
		for _, prefix := range []string{listItemPrefix, "    "} {
			c.mu.Lock()
			c.byUID[key] = e
			c.mu.Unlock()
			var got bytes.Buffer
			if err := appendJSON(&got, pod, podGVK, prefix, c); err != nil {
				t.Fatal(err)
			}
			if fresh := freshJSON(t, pod, podGVK, prefix); !bytes.Equal(got.Bytes(), fresh) {
				t.Fatalf("damaged entry %d printed at %q:\n%s\nwant\n%s", i, prefix, got.Bytes(), fresh)
			}
			if c.byUID[key] == e && !harmless {
				t.Fatalf("damaged entry %d was not replaced", i)
			}
		}
	}
	if decoded == 0 {
		t.Fatal("no damaged block decompressed: the checksum was not tested")
	}
	checkKeptIsFresh(t, c, podGVK, pods)
}

// TestKeptEncodingsConcurrent: answers printed at once, while objects are
// updated and encodings forgotten, each print what a fresh answer prints
// (run with -race).
func TestKeptEncodingsConcurrent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := NewEncodings(ctx, time.Hour)
	versions := [][]runtime.Object{clusterPods(t, 60), clusterPods(t, 60)}
	for _, o := range versions[1] {
		o.(*corev1.Pod).Labels["version"] = "2"
	}
	want := []string{jsonListOf(t, nil, podGVK, versions[0]), jsonListOf(t, nil, podGVK, versions[1])}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 6 {
		wg.Go(func() {
			for i := range 8 {
				v := (g + i) % 2
				gvks := map[runtime.Object]schema.GroupVersionKind{}
				for _, o := range versions[v] {
					gvks[o] = podGVK
				}
				var b bytes.Buffer
				if err := writeJSONListFields(&b, versions[v], gvks, nil, true, c); err != nil {
					errs <- err
					return
				}
				if b.String() != want[v] {
					errs <- fmt.Errorf("answer %d of printer %d differs from a fresh one", i, g)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			c.forget(time.Now())
			c.Kept()
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestKeptEncodingsForget: forgetting drops the encodings not used since,
// keeps the others, and drops a kind's dictionary with its last encoding.
func TestKeptEncodingsForget(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := NewEncodings(ctx, time.Hour)
	pods, cms := clusterPods(t, 30), configMaps(3)
	jsonListOf(t, c, podGVK, pods)
	jsonListOf(t, c, configMapGVK, cms)
	_, before := c.Kept()
	time.Sleep(10 * time.Millisecond)
	cut := time.Now()
	jsonListOf(t, c, configMapGVK, cms)

	c.forget(cut)
	n, size := c.Kept()
	if n != len(cms) || c.kinds[podGVK] != nil || c.kinds[configMapGVK] == nil || size <= 0 || size >= before {
		t.Fatalf("after forgetting the pods: %d kept in %d bytes (%d before), pods' dictionary %v", n, size, before, c.kinds[podGVK])
	}
	checkKeptIsFresh(t, c, configMapGVK, cms)
	c.forget(time.Now().Add(time.Minute))
	if n, size := c.Kept(); n != 0 || size != 0 || len(c.kinds) != 0 {
		t.Fatalf("after forgetting all: %d kept in %d bytes, %d kinds", n, size, len(c.kinds))
	}
	// The next pods make a dictionary again.
	if got, want := jsonListOf(t, c, podGVK, pods), jsonListOf(t, nil, podGVK, pods); got != want {
		t.Fatal("pods after forgetting differ from a fresh answer")
	}
	if d := c.kinds[podGVK]; d == nil || d.dict == nil {
		t.Fatal("no dictionary made again for 30 pods")
	}
}

// TestSwapPrefix: the prefix after each newline is swapped for another,
// longer or shorter, and bytes whose newline lacks it are refused.
func TestSwapPrefix(t *testing.T) {
	src := []byte("{\n  - \"a\": [\n  -     1\n  - ]\n  -}")
	for _, c := range []struct{ to, want string }{
		{"", "{\n \"a\": [\n     1\n ]\n}"},
		{"        ", "{\n         \"a\": [\n             1\n         ]\n        }"},
	} {
		if got := swapPrefix([]byte("x"), src, "  -", c.to); string(got) != "x"+c.want {
			t.Errorf("to %q: %q, want %q", c.to, got, "x"+c.want)
		}
	}
	if got := swapPrefix(nil, []byte("{\n  -1\n 2}"), "  -", ""); got != nil {
		t.Errorf("a newline without the prefix: %q, want nil", got)
	}
}
