// Package shapes holds the JSON shapes of kubectl-idx's documents as README.md
// documents them, for the tests that read printed output: the printers' unit
// tests and the end-to-end tests decode with the same shapes, strictly, so a
// field added to a document without its documented shape fails both.
package shapes

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Tree is the Tree and OwnerTree document.
type Tree struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Root       *TreeItem `json:"root"`
	Warnings   []string  `json:"warnings"`
}

// TreeItem is an object of a Tree.
type TreeItem struct {
	APIVersion        string      `json:"apiVersion"`
	Kind              string      `json:"kind"`
	Namespace         string      `json:"namespace"`
	Name              string      `json:"name"`
	UID               string      `json:"uid"`
	CreationTimestamp string      `json:"creationTimestamp"`
	Ready             string      `json:"ready"`
	Status            string      `json:"status"`
	Controller        bool        `json:"controller"`
	Missing           bool        `json:"missing"`
	Unknown           bool        `json:"unknown"`
	Cycle             bool        `json:"cycle"`
	Children          []*TreeItem `json:"children"`
	Owners            []*TreeItem `json:"owners"`
}

// RelationList is the OrphanList and UsesList document.
type RelationList struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Subject    *RelationItem   `json:"subject"`
	Direction  string          `json:"direction"`
	Items      []*RelationItem `json:"items"`
	Warnings   []string        `json:"warnings"`
}

// RelationItem is an object of a RelationList.
type RelationItem struct {
	APIVersion        string     `json:"apiVersion"`
	Kind              string     `json:"kind"`
	Namespace         string     `json:"namespace"`
	Name              string     `json:"name"`
	UID               string     `json:"uid"`
	CreationTimestamp string     `json:"creationTimestamp"`
	MissingOwners     []OwnerRef `json:"missingOwners"`
	OrphaningOwners   []OwnerRef `json:"orphaningOwners"`
	Via               []string   `json:"via"`
	Optional          bool       `json:"optional"`
	Exists            *bool      `json:"exists"`
}

// OwnerRef is an owner a RelationItem names.
type OwnerRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

// Decode reads one document printed with -o json into D, refusing a field
// D's shape lacks, and returns its plain values too.
func Decode[D any](out string) (D, map[string]any, error) {
	var doc D
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return doc, nil, fmt.Errorf("decoding %s: %w", out, err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		return doc, nil, err
	}
	return doc, raw, nil
}
