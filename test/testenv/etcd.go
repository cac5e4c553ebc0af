package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// CompactEtcd compacts etcd's history up to its current revision, as kube-apiserver's
// periodic compaction does (every five minutes by default), and returns that revision. A
// watch resumed from an older resource version then has nothing to resume from: with
// kube-apiserver's watch cache off (--watch-cache=false) it ends with 410 Gone and
// informers list again. It speaks to etcd's JSON gateway, so it needs no etcd client.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	etcd := e.env.ControlPlane.Etcd
	if etcd == nil || etcd.URL == nil {
		return 0, errors.New("etcd has no client URL")
	}
	base := etcd.URL.String()
	// A range read of any key answers with the current revision in its header.
	var status struct {
		Header struct {
			Revision json.Number `json:"revision"`
		} `json:"header"`
	}
	if err := etcdCall(ctx, base+"/v3/kv/range", map[string]any{"key": "Lw=="}, &status); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(status.Header.Revision.String(), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd revision %q: %w", status.Header.Revision, err)
	}
	// physical: return once the compaction is applied, not only scheduled.
	if err := etcdCall(ctx, base+"/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

// etcdCall posts req as JSON to one of etcd's gateway endpoints and decodes the answer
// into resp, if not nil.
func etcdCall(ctx context.Context, url string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", url, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", url, res.Status, data)
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("etcd %s: %w: %s", url, err, data)
	}
	return nil
}
