package warm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	payloads := [][]byte{nil, []byte("x"), bytes.Repeat([]byte{0xff}, maxFrame)}
	for _, p := range payloads {
		if err := writeFrame(&buf, frameStdout, p); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range payloads {
		typ, got, err := readFrame(&buf)
		if err != nil || typ != frameStdout || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: %s, %d bytes, %v", i, typ, len(got), err)
		}
	}
	if _, _, err := readFrame(&buf); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
	if err := writeFrame(&buf, frameStdout, make([]byte, maxFrame+1)); err == nil {
		t.Error("wrote a frame over the limit")
	}
}

func TestFrameGarbage(t *testing.T) {
	header := func(typ byte, n uint32) []byte {
		b := []byte{typ, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], n)
		return b
	}
	for _, tt := range []struct {
		name  string
		input []byte
		want  error
	}{
		{"unknown type", header('Z', 0), errBadFrame},
		{"HTTP", []byte("GET / HTTP/1.1\r\n\r\n"), errBadFrame},
		{"over the limit", header('o', maxFrame+1), errBadFrame},
		{"huge length", header('o', 0xffffffff), errBadFrame},
		{"truncated header", []byte{'o', 0, 0}, io.ErrUnexpectedEOF},
		{"truncated payload", append(header('o', 10), "abc"...), io.ErrUnexpectedEOF},
		{"empty", nil, io.EOF},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readFrame(bytes.NewReader(tt.input))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	var h hello
	if err := decodeJSON(frameHello, []byte(`{"protocol":1,"version":"v1","identity":"`+strings.Repeat("ab", 32)+`"}`), frameHello, &h); err != nil || h.Version != "v1" {
		t.Fatalf("hello: %+v, %v", h, err)
	}
	for name, in := range map[string]string{
		"not JSON":        `{`,
		"bad identity":    `{"identity":"xyz"}`,
		"wrong type":      `{"protocol":"one"}`,
		"trailing object": `{} {}`,
	} {
		if err := decodeJSON(frameHello, []byte(in), frameHello, &h); !errors.Is(err, errBadFrame) {
			t.Errorf("%s: got %v, want a malformed frame", name, err)
		}
	}
	if err := decodeJSON(frameStatus, []byte(`{}`), frameHello, &h); !errors.Is(err, errBadFrame) {
		t.Errorf("a status frame in place of a hello: %v", err)
	}
	var refused *refusedError
	if err := decodeJSON(frameFailure, []byte(`{"message":"no"}`), frameStatus, &h); !errors.As(err, &refused) || err.Error() != "no" {
		t.Errorf("a failure frame: %v", err)
	}
}

func TestEnvAllowed(t *testing.T) {
	for name, want := range map[string]bool{
		"KUBECONFIG":         true,
		"HOME":               true,
		"KUBECACHEDIR":       true,
		"KUBECTL_IDX_CACHE":  true,
		"KUBECTL_IDX_":       false,
		"KUBECTL_IDXX":       false,
		"PATH":               false,
		"AWS_SECRET_KEY":     false,
		"LD_PRELOAD":         false,
		"kubeconfig":         false,
		"KUBERNETES_SERVICE": false,
	} {
		if got := EnvAllowed(name); got != want {
			t.Errorf("EnvAllowed(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRunRequestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		req  RunRequest
		want string
	}{
		{"fine", RunRequest{Args: []string{"pods"}, Env: map[string]string{"KUBECONFIG": "a"}, Dir: "/home/a", Width: 80}, ""},
		{"env", RunRequest{Env: map[string]string{"LD_PRELOAD": "x"}}, `environment variable "LD_PRELOAD" is not passed to the cache server`},
		{"relative dir", RunRequest{Dir: "home"}, `working directory "home" is not absolute`},
		{"width", RunRequest{Width: -1}, "terminal width -1 is out of range"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.validate()
			if got := ""; err != nil {
				got = err.Error()
				if got != tt.want {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			} else if tt.want != "" {
				t.Fatalf("got no error, want %q", tt.want)
			}
		})
	}
}

// FuzzReadFrame feeds arbitrary bytes to the frame reader and to the decoders
// of every control frame: errors, never a panic, and no frame over the limit.
// A frame read whole is written back to the same bytes.
func FuzzReadFrame(f *testing.F) {
	var seed bytes.Buffer
	_ = writeJSON(&seed, frameHello, hello{Protocol: 1, Version: "v1"})
	_ = writeJSON(&seed, frameRequest, request{Op: opRun, Run: &RunRequest{Args: []string{"pods", "-A"}}})
	_ = writeFrame(&seed, frameStdout, []byte("pod/a\n"))
	_ = writeJSON(&seed, frameExit, exitStatus{Code: 2, Stopped: "idle"})
	f.Add(seed.Bytes())
	f.Add([]byte{'o', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{'f', 0, 0, 0, 2, '{', '}'})
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			before := len(in) - r.Len()
			typ, p, err := readFrame(r)
			if err != nil {
				return
			}
			if len(p) > maxFrame || !typ.known() {
				t.Fatalf("accepted a %s frame of %d bytes", typ, len(p))
			}
			var back bytes.Buffer
			if err := writeFrame(&back, typ, p); err != nil {
				t.Fatal(err)
			}
			if after := len(in) - r.Len(); !bytes.Equal(back.Bytes(), in[before:after]) {
				t.Fatalf("frame %s does not write back to its bytes", typ)
			}
			_ = decodeJSON(typ, p, frameHello, &hello{})
			_ = decodeJSON(typ, p, frameWelcome, &welcome{})
			var req request
			if decodeJSON(typ, p, frameRequest, &req) == nil && req.Run != nil {
				_ = req.Run.validate()
			}
			_ = decodeJSON(typ, p, frameExit, &exitStatus{})
			_ = decodeJSON(typ, p, frameStatus, &StatusReport{})
			_, _ = ReadPayload(bytes.NewReader(in[before:]))
		}
	})
}
