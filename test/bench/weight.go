package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// podWeight is how heavy the bench's pods are, as the server sends them: what every figure
// of a run depends on, printed beside its table.
type podWeight struct {
	pods int
	// json is the bytes of the server's JSON LIST (compact) per pod; metadata and
	// managedFields the part of each item that is its metadata, and of that its
	// managedFields.
	json, metadata, managedFields float64
	// metadataProtobuf is the bytes of the server's metadata-only protobuf LIST per pod.
	metadataProtobuf float64
}

// String renders w for the report's header.
func (w podWeight) String() string {
	if w.pods == 0 {
		return "pod weight unknown"
	}
	return fmt.Sprintf("%.1f KB of JSON per pod (metadata %.1f KB, of which managedFields %.1f KB), %.1f KB of metadata-only protobuf per pod; from the server's own LISTs of %d pods",
		w.json/1000, w.metadata/1000, w.managedFields/1000, w.metadataProtobuf/1000, w.pods)
}

// weighPods lists every pod twice, in pages of 1,000 so the bench's memory stays flat
// whatever the number of pods: as JSON (the bytes of the answers, and of each item's
// metadata and managedFields) and as metadata-only protobuf.
func weighPods(ctx context.Context, cs kubernetes.Interface) (podWeight, error) {
	var w podWeight
	var jsonBytes, metaBytes, mfBytes, protoBytes int64
	const (
		jsonType = "application/json"
		metaType = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	)
	pages := func(accept string, page func([]byte) (string, error)) error {
		cont := ""
		for {
			data, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/pods").SetHeader("Accept", accept).
				Param("limit", "1000").Param("continue", cont).DoRaw(ctx)
			if err != nil {
				return err
			}
			if cont, err = page(data); err != nil || cont == "" {
				return err
			}
		}
	}
	err := pages(jsonType, func(data []byte) (string, error) {
		var list struct {
			Metadata metav1.ListMeta `json:"metadata"`
			Items    []struct {
				Metadata json.RawMessage `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return "", err
		}
		jsonBytes += int64(len(data))
		w.pods += len(list.Items)
		for _, it := range list.Items {
			metaBytes += int64(len(it.Metadata))
			var m struct {
				ManagedFields json.RawMessage `json:"managedFields"`
			}
			if err := json.Unmarshal(it.Metadata, &m); err != nil {
				return "", err
			}
			mfBytes += int64(len(m.ManagedFields))
		}
		return list.Metadata.Continue, nil
	})
	if err != nil {
		return podWeight{}, fmt.Errorf("weighing pods as JSON: %w", err)
	}
	err = pages(metaType, func(data []byte) (string, error) {
		protoBytes += int64(len(data))
		return protobufContinue(data)
	})
	if err != nil {
		return podWeight{}, fmt.Errorf("weighing pods as metadata-only protobuf: %w", err)
	}
	if w.pods == 0 {
		return w, nil
	}
	n := float64(w.pods)
	w.json, w.metadata, w.managedFields, w.metadataProtobuf = float64(jsonBytes)/n, float64(metaBytes)/n, float64(mfBytes)/n, float64(protoBytes)/n
	return w, nil
}

// protobufContinue returns the continue token of a protobuf PartialObjectMetadataList
// answer: the API server's protobuf envelope (a magic number, then a runtime.Unknown
// holding the list).
func protobufContinue(data []byte) (string, error) {
	magic := []byte{0x6b, 0x38, 0x73, 0x00}
	if !bytes.HasPrefix(data, magic) {
		return "", errors.New("not a protobuf answer")
	}
	var u runtime.Unknown
	if err := u.Unmarshal(data[len(magic):]); err != nil {
		return "", err
	}
	var list metav1.PartialObjectMetadataList
	if err := list.Unmarshal(u.Raw); err != nil {
		return "", err
	}
	return list.Continue, nil
}
