package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"

	buildinfo "github.com/kubectl-idx/kubectl-idx/internal/version"
)

var versionExample = `  # Print the client and server versions
  kubectl idx version

  # Print only the client version, as JSON
  kubectl idx version --client -o json`

// VersionOptions holds the flags and state of `kubectl idx version`.
type VersionOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	ClientOnly  bool
	Output      string

	serverVersion func(ctx context.Context) (*version.Info, error)
	genericiooptions.IOStreams
}

// versionInfo is what `version -o json` prints.
type versionInfo struct {
	ClientVersion clientVersion `json:"clientVersion"`
	ServerVersion *version.Info `json:"serverVersion,omitempty"`
}

type clientVersion struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
}

// NewCmdVersion returns the version command.
func NewCmdVersion(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{ConfigFlags: configFlags, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the client and server version information",
		Example: versionExample,
		Args:    cobra.NoArgs,
		RunE:    runE(o),
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format. One of: json. Plain text when empty.")
	return cmd
}

// Complete wires the discovery client used to ask for the server version,
// with the request's context: its deadline, and Ctrl-C, end the request.
func (o *VersionOptions) Complete(*cobra.Command, []string) error {
	if o.ClientOnly || o.serverVersion != nil {
		return nil
	}
	o.serverVersion = func(ctx context.Context) (*version.Info, error) {
		dc, err := o.ConfigFlags.ToDiscoveryClient()
		if err != nil {
			return nil, err
		}
		if v, ok := dc.(discovery.ServerVersionInterfaceWithContext); ok {
			return v.ServerVersionWithContext(ctx)
		}
		return dc.ServerVersion()
	}
	return nil
}

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	if o.Output != "" && o.Output != "json" {
		return fmt.Errorf("--output must be 'json' or empty, got %q", o.Output)
	}
	return nil
}

// Run prints the versions; the client version is printed even when the server
// cannot be reached, and the error follows.
func (o *VersionOptions) Run(ctx context.Context) error {
	info := versionInfo{ClientVersion: clientVersion{Version: buildinfo.Version, Commit: buildinfo.Commit, Date: buildinfo.Date}}
	var serverErr error
	if !o.ClientOnly {
		// --request-timeout bounds the request; without it 30 seconds do,
		// which discovery's own default (32) would outlast.
		timeout := 30 * time.Second
		if f := o.ConfigFlags; f != nil && f.Timeout != nil {
			if t, err := clientcmd.ParseTimeout(*f.Timeout); err == nil && t > 0 {
				timeout = t
			}
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		info.ServerVersion, serverErr = o.serverVersion(ctx)
	}
	if o.Output == "json" {
		data, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(o.Out, string(data))
		return serverErr
	}
	fmt.Fprintf(o.Out, "Client Version: %s (commit %s, built %s)\n", info.ClientVersion.Version, info.ClientVersion.Commit, info.ClientVersion.Date)
	if info.ServerVersion != nil {
		fmt.Fprintf(o.Out, "Server Version: %s\n", info.ServerVersion.GitVersion)
	}
	return serverErr
}
