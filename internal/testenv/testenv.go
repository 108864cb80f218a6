// Package testenv gives strata's tests their repositories and a hermetic
// engine environment: their own temp dirs, cache dir and CLI config file,
// nothing read from the machine's own configuration.
package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// WriteRepo writes files (path relative to the repo -> content) into a new
// temp dir and returns it.
func WriteRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		WriteFile(t, filepath.Join(root, name), content)
	}
	return root
}

// WriteFile writes a file, creating its directory.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// NeedTerraform skips a test in -short mode or when no terraform is on
// PATH.
func NeedTerraform(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs terraform")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH")
	}
}

// Env is a hermetic environment for strata and its engines: PATH, a temp
// HOME, an empty CLI config file, a temp strata cache, no update checks;
// extra entries are appended.
func Env(t testing.TB, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	rc := filepath.Join(home, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TF_CLI_CONFIG_FILE=" + rc,
		"STRATA_CACHE_DIR=" + filepath.Join(home, "cache"),
		"CHECKPOINT_DISABLE=1",
	}
	return append(env, extra...)
}

// tool finds a server the tests start on PATH; "" when it is not there,
// unless STRATA_TEST_TOOLS=1 (make test installs it, and then it must be).
func tool(t *testing.T, name, what string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("STRATA_TEST_TOOLS") == "1" {
			t.Fatalf("%s is not on PATH; make test installs it into bin/tools", name)
		}
		t.Logf("%s is not on PATH: no %s test (make test installs it)", name, what)
		return ""
	}
	return path
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// serve starts a server and waits until it answers an HTTP request on
// addr and holds the port itself (bounded, on loopback only); the test's
// cleanup stops it.
func serve(t *testing.T, cmd *exec.Cmd, addr string) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
			// The answer must be this server's: another process may
			// have taken the port freeAddr found free.
			if listensOn(cmd.Process.Pid, port) {
				return
			}
			err = fmt.Errorf("%s answers, and it is not the server this test started", addr)
		}
		// 30 s: a node server (azurite) takes more than 10 s to start on
		// a loaded two-core machine.
		if i == 600 {
			t.Fatalf("%s did not start in 30 s: %v", filepath.Base(cmd.Path), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// S3Server starts versitygw (an S3 server on a POSIX directory) on a
// loopback port, makes a bucket, and returns its state URL; "" when
// versitygw is not on PATH (make test installs it, and then it must be).
func S3Server(t *testing.T) string {
	t.Helper()
	s := StartS3(t)
	if s == nil {
		return ""
	}
	return s.URL
}

// S3 is a versitygw server a test can stall, kill and start again on the
// same port and directory, to inject the faults of a bucket.
type S3 struct {
	// URL is the state URL of its bucket.
	URL string

	t        *testing.T
	gw, addr string
	dir      string
	cmd      *exec.Cmd
}

// StartS3 is S3Server with a handle on the server; nil when versitygw is
// not on PATH.
func StartS3(t *testing.T) *S3 {
	t.Helper()
	gw := tool(t, "versitygw", "S3")
	if gw == "" {
		return nil
	}
	s := &S3{t: t, gw: gw, addr: freeAddr(t), dir: t.TempDir()}
	s.Start()
	t.Setenv("AWS_ACCESS_KEY_ID", "strata-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "strata-test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	s.URL = "s3://strata-state?endpoint=http://" + s.addr + "&use_path_style=true&disable_https=true&region=us-east-1"
	makeBucket(t, s.URL, func(ctx context.Context, client *s3.Client) error {
		_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("strata-state")})
		return err
	})
	return s
}

// Start starts the server (again, after Kill) on its port and directory.
func (s *S3) Start() {
	s.t.Helper()
	s.cmd = exec.Command(s.gw, "--port", s.addr, "posix", s.dir)
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY=strata-test", "ROOT_SECRET_KEY=strata-test-secret")
	serve(s.t, s.cmd, s.addr)
}

// Stop stalls the server (SIGSTOP): it accepts connections, as the
// kernel does for it, and answers none, as a black-holed load balancer.
func (s *S3) Stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.t.Fatal(err)
	}
	if err := waitStopped(s.cmd.Process.Pid, 10*time.Second); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { s.cmd.Process.Signal(syscall.SIGCONT) })
}

// Cont lets a stalled server go on.
func (s *S3) Cont() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.t.Fatal(err)
	}
}

// Kill kills the server: connections are refused until Start.
func (s *S3) Kill() {
	s.t.Helper()
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// GCSServer starts fake-gcs-server (a Google Cloud Storage server in
// memory) on a loopback port, makes a bucket, and returns its state URL;
// "" when fake-gcs-server is not on PATH (make test installs it, and then
// it must be). The gs:// driver goes to the server named by
// STORAGE_EMULATOR_HOST, without credentials.
func GCSServer(t *testing.T) string {
	t.Helper()
	srv := tool(t, "fake-gcs-server", "GCS")
	if srv == "" {
		return ""
	}
	addr := freeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(srv, "-scheme", "http", "-host", host, "-port", port, "-backend", "memory",
		"-public-host", addr, "-external-url", "http://"+addr, "-log-level", "error")
	serve(t, cmd, addr)
	t.Setenv("STORAGE_EMULATOR_HOST", addr)
	u := "gs://strata-state"
	makeBucket(t, u, func(ctx context.Context, client *storage.Client) error {
		return client.Bucket("strata-state").Create(ctx, "strata-test", nil)
	})
	return u
}

// Azurite's well-known development account.
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// AzureServer starts Azurite's blob service (in memory) on a loopback
// port, makes a container, and returns its state URL; "" when azurite-blob
// is not on PATH (make test installs it, and then it must be).
func AzureServer(t *testing.T) string {
	t.Helper()
	srv := tool(t, "azurite-blob", "Azure")
	if srv == "" {
		return ""
	}
	addr := freeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	// --location and --inMemoryPersistence exclude each other: the temp
	// dir is only its working directory.
	cmd := exec.Command(srv, "--blobHost", host, "--blobPort", port,
		"--inMemoryPersistence", "--skipApiVersionCheck", "--disableTelemetry", "--silent")
	cmd.Dir = dir
	serve(t, cmd, addr)
	t.Setenv("AZURE_STORAGE_ACCOUNT", azuriteAccount)
	t.Setenv("AZURE_STORAGE_KEY", azuriteKey)
	u := "azblob://strata-state?protocol=http&domain=" + addr
	makeBucket(t, u, func(ctx context.Context, client *container.Client) error {
		_, err := client.Create(ctx, nil)
		return err
	})
	return u
}

// makeBucket creates the bucket of a state URL on the server it names,
// with the driver's own client (of type C): gocloud opens buckets but does
// not create them.
func makeBucket[C any](t *testing.T, u string, create func(context.Context, C) error) {
	t.Helper()
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var client C
	if !b.As(&client) {
		t.Fatalf("%s: the driver has no %T", u, client)
	}
	if err := create(ctx, client); err != nil {
		t.Fatalf("creating the bucket of %s: %v", u, err)
	}
}

// BucketURLs are the buckets a test of shared state runs on: a file://
// dir, and S3, GCS and Azure servers on loopback when versitygw,
// fake-gcs-server and Azurite are there (make test installs them, and
// then they must be), by kind.
func BucketURLs(t *testing.T) map[string]string {
	t.Helper()
	urls := map[string]string{"file": "file://" + t.TempDir()}
	for kind, start := range map[string]func(*testing.T) string{"s3": S3Server, "gs": GCSServer, "azblob": AzureServer} {
		if u := start(t); u != "" {
			urls[kind] = u
		}
	}
	return urls
}

// CopyTree copies a fixture into a new temp dir, without what a run
// leaves behind (.terraform, .strata, state files, lock files).
func CopyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			if info.Name() == ".terraform" || info.Name() == ".strata" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasSuffix(p, ".tfstate") || strings.HasSuffix(p, ".tfstate.backup") || info.Name() == ".terraform.lock.hcl" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// StateInput is the input of the one terraform_data resource that the
// local state of a root module dir holds.
func StateInput(t testing.TB, dir string) string {
	t.Helper()
	in := StateInputs(t, dir)
	if len(in) != 1 {
		t.Fatalf("%s's state holds %d resources: %v", dir, len(in), in)
	}
	for _, v := range in {
		return v
	}
	return ""
}

// StateInputs are the inputs of the terraform_data resources the local
// state of a root module dir holds, by resource name.
func StateInputs(t testing.TB, dir string) map[string]string {
	t.Helper()
	return StateFileInputs(t, filepath.Join(dir, "terraform.tfstate"))
}

// StateFileInputs are the inputs of the terraform_data resources a local
// state file holds, by resource name: a workspace's is under
// terraform.tfstate.d/<workspace>/.
func StateFileInputs(t testing.TB, path string) map[string]string {
	t.Helper()
	dir := path
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Name      string `json:"name"`
			Instances []struct {
				Attributes struct {
					Input struct {
						Value string `json:"value"`
					} `json:"input"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatalf("%s's state: %v\n%s", dir, err, b)
	}
	out := map[string]string{}
	for _, r := range state.Resources {
		for _, in := range r.Instances {
			out[r.Name] = in.Attributes.Input.Value
		}
	}
	return out
}

// AppWebConfig is a config of two stacks, app and web, each of one dir,
// web planned after app.
const AppWebConfig = `dirs:
  app: {tags: [app]}
  web: {tags: [web]}
stacks:
  names:
    app: {tag_query: app}
    web:
      tag_query: web
      rules: {plan_after: [app]}
`

// AppTF is a module of one terraform_data resource, app, with input, and
// the resources in more.
func AppTF(input, more string) string {
	return "resource \"terraform_data\" \"app\" {\n  input = \"" + input + "\"\n}\n" + more
}

// ConsumerTF is a module that takes variable v, a string, as the input of
// its terraform_data resource res, and gives it back as output out unless
// out is "".
func ConsumerTF(v, res, out string) string {
	tf := "variable \"" + v + "\" {\n  type = string\n}\nresource \"terraform_data\" \"" + res + "\" {\n  input = var." + v + "\n}\n"
	if out != "" {
		tf += "output \"" + out + "\" {\n  value = var." + v + "\n}\n"
	}
	return tf
}

// Git runs git in dir with a fixed identity, no signing, main as the
// first branch and none of the user's git config, and fails the test on
// an error; it returns git's output, trimmed. A test without git on PATH
// is skipped.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=strata", "GIT_AUTHOR_EMAIL=strata@example.com",
		"GIT_COMMITTER_NAME=strata", "GIT_COMMITTER_EMAIL=strata@example.com",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
