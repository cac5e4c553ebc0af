// Package graphviz reads back what Graphviz's dot draws of a DOT graph, so that
// tests check the drawing a person would see (labels after dot's own escaping,
// which edges are dashed) rather than the DOT text.
package graphviz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// Node is one drawn node: its name in the DOT source, the text lines of its
// label joined by "\n", and its style ("dashed", or "" for solid).
type Node struct {
	Name, Label, Style string
}

// Edge is one drawn edge between the nodes at Tail and Head (indexes into
// Drawing.Nodes), with its label's text lines and style.
type Edge struct {
	Tail, Head   int
	Label, Style string
}

// Drawing is what dot drew.
type Drawing struct {
	Nodes []Node
	Edges []Edge
}

// Draw runs dot (a path, or "" to look it up on PATH) with -Tjson on text and
// returns what it drew. Anything dot writes on stderr is an error: it warns
// about input it repaired.
func Draw(dot, text string) (Drawing, error) {
	if dot == "" {
		var err error
		if dot, err = exec.LookPath("dot"); err != nil {
			return Drawing{}, fmt.Errorf("the dot command of Graphviz is needed (apt-get install graphviz): %w", err)
		}
	}
	cmd := exec.Command(dot, "-Tjson")
	cmd.Stdin = strings.NewReader(text)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		return Drawing{}, fmt.Errorf("dot -Tjson: %v: %s", err, stderr.String())
	}
	type op struct {
		Op   string `json:"op"`
		Text string `json:"text"`
	}
	var doc struct {
		Objects []struct {
			Name  string `json:"name"`
			Style string `json:"style"`
			LDraw []op   `json:"_ldraw_"`
		} `json:"objects"`
		Edges []struct {
			Tail  int    `json:"tail"`
			Head  int    `json:"head"`
			Style string `json:"style"`
			LDraw []op   `json:"_ldraw_"`
		} `json:"edges"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		return Drawing{}, fmt.Errorf("reading dot -Tjson: %w", err)
	}
	// Text operations ("T") are the label's lines, in order.
	texts := func(ops []op) string {
		var lines []string
		for _, o := range ops {
			if o.Op == "T" {
				lines = append(lines, o.Text)
			}
		}
		return strings.Join(lines, "\n")
	}
	var d Drawing
	for _, o := range doc.Objects {
		d.Nodes = append(d.Nodes, Node{Name: o.Name, Label: texts(o.LDraw), Style: o.Style})
	}
	for _, e := range doc.Edges {
		if e.Tail >= len(d.Nodes) || e.Head >= len(d.Nodes) {
			return Drawing{}, fmt.Errorf("dot drew an edge %d -> %d of %d nodes", e.Tail, e.Head, len(d.Nodes))
		}
		d.Edges = append(d.Edges, Edge{Tail: e.Tail, Head: e.Head, Label: texts(e.LDraw), Style: e.Style})
	}
	return d, nil
}
