package errtext

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
)

// DemoHint follows kubectl's error when the kubeconfig read does not exist
// (NeedsDemoHint): a newcomer learns how to get a cluster to try kubectl-idx
// on.
const DemoHint = "No kubeconfig found: to try kubectl idx on a local cluster, run `make demo` in a clone of https://github.com/kubectl-idx/kubectl-idx"

// NeedsDemoHint reports whether DemoHint follows err: an error reaching a
// cluster, or --kubeconfig's (kubeconfig) file missing, when the kubeconfig
// read does not exist.
func NeedsDemoHint(err error, kubeconfig string) bool {
	return (reachingCluster(err) || missingKubeconfig(err, kubeconfig)) && noKubeconfig(kubeconfig)
}

// noKubeconfig reports whether the kubeconfig that is read does not exist:
// the file --kubeconfig (flag) names, else every file KUBECONFIG lists (the
// loader passes over those missing), else ~/.kube/config when no in-cluster
// config stands in for it.
func noKubeconfig(flag string) bool {
	if flag != "" {
		return !exists(flag)
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return !slices.ContainsFunc(filepath.SplitList(env), exists)
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return false
	}
	return !exists(filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName))
}

// exists reports whether a file is at path: anything but "not found" counts,
// as the loader then reads it and says what is wrong.
func exists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && !errors.Is(err, fs.ErrNotExist)
}

// missingKubeconfig reports whether err is the loader's for the file
// --kubeconfig (flag) names, which does not exist; kubectl words it as the
// stat error.
func missingKubeconfig(err error, flag string) bool {
	var pathErr *fs.PathError
	return flag != "" && errors.As(err, &pathErr) && pathErr.Path == flag && errors.Is(err, fs.ErrNotExist)
}

// reachingCluster reports whether err comes from reaching a cluster, or from
// the configuration that says how: kubectl's defaults point nowhere
// (localhost:8080) without a kubeconfig.
func reachingCluster(err error) bool {
	var urlErr *url.Error
	return errors.As(err, &urlErr) || clientcmd.IsEmptyConfig(err) || clientcmd.IsConfigurationInvalid(err)
}
