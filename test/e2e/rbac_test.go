package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// forbiddenAtClusterScope is the server's answer to a user who may list pods in one
// namespace only and asks for all of them, as kubectl prints it.
func forbiddenAtClusterScope(user string) string {
	return `Error from server (Forbidden): pods is forbidden: User "` + user + `" cannot list resource "pods" in API group "" at the cluster scope`
}

// TestRBACImpersonationAndCertificateUser: the narrow user, reached through its client
// certificate and through --as from the admin, gets the same answers: pods of the
// namespace it may read, a one-line Forbidden naming verb, resource and scope for -A
// (it may not list namespaces, so there is nothing to fall back to), and --by-owner with
// a warning in the JSON that owners above the pods are unknown.
func TestRBACImpersonationAndCertificateUser(t *testing.T) {
	admin := as("")
	cert := as(narrowUser)
	viaAs := func(args ...string) []string { return append(args, "--as", narrowUser) }

	want := cert.idx(t, "pods", "-n", fixtures.Shop, "-o", "name")
	mustSucceed(t, "pods -n shop as the certificate user", want)
	if want.Stdout == "" {
		t.Fatal("fixture problem: the narrow user sees no pods in shop")
	}
	got := admin.idx(t, viaAs("pods", "-n", fixtures.Shop, "-o", "name")...)
	mustSucceed(t, "pods -n shop --as jane", got)
	if got.Stdout != want.Stdout {
		t.Errorf("--as %s prints:\n%s\nthe user's own kubeconfig prints:\n%s", narrowUser, got.Stdout, want.Stdout)
	}

	for name, res := range map[string]testenv.Result{
		"certificate user": cert.idx(t, "pods", "-A"),
		"--as":             admin.idx(t, viaAs("pods", "-A")...),
	} {
		noPanic(t, name, res)
		if res.ExitCode != 1 || strings.TrimSpace(res.Stderr) != forbiddenAtClusterScope(narrowUser) || res.Stdout != "" {
			t.Errorf("%s: pods -A: exit %d, stdout %q, stderr %q; want exit 1 and %q", name, res.ExitCode, res.Stdout, res.Stderr, forbiddenAtClusterScope(narrowUser))
		}
	}

	for name, res := range map[string]testenv.Result{
		"certificate user": cert.idx(t, "pods", "-n", fixtures.Shop, "--by-owner", "-o", "json"),
		"--as":             admin.idx(t, viaAs("pods", "-n", fixtures.Shop, "--by-owner", "-o", "json")...),
	} {
		mustSucceed(t, name+": --by-owner", res)
		var doc struct {
			Groups   []any    `json:"groups"`
			Warnings []string `json:"warnings"`
		}
		mustDecode(t, name, res.Stdout, &doc)
		if len(doc.Groups) == 0 || !slices.ContainsFunc(doc.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "owners above ReplicaSet.apps are unknown: ")
		}) {
			t.Errorf("%s: --by-owner groups %d, warnings %q; want groups and the unknown-owners warning", name, len(doc.Groups), doc.Warnings)
		}
		if !strings.Contains(res.Stderr, "warning: owners above ReplicaSet.apps are unknown: ") {
			t.Errorf("%s: stderr lacks the warning: %q", name, res.Stderr)
		}
	}
}

// TestRBACPerNamespaceFallback: a user who may list namespaces, and pods in shop only,
// asks for pods -A. kubectl-idx lists namespace by namespace, answers with shop's pods
// and says, on stderr and in the List's warnings, which namespaces it could not read.
func TestRBACPerNamespaceFallback(t *testing.T) {
	ctx := context.Background()
	const user = "ns-reader"
	u, err := env.AddRoleUser(ctx, user, fixtures.Shop, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}})
	if err != nil {
		t.Fatal(err)
	}
	cr := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-namespaces"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := env.Clientset.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-namespaces"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := env.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Clientset.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
		_ = env.Clientset.RbacV1().ClusterRoles().Delete(context.Background(), cr.Name, metav1.DeleteOptions{})
	})
	nss, err := env.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, ns := range nss.Items {
		if ns.Name != fixtures.Shop {
			others = append(others, ns.Name)
		}
	}
	slices.Sort(others)
	shown := others[:min(len(others), 10)]
	more := ""
	if len(others) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(others)-len(shown))
	}
	wantWarning := fmt.Sprintf("cannot list pods at the cluster scope; listed them in each of the %d namespaces instead, skipping %d where that is forbidden too: %s%s",
		len(nss.Items), len(others), strings.Join(shown, ", "), more)

	ref := as("").idx(t, "pods", "-n", fixtures.Shop, "-o", "name")
	mustSucceed(t, "admin pods -n shop", ref)
	r := runner{kubeconfig: u.Kubeconfig}
	names := r.idx(t, "pods", "-A", "-o", "name")
	mustSucceed(t, "pods -A -o name as "+user, names)
	if names.Stdout != ref.Stdout {
		t.Errorf("pods -A as %s:\n%s\nwant shop's pods:\n%s", user, names.Stdout, ref.Stdout)
	}
	if got := strings.TrimSpace(names.Stderr); got != "warning: "+wantWarning {
		t.Errorf("stderr = %q\nwant %q", got, "warning: "+wantWarning)
	}
	js := r.idx(t, "pods", "-A", "-o", "json")
	mustSucceed(t, "pods -A -o json as "+user, js)
	var list struct {
		Kind     string           `json:"kind"`
		Items    []map[string]any `json:"items"`
		Warnings []string         `json:"warnings"`
	}
	mustDecode(t, "output", js.Stdout, &list)
	if list.Kind != "List" || len(list.Items) != strings.Count(ref.Stdout, "\n") || !slices.Equal(list.Warnings, []string{wantWarning}) {
		t.Errorf("List kind %q, %d items, warnings %q; want List, %d items, [%q]", list.Kind, len(list.Items), list.Warnings, strings.Count(ref.Stdout, "\n"), wantWarning)
	}
	// The same user through --as from the admin.
	viaAs := as("").idx(t, "pods", "-A", "-o", "name", "--as", user)
	mustSucceed(t, "pods -A --as "+user, viaAs)
	if viaAs.Stdout != ref.Stdout {
		t.Errorf("pods -A --as %s:\n%s\nwant:\n%s", user, viaAs.Stdout, ref.Stdout)
	}
}

// TestNoCredentialsInOutput runs queries at -v=10, which logs every request, as a
// bearer-token user (a ServiceAccount token) and as a client-certificate user, and
// checks that neither the token nor the private key appears anywhere in the output.
func TestNoCredentialsInOutput(t *testing.T) {
	ctx := context.Background()
	const sa = "token-reader"
	if _, err := env.Clientset.CoreV1().ServiceAccounts(fixtures.Shop).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: fixtures.Shop},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: narrowUser + "-pod-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: fixtures.Shop}},
	}
	if _, err := env.Clientset.RbacV1().RoleBindings(fixtures.Shop).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Clientset.RbacV1().RoleBindings(fixtures.Shop).Delete(context.Background(), sa, metav1.DeleteOptions{})
		_ = env.Clientset.CoreV1().ServiceAccounts(fixtures.Shop).Delete(context.Background(), sa, metav1.DeleteOptions{})
	})
	tr, err := env.Clientset.CoreV1().ServiceAccounts(fixtures.Shop).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token: %v", err)
	}
	token := tr.Status.Token

	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.ClientCertificateData, ai.ClientKeyData, ai.ClientCertificate, ai.ClientKey = nil, nil, "", ""
		ai.Token = token
	}
	tokenKubeconfig := filepath.Join(t.TempDir(), "token-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, tokenKubeconfig); err != nil {
		t.Fatal(err)
	}

	narrowCfg, err := clientcmd.LoadFromFile(narrow.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var keyPEM []byte
	for _, ai := range narrowCfg.AuthInfos {
		keyPEM = ai.ClientKeyData
		if len(keyPEM) == 0 && ai.ClientKey != "" {
			if keyPEM, err = os.ReadFile(ai.ClientKey); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(keyPEM) == 0 {
		t.Fatal("fixture problem: the certificate user's kubeconfig has no client key")
	}
	// Any line of the key's PEM body, and the key as kubeconfig's base64 holds it.
	secrets := map[string]string{"token": token, "client key (base64)": base64.StdEncoding.EncodeToString(keyPEM)[:64]}
	for i, line := range strings.Split(string(keyPEM), "\n") {
		if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			secrets[fmt.Sprintf("client key line %d", i)] = line
		}
	}

	for _, tc := range []struct {
		name string
		r    runner
		args []string
	}{
		{"token user", runner{kubeconfig: tokenKubeconfig}, []string{"pods", "-n", fixtures.Shop, "-v=10"}},
		{"token user, json", runner{kubeconfig: tokenKubeconfig}, []string{"pods", "-n", fixtures.Shop, "-o", "json", "--by-owner", "-v=10"}},
		{"token user, forbidden -A", runner{kubeconfig: tokenKubeconfig}, []string{"pods", "-A", "-v=10"}},
		{"certificate user", as(narrowUser), []string{"pods", "-n", fixtures.Shop, "-v=10"}},
		{"certificate user, tree", as(narrowUser), []string{"tree", "pod/" + firstPod(t), "-n", fixtures.Shop, "-v=10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.r.idx(t, tc.args...)
			noPanic(t, tc.name, res)
			out := res.Stdout + res.Stderr
			// -v=10 must have logged the requests and their headers, or the check proves nothing.
			if !strings.Contains(out, "/api/v1/") || !strings.Contains(strings.ToLower(out), "accept:") {
				t.Fatalf("-v=10 logged no request headers:\n%.2000s", res.Stderr)
			}
			for what, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("the %s appears in the output", what)
				}
			}
			if strings.HasPrefix(tc.name, "token user") && !strings.Contains(out, "Authorization: Bearer <masked>") {
				t.Errorf("no masked Authorization header in the -v=10 log: the token may be logged under another form")
			}
		})
	}
}

// firstPod is the name of a pod in shop.
func firstPod(t *testing.T) string {
	t.Helper()
	pods, err := env.Clientset.CoreV1().Pods(fixtures.Shop).List(context.Background(), metav1.ListOptions{Limit: 1})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("no pod in shop: %v", err)
	}
	return pods.Items[0].Name
}
