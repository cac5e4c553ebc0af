package v1alpha1_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// TestResourcesJSON: other resources sit beside cpu and memory, in name
// order, and read back.
func TestResourcesJSON(t *testing.T) {
	tests := []struct {
		name string
		r    v1alpha1.Resources
		want string
	}{
		{
			name: "cpu and memory only",
			r:    v1alpha1.Resources{CPU: "1040m", Memory: "1664Mi", CPUMillis: 1040, MemoryBytes: 1744830464},
			want: `{"cpu":"1040m","memory":"1664Mi","cpuMillis":1040,"memoryBytes":1744830464}`,
		},
		{
			name: "zero",
			r:    v1alpha1.Resources{CPU: "0", Memory: "0"},
			want: `{"cpu":"0","memory":"0","cpuMillis":0,"memoryBytes":0}`,
		},
		{
			name: "other resources",
			r: v1alpha1.Resources{CPU: "2", Memory: "3Gi", CPUMillis: 2000, MemoryBytes: 3 << 30,
				Other: map[string]string{"nvidia.com/gpu": "2", "ephemeral-storage": "10Gi", "hugepages-2Mi": "4Mi"}},
			want: `{"cpu":"2","memory":"3Gi","cpuMillis":2000,"memoryBytes":3221225472,"ephemeral-storage":"10Gi","hugepages-2Mi":"4Mi","nvidia.com/gpu":"2"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.want {
				t.Errorf("JSON:\n%s\nwant\n%s", data, tc.want)
			}
			var back v1alpha1.Resources
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.r) {
				t.Errorf("read back %+v, want %+v", back, tc.r)
			}
			// Inside a document, by value and by pointer.
			data, err = json.Marshal(v1alpha1.NodeSummary{Requests: tc.r})
			if err != nil {
				t.Fatal(err)
			}
			var node v1alpha1.NodeSummary
			if err := json.Unmarshal(data, &node); err != nil || !reflect.DeepEqual(node.Requests, tc.r) {
				t.Errorf("node summary read back %+v (%v), want requests %+v", node, err, tc.r)
			}
		})
	}
	var r v1alpha1.Resources
	if err := json.Unmarshal([]byte(`{"cpu":"1","nvidia.com/gpu":2}`), &r); err == nil {
		t.Errorf("a resource that is not a quantity string was read: %+v", r)
	}
}
