package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
)

// stores opens one store of each kind this package supports: s3, gs and
// azblob on servers started on loopback for the test (versitygw,
// fake-gcs-server and Azurite).
func stores(t *testing.T) map[string]*Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*Store{}
	urls := testenv.BucketURLs(t)
	urls["mem"] = "mem://"
	for name, u := range urls {
		s, err := Open(ctx, u, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if _, _, err := s.Get(ctx, "runs/1/unit"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get of nothing: %v", err)
			}
			if err := s.Create(ctx, "runs/1/unit", []byte("a")); err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, "runs/1/unit", []byte("b")); !errors.Is(err, ErrExists) {
				t.Errorf("second Create: %v", err)
			}
			data, v, err := s.Get(ctx, "runs/1/unit")
			if err != nil || string(data) != "a" {
				t.Fatalf("Get = %q, %v", data, err)
			}
			if err := s.Update(ctx, "runs/1/unit", []byte("c"), v); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(ctx, "runs/1/unit", []byte("d"), v); !errors.Is(err, ErrChanged) {
				t.Errorf("Update from an old version: %v", err)
			}
			if err := s.Update(ctx, "runs/1/other", []byte("e"), ""); err != nil {
				t.Errorf("Update of nothing from nothing: %v", err)
			}
			if err := s.Update(ctx, "runs/1/other", []byte("f"), ""); !errors.Is(err, ErrChanged) {
				t.Errorf("Update from nothing of something: %v", err)
			}
			if err := s.Put(ctx, "plans/p", []byte("plan")); err != nil {
				t.Fatal(err)
			}
			keys, err := s.List(ctx, "runs/")
			if err != nil || fmt.Sprint(keys) != "[runs/1/other runs/1/unit]" {
				t.Errorf("List = %v, %v", keys, err)
			}
			if err := s.Delete(ctx, "plans/p"); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "plans/p"); err != nil {
				t.Errorf("Delete of nothing: %v", err)
			}
			if err := s.Update(ctx, "plans/p", []byte("g"), v); !errors.Is(err, ErrChanged) {
				t.Errorf("Update of what was deleted: %v", err)
			}
			for _, bad := range []string{"", "../x", "a//b", "a/./b", "/a", "a b", ".strata-locks/x"} {
				if err := s.Put(ctx, bad, nil); err == nil {
					t.Errorf("key %q accepted", bad)
				}
			}
		})
	}
}

// TestCreateRace: 16 writers create one object, 100 rounds: exactly one
// wins each round.
func TestCreateRace(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for round := 0; round < 100; round++ {
				key := fmt.Sprintf("locks/round-%d", round)
				var wg sync.WaitGroup
				var mu sync.Mutex
				winners, lost := 0, 0
				for w := 0; w < 16; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						err := s.Create(ctx, key, []byte(strconv.Itoa(w)))
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							winners++
						case errors.Is(err, ErrExists):
							lost++
						default:
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				if winners != 1 || lost != 15 {
					t.Fatalf("round %d: %d winners, %d lost", round, winners, lost)
				}
			}
		})
	}
}

// TestUpdateRace: 16 writers each add 10 to a counter by read, then
// compare and swap, retrying on ErrChanged: no update is lost.
func TestUpdateRace(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.Create(ctx, "counter", []byte("0")); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 10; i++ {
						for {
							data, v, err := s.Get(ctx, "counter")
							if err != nil {
								t.Error(err)
								return
							}
							n, _ := strconv.Atoi(string(data))
							err = s.Update(ctx, "counter", []byte(strconv.Itoa(n+1)), v)
							if err == nil {
								break
							}
							if !errors.Is(err, ErrChanged) {
								t.Error(err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			if data, _, err := s.Get(ctx, "counter"); err != nil || string(data) != "160" {
				t.Errorf("counter = %q, %v; want 160", data, err)
			}
		})
	}
}

// TestFileStoreLeavesNoTemp: the file store's creates and swaps leave no
// temp files behind.
func TestFileStoreLeavesNoTemp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Create(ctx, "a/b", []byte("1"))
	s.Create(ctx, "a/b", []byte("2"))
	_, v, _ := s.Get(ctx, "a/b")
	s.Update(ctx, "a/b", []byte("3"), v)
	left, _ := filepath.Glob(filepath.Join(dir, ".strata-tmp", "*"))
	if beside, _ := filepath.Glob(filepath.Join(dir, "a", ".*")); len(left) != 0 || len(beside) != 0 {
		t.Errorf("temp files left: %v %v", left, beside)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a", "b")); string(b) != "3" {
		t.Errorf("a/b = %q", b)
	}
	// The temp folder is made by the first write; removed since, a
	// write makes it again.
	if err := os.RemoveAll(filepath.Join(dir, ".strata-tmp")); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "a/c", []byte("4")); err != nil {
		t.Errorf("a write after the temp folder was removed: %v", err)
	}
}

// TestFileListWhileWriting: a listing of a file:// store while objects
// are created and updated under the listed prefix never fails on a temp
// file that was gone by the time it was read.
func TestFileListWhileWriting(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		for i := range 300 {
			key := fmt.Sprintf("runs/r%03d", i)
			if err := s.Create(ctx, key, []byte("x")); err != nil {
				done <- err
				return
			}
			_, v, _ := s.Get(ctx, key)
			if err := s.Update(ctx, key, []byte("y"), v); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for listing := true; listing; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			listing = false
		default:
		}
		if _, err := s.List(ctx, "runs/"); err != nil {
			t.Fatalf("listing while writing: %v", err)
		}
	}
	keys, err := s.List(ctx, "runs/")
	if err != nil || len(keys) != 300 {
		t.Errorf("listed %d keys, %v", len(keys), err)
	}
}

// TestFileCreateAcrossProcesses: writers in 8 processes create one object
// of a file:// store, 20 rounds: exactly one wins each round, as the
// store's create is decided by the file system, not by one process.
func TestFileCreateAcrossProcesses(t *testing.T) {
	if os.Getenv("OBJSTORE_CHILD") != "" {
		return
	}
	dir := t.TempDir()
	const procs, rounds = 8, 20
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*os.File, procs)
	for i := range cmds {
		f, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = f
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestFileCreateChild$")
		cmds[i].Env = append(os.Environ(), "OBJSTORE_CHILD="+dir, "OBJSTORE_ROUNDS="+strconv.Itoa(rounds), "OBJSTORE_ID="+strconv.Itoa(i))
		cmds[i].Stdout = f
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	wins := make([]int, rounds)
	for _, f := range outs {
		b, _ := os.ReadFile(f.Name())
		for _, line := range strings.Fields(string(b)) {
			if r, ok := strings.CutPrefix(line, "won:"); ok {
				n, _ := strconv.Atoi(r)
				wins[n]++
			}
		}
	}
	for r, w := range wins {
		if w != 1 {
			t.Errorf("round %d: %d winners", r, w)
		}
	}
}

// TestFileCreateChild is one writer process of
// TestFileCreateAcrossProcesses.
func TestFileCreateChild(t *testing.T) {
	dir := os.Getenv("OBJSTORE_CHILD")
	if dir == "" {
		t.Skip("a child of TestFileCreateAcrossProcesses")
	}
	s, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rounds, _ := strconv.Atoi(os.Getenv("OBJSTORE_ROUNDS"))
	for r := 0; r < rounds; r++ {
		err := s.Create(context.Background(), fmt.Sprintf("results/%d", r), []byte(os.Getenv("OBJSTORE_ID")))
		switch {
		case err == nil:
			fmt.Printf("won:%d\n", r)
		case !errors.Is(err, ErrExists):
			t.Fatal(err)
		}
	}
}

// TestGoogleCredentialsMissing: gs:// without credentials is refused when
// opened, with what is expected, and nothing is printed on stdout, where
// strata's JSON output goes.
func TestGoogleCredentialsMissing(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("STORAGE_EMULATOR_HOST_GRPC", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	_, openErr := Open(context.Background(), "gs://strata-state", Options{})
	os.Stdout = stdout
	w.Close()
	printed, _ := io.ReadAll(r)
	if openErr == nil || !strings.Contains(openErr.Error(), "no Google credentials") || !strings.Contains(openErr.Error(), "expected Application Default Credentials") {
		t.Errorf("Open without credentials: %v", openErr)
	}
	if len(printed) > 0 {
		t.Errorf("printed on stdout: %q", printed)
	}
}

// TestStalledS3 stalls the S3 server (SIGSTOP: it accepts connections and
// answers none): the first operation gives up within its budget, every
// later one at once, each with an error naming the object and the bucket;
// a store opened again works once the server does.
func TestStalledS3(t *testing.T) {
	srv := testenv.StartS3(t)
	if srv == nil {
		t.Skip("versitygw is not installed (make tools)")
	}
	ctx := context.Background()
	// The URL's query sets the timeout; Options would win over it.
	s, err := Open(ctx, srv.URL+"&timeout=300ms", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.timeout != 300*time.Millisecond {
		t.Fatalf("timeout %s, want the URL's 300ms", s.timeout)
	}
	if err := s.Put(ctx, "runs/1/manifest.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	ops := map[string]func() error{
		"reading":  func() error { _, _, err := s.Get(ctx, "runs/1/manifest.json"); return err },
		"creating": func() error { return s.Create(ctx, "runs/1/manifest.json", []byte("x")) },
		"updating": func() error { return s.Update(ctx, "runs/1/manifest.json", []byte("x"), "\"etag\"") },
		"writing":  func() error { return s.Put(ctx, "runs/1/manifest.json", []byte("x")) },
		"deleting": func() error { return s.Delete(ctx, "runs/1/manifest.json") },
		"listing":  func() error { _, err := s.List(ctx, "runs/"); return err },
	}
	for op, f := range ops {
		err := f()
		var na *NoAnswerError
		if !errors.As(err, &na) {
			t.Fatalf("%s a stalled bucket: %v, want a NoAnswerError", op, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, op+" runs/") || !strings.Contains(msg, srv.URL) || strings.Contains(msg, "timeout=300ms") {
			t.Errorf("%s: the error does not name the operation, the object and the bucket: %s", op, msg)
		}
	}
	srv.Cont()
	// The store that met the silence asks nothing more; the next command
	// opens the bucket again. A write that timed out may still land once
	// the server goes on, in any order with later ones: a timeout says
	// nothing of whether it did, which is why what decides something is a
	// conditional write.
	if err := s.Put(ctx, "runs/1/after", []byte("y")); err == nil {
		t.Fatal("the store wrote after the bucket had not answered")
	}
	again, err := Open(ctx, srv.URL+"&timeout=300ms", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.Put(ctx, "runs/1/after", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := again.Get(ctx, "runs/1/after"); err != nil || string(data) != "y" {
		t.Fatalf("after the server went on: %q, %v", data, err)
	}
}

// TestKilledS3 kills the S3 server: a refused connection is tried again
// by the SDK's retryer, then fails; started again, the store works.
func TestKilledS3(t *testing.T) {
	srv := testenv.StartS3(t)
	if srv == nil {
		t.Skip("versitygw is not installed (make tools)")
	}
	ctx := context.Background()
	s, err := Open(ctx, srv.URL, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(ctx, "units/a.json", []byte("a")); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	_, _, err = s.Get(ctx, "units/a.json")
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("reading from a killed server: %v", err)
	}
	if !strings.Contains(err.Error(), "attempt") {
		t.Errorf("the error does not say the request was retried: %v", err)
	}
	srv.Start()
	if data, _, err := s.Get(ctx, "units/a.json"); err != nil || string(data) != "a" {
		t.Fatalf("after a restart: %q, %v", data, err)
	}
}

// TestStuckFileStore stands a FIFO where an object should be: opening it
// blocks as a file on a stuck network file system does, and no context
// can cancel that. The store gives up at its deadline all the same.
func TestStuckFileStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), "file://"+dir, Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.MkdirAll(filepath.Join(dir, "units"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "units", "a.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Get(context.Background(), "units/a.json")
	var na *NoAnswerError
	if !errors.As(err, &na) || na.Key != "units/a.json" || !strings.Contains(err.Error(), "file://"+dir) {
		t.Fatalf("reading a stuck file: %v", err)
	}
	// Unblock the reader left behind.
	if f, err := os.OpenFile(filepath.Join(dir, "units", "a.json"), os.O_WRONLY, 0); err == nil {
		f.Close()
	}
}

func TestStateTimeoutQuery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		url  string
		opt  Options
		want time.Duration
		err  string
	}{
		{url: "mem://", want: DefaultTimeout},
		{url: "mem://?timeout=2s", want: 2 * time.Second},
		{url: "mem://?timeout=2s", opt: Options{Timeout: 5 * time.Second}, want: 5 * time.Second},
		{url: "mem://?timeout=soon", err: `timeout="soon": expected a positive duration`},
		{url: "mem://?timeout=-1s", err: `expected a positive duration`},
		{url: "mem://", opt: Options{Timeout: -time.Second}, err: "negative"},
		{url: dir, want: DefaultTimeout},
		{url: dir, opt: Options{Timeout: 5 * time.Second}, want: 5 * time.Second},
		{url: dir, opt: Options{Timeout: -time.Second}, err: "negative"},
	} {
		s, err := Open(context.Background(), tc.url, tc.opt)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %+v: %v, want %q", tc.url, tc.opt, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.timeout != tc.want {
			t.Errorf("%s %+v: timeout %s, want %s", tc.url, tc.opt, s.timeout, tc.want)
		}
		s.Close()
	}
}

// TestS3SDKSaysNothing: with no credentials but an EC2 metadata service
// that refuses a token, the AWS SDK would warn "falling back to IMDSv1"
// on stderr; strata's store says what failed as an error, and the SDK
// prints nothing.
func TestS3SDKSaysNothing(t *testing.T) {
	asked := make(chan string, 8)
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- r.Method + " " + r.URL.Path:
		default:
		}
		w.WriteHeader(http.StatusForbidden)
	}))
	defer imds.Close()
	home := t.TempDir()
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL, "HOME": home, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"), "AWS_WEB_IDENTITY_TOKEN_FILE": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_EC2_METADATA_DISABLED": "",
	} {
		t.Setenv(k, v)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	st, openErr := Open(context.Background(), "s3://bucket?region=us-east-1&endpoint="+imds.URL+"&use_path_style=true", Options{Timeout: 5 * time.Second})
	var putErr error
	if openErr == nil {
		putErr = st.Put(context.Background(), "k", []byte("v"))
		st.Close()
	}
	os.Stderr = stderr
	w.Close()
	printed, _ := io.ReadAll(r)
	if openErr != nil || putErr == nil || !strings.Contains(putErr.Error(), "credentials") {
		t.Errorf("open %v, put %v; want the put to fail for want of credentials", openErr, putErr)
	}
	if len(asked) == 0 {
		t.Error("the metadata service was never asked: the test did not reach the SDK's fallback")
	}
	if len(printed) > 0 {
		t.Errorf("the SDK printed on stderr: %q", printed)
	}
}

// TestSilentBucketAskedOnce: an S3 endpoint that accepts every request
// and answers none. The first operation gives up within its budget; every
// later one fails at once, naming the operation the bucket did not
// answer, and sends the server nothing more: a command that meets a
// stalled bucket waits for one operation's budget, not one per request it
// would make in turn.
func TestSilentBucketAskedOnce(t *testing.T) {
	t.Parallel()
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx := context.Background()
	s, err := Open(ctx, "s3://strata-state?endpoint="+srv.URL+"&use_path_style=true&disable_https=true&region=us-east-1&anonymous=true", Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = s.Get(ctx, "runs/1/manifest.json")
	var first *NoAnswerError
	if !errors.As(err, &first) || first.Earlier != nil {
		t.Fatalf("reading a silent bucket: %v, want a NoAnswerError", err)
	}
	if n := asked.Load(); n != Attempts {
		t.Errorf("the first operation sent %d requests, want %d attempts", n, Attempts)
	}
	later := map[string]func() error{
		"writing":  func() error { return s.Put(ctx, "runs/1/jobs/0.json", []byte("{}")) },
		"creating": func() error { return s.Create(ctx, "runs/1/claims/0", []byte("x")) },
		"updating": func() error { return s.Update(ctx, "runs/1/manifest.json", []byte("x"), "\"etag\"") },
		"deleting": func() error { return s.Delete(ctx, "runs/1/claims/0") },
		"listing":  func() error { _, err := s.List(ctx, "runs/"); return err },
	}
	for op, f := range later {
		err := f()
		var na *NoAnswerError
		if !errors.As(err, &na) || na.Earlier != first || na.Op != op {
			t.Fatalf("%s after the bucket did not answer: %v, want a NoAnswerError naming the earlier one", op, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "not asked, since the bucket did not answer reading runs/1/manifest.json") || !strings.Contains(msg, op+" runs/") {
			t.Errorf("%s: %s", op, msg)
		}
	}
	if n := asked.Load(); n != Attempts {
		t.Errorf("the server got %d requests in all, want only the first operation's %d", n, Attempts)
	}
}
