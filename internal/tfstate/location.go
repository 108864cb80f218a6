package tfstate

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
)

// localLocation is the local backend's state file:
// terraform.tfstate, or terraform.tfstate.d/WORKSPACE/terraform.tfstate,
// or what the backend's path and workspace_dir say.
func localLocation(b backend, dir, workspace string) (Location, error) {
	if err := onlyArgs(b, "path", "workspace_dir"); err != nil {
		return Location{}, err
	}
	args, err := b.strs("path", "workspace_dir")
	if err != nil {
		return Location{}, err
	}
	l := Location{args: args}
	p := cmp.Or(l.args["path"], "terraform.tfstate")
	if workspace != "default" {
		p = filepath.Join(cmp.Or(l.args["workspace_dir"], "terraform.tfstate.d"), workspace, filepath.Base(p))
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	l.Path = p
	return l, nil
}

// s3Ignored are the s3 backend's arguments that change neither which
// object holds the state nor how it is read.
var s3Ignored = []string{
	"encrypt", "kms_key_id", "acl", "dynamodb_table", "dynamodb_endpoint", "use_lockfile",
	"skip_credentials_validation", "skip_requesting_account_id", "skip_metadata_api_check",
	"skip_region_validation", "skip_s3_checksum", "max_retries", "retry_mode",
	"allowed_account_ids", "forbidden_account_ids", "sts_endpoint", "sts_region", "iam_endpoint",
	"ec2_metadata_service_endpoint", "ec2_metadata_service_endpoint_mode",
}

// s3Location is the s3 backend's object: key in the default workspace,
// else workspace_key_prefix/WORKSPACE/key ("env:" by default), read with
// the region, endpoint, path style and profile the backend would use.
// Credentials given as arguments, roles to assume and customer keys are
// not followed.
func s3Location(b backend, workspace string, env map[string]string) (Location, error) {
	decides := []string{"bucket", "key", "region", "endpoint", "use_path_style", "force_path_style", "workspace_key_prefix", "profile", "use_fips_endpoint", "use_dualstack_endpoint"}
	if err := onlyArgs(b, append(append(decides, "endpoints"), s3Ignored...)...); err != nil {
		return Location{}, err
	}
	args, err := b.strs(decides...)
	if err != nil {
		return Location{}, err
	}
	l := Location{args: args}
	s3, err := b.attr("endpoints", "s3")
	if err != nil {
		return Location{}, err
	}
	l.args["endpoints.s3"] = s3
	a := l.args
	bucket, key := a["bucket"], a["key"]
	if bucket == "" || strings.ContainsAny(bucket, "/?#") || key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return Location{}, fmt.Errorf("%w: the s3 backend's bucket %q and key %q", ErrUnsupported, bucket, key)
	}
	q := url.Values{}
	region := cmp.Or(a["region"], getenv(env, "AWS_REGION"), getenv(env, "AWS_DEFAULT_REGION"))
	if region == "" {
		return Location{}, fmt.Errorf("%w: the s3 backend has no region", ErrUnsupported)
	}
	q.Set("region", region)
	if e := cmp.Or(s3, a["endpoint"], getenv(env, "AWS_ENDPOINT_URL_S3"), getenv(env, "AWS_S3_ENDPOINT")); e != "" {
		q.Set("endpoint", e)
	}
	if cmp.Or(a["use_path_style"], a["force_path_style"], getenv(env, "AWS_S3_USE_PATH_STYLE")) == "true" {
		q.Set("use_path_style", "true")
	}
	for arg, param := range map[string]string{"use_fips_endpoint": "fips", "use_dualstack_endpoint": "dualstack"} {
		if a[arg] == "true" {
			q.Set(param, "true")
		}
	}
	if a["profile"] != "" {
		q.Set("profile", a["profile"])
	}
	l.Bucket = "s3://" + bucket + "?" + q.Encode()
	l.Key = key
	if workspace != "default" {
		prefix := a["workspace_key_prefix"]
		if _, set := b.Args["workspace_key_prefix"]; !set {
			prefix = "env:"
		}
		l.Key = prefix + "/" + workspace + "/" + key
	}
	return l, nil
}

// gcsLocation is the gcs backend's object, PREFIX/WORKSPACE.tfstate, read
// with the default credentials; credentials, tokens, impersonation,
// customer keys and a custom endpoint are not followed.
func gcsLocation(b backend, workspace string, env map[string]string) (Location, error) {
	if err := onlyArgs(b, "bucket", "prefix", "kms_encryption_key"); err != nil {
		return Location{}, err
	}
	for _, k := range []string{"GOOGLE_BACKEND_CREDENTIALS", "GOOGLE_CREDENTIALS", "GOOGLE_ENCRYPTION_KEY"} {
		if getenv(env, k) != "" {
			return Location{}, fmt.Errorf("%w: %s is set", ErrUnsupported, k)
		}
	}
	args, err := b.strs("bucket", "prefix")
	if err != nil {
		return Location{}, err
	}
	l := Location{args: args}
	if l.args["bucket"] == "" || strings.ContainsAny(l.args["bucket"], "/?#") {
		return Location{}, fmt.Errorf("%w: the gcs backend's bucket %q", ErrUnsupported, l.args["bucket"])
	}
	l.Bucket = "gs://" + l.args["bucket"]
	l.Key = path.Join(l.args["prefix"], workspace+".tfstate")
	return l, nil
}

// onlyArgs refuses a backend with an argument outside known.
func onlyArgs(b backend, known ...string) error {
	for name := range b.Args {
		found := false
		for _, k := range known {
			found = found || k == name
		}
		if !found {
			return fmt.Errorf("%w: the %s backend's %s is not followed", ErrUnsupported, b.Type, name)
		}
	}
	return nil
}

// getenv reads the engine's environment, else strata's own.
func getenv(env map[string]string, k string) string {
	if env != nil {
		return env[k]
	}
	return os.Getenv(k)
}

// probeTimeout bounds one request for a state: a bucket that does not
// answer leaves the read to the engine.
const probeTimeout = 10 * time.Second

// Stores keeps the buckets states are read from open, one per URL, for
// as long as a run lasts. The zero value is ready.
type Stores struct {
	mu     sync.Mutex
	byURL  map[string]*objstore.Store
	failed map[string]error
}

func (s *Stores) open(ctx context.Context, u string) (*objstore.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.byURL[u]; ok {
		return st, nil
	}
	if err, ok := s.failed[u]; ok {
		return nil, err
	}
	st, err := objstore.Open(ctx, u, objstore.Options{Timeout: probeTimeout})
	if err != nil {
		if s.failed == nil {
			s.failed = map[string]error{}
		}
		s.failed[u] = err
		return nil, err
	}
	if s.byURL == nil {
		s.byURL = map[string]*objstore.Store{}
	}
	s.byURL[u] = st
	return st, nil
}
