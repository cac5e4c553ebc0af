package printers

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
)

// GraphCommands names the commands that draw relation graphs, for messages.
const GraphCommands = "kubectl idx tree, owners, selects, selected-by or uses"

// NoGraph is the error of -o dot or -o mermaid on a command without graphs.
func NoGraph(format string) error {
	return fmt.Errorf("-o %s draws relation graphs: use it with %s", format, GraphCommands)
}

// GraphPrinter resolves -o of pf: a graph format for the commands that
// draw graphs, graphs true (no delegate printer), kubectl's printer
// otherwise. An unknown format is kubectl's error, whose allowed formats
// include dot and mermaid where they are allowed.
func GraphPrinter(pf *get.PrintFlags, graphs bool) (printers.ResourcePrinter, error) {
	if format := *pf.OutputFormat; IsGraph(format) {
		if !graphs {
			return nil, NoGraph(format)
		}
		return nil, nil
	}
	p, err := pf.ToPrinter()
	if graphs && genericclioptions.IsNoCompatiblePrinterError(err) {
		format := *pf.OutputFormat
		return nil, genericclioptions.NoCompatiblePrinterError{OutputFormat: &format, AllowedFormats: append(pf.AllowedFormats(), GraphFormats...)}
	}
	return p, err
}

// FeedPrinter returns the delegate printer of a feed for the formats it
// does not print itself (name, jsonpath, templates), nil for tables, json
// and yaml, and kubectl's error listing the allowed formats for anything
// else.
func FeedPrinter(pf *get.PrintFlags) (printers.ResourcePrinter, error) {
	format := OutputFormat(pf)
	switch format {
	case "", "wide", "json", "yaml":
		return nil, nil
	}
	if p, err := pf.NamePrintFlags.ToPrinter(format); !genericclioptions.IsNoCompatiblePrinterError(err) {
		return p, err
	}
	if p, err := pf.TemplateFlags.ToPrinter(format); !genericclioptions.IsNoCompatiblePrinterError(err) {
		return p, err
	}
	allowed := []string{"json", "yaml", "wide"}
	allowed = append(allowed, pf.NamePrintFlags.AllowedFormats()...)
	allowed = append(allowed, pf.TemplateFlags.AllowedFormats()...)
	return nil, genericclioptions.NoCompatiblePrinterError{OutputFormat: &format, AllowedFormats: allowed}
}

// OutputFormat is -o of pf, go-template for kubectl's --template without -o.
func OutputFormat(pf *get.PrintFlags) string {
	if tmpl := pf.TemplateFlags.TemplateArgument; *pf.OutputFormat == "" && tmpl != nil && *tmpl != "" {
		return "go-template"
	}
	return *pf.OutputFormat
}
