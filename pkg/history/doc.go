// Package history holds the pure parts of `kubectl idx history` and `kubectl
// idx blame`: where a field is (Path), what changed between two states of an
// object (Diff), who last wrote a field (Managers, from managedFields), which
// stretches of a window no source covers (Uncovered) and an object's YAML
// line by line with the field each line shows (YAMLLines). It reads decoded
// JSON (map[string]any, []any, scalars) and metav1 types, never an informer
// or a client: pkg/query gathers the objects and builds the documents.
//
// Vocabulary:
//   - Path: a field from the object's root. A list entry is named by its
//     merge key where its list has one (containers and env by name, ports
//     by containerPort, volumeMounts by mountPath: the keys kubectl's
//     strategic merge patches merge by, StructKeys), else by its index.
//     String renders a kubectl JSONPath,
//     .spec.template.spec.containers[?(@.name=="web")].image, which
//     `kubectl get -o jsonpath='{...}'` reads; Short the form a table
//     prints, .spec.template.spec.containers[name=web].image.
//   - Change: a field that differs between two states, with the values
//     before and after. Diff compares keyed lists entry by entry, so that an
//     entry inserted before others is one change and not a change of every
//     entry after it; a list without a key is one value.
//   - Managers: an object's managedFields, each entry's FieldsV1 parsed as
//     the server wrote it (sigs.k8s.io/structured-merge-diff's fieldpath).
//     Owners finds the entries that own a path by walking each set beside
//     the object: a list entry of the path is matched with the server's
//     entry that names the same object entry, by its key fields
//     (k:{"containerPort":8080,"protocol":"TCP"}), its value (v:"x", a set)
//     or its index (an atomic list's), never by the path's index alone.
//     That is what attributes env[1] to the manager that added that entry
//     rather than to whoever owns the entry that used to be at index 1.
//
// Nothing here is safe to share across goroutines unless it is only read;
// nothing here changes the values it is handed.
package history
