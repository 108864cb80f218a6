package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/logging"
	"github.com/googleapis/gax-go/v2"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcp"
)

// Options bound what a Store waits for (docs/ci.md#a-bucket-that-does-not-answer).
type Options struct {
	// Timeout bounds one request to the bucket, one attempt of it: the
	// SDK's retryer tries again, Attempts times in all, with backoff. 0:
	// the URL's `timeout` query, else DefaultTimeout.
	Timeout time.Duration
}

const (
	// DefaultTimeout is how long one request may go unanswered: long
	// enough for a saved plan of some MiB, short enough that a job whose
	// bucket does not answer ends within a minute.
	DefaultTimeout = 15 * time.Second
	// Attempts is how often a request is tried before it fails.
	Attempts = 3
	// maxBackoff bounds the wait between two attempts.
	maxBackoff = 2 * time.Second
	// timeoutParam is the query of a state URL that sets Timeout; it is
	// taken off the URL before the driver reads it.
	timeoutParam = "timeout"
)

// IdleConns is how many connections to its bucket a store keeps open
// between requests: as many as a job has requests in flight.
const IdleConns = 16

// budget is the longest one operation of a store may take: every attempt
// timed out, and the backoffs between them.
func (s *Store) budget() time.Duration {
	return Attempts*s.timeout + (Attempts-1)*maxBackoff
}

// takeTimeout reads and removes the timeout query of a state URL; the
// timeout of opt wins over it.
func takeTimeout(u *url.URL, opt Options) (time.Duration, error) {
	// The other parameters stay as written, in their order: the URL is
	// shown in messages as the user wrote it.
	raw := u.Query().Get(timeoutParam)
	var kept []string
	for _, p := range strings.Split(u.RawQuery, "&") {
		if k, _, _ := strings.Cut(p, "="); k != timeoutParam && p != "" {
			kept = append(kept, p)
		}
	}
	u.RawQuery = strings.Join(kept, "&")
	if opt.Timeout < 0 {
		return 0, fmt.Errorf("the bucket timeout %s is negative; expected a duration such as 30s", opt.Timeout)
	}
	if opt.Timeout > 0 {
		return opt.Timeout, nil
	}
	if raw == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: expected a positive duration such as 30s", timeoutParam, raw)
	}
	return d, nil
}

// openS3 opens an s3:// bucket as gocloud's URL opener does, with the
// client's requests bounded: an HTTP timeout on each, and the SDK's
// standard retryer limited to Attempts. gocloud's opener builds its client
// itself and takes no options for it, so the query parameters it reads
// besides the AWS config's are read here.
func openS3(ctx context.Context, u *url.URL, timeout time.Duration) (*blob.Bucket, error) {
	q := u.Query()
	bopts := &s3blob.Options{}
	var copts []func(*s3.Options)
	boolParam := func(key string) (value, ok bool, err error) {
		raw := q.Get(key)
		q.Del(key)
		if raw == "" {
			return false, false, nil
		}
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return false, false, fmt.Errorf("%s=%q: expected true or false", key, raw)
		}
		return v, true, nil
	}
	if v := q.Get("ssetype"); v != "" {
		q.Del("ssetype")
		t := types.ServerSideEncryption(v)
		if !slices.Contains(t.Values(), t) {
			return nil, fmt.Errorf("ssetype=%q: expected one of %v", v, t.Values())
		}
		bopts.EncryptionType = t
	}
	if v := q.Get("kmskeyid"); v != "" {
		q.Del("kmskeyid")
		bopts.KMSEncryptionID = v
	}
	accelerate, _, err := boolParam("accelerate")
	if err != nil {
		return nil, err
	}
	copts = append(copts, func(o *s3.Options) { o.UseAccelerate = accelerate })
	if v, ok, err := boolParam("disable_https"); err != nil {
		return nil, err
	} else if ok {
		copts = append(copts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = v })
	}
	for _, key := range []string{"use_path_style", "s3ForcePathStyle"} {
		if v, ok, err := boolParam(key); err != nil {
			return nil, err
		} else if ok {
			copts = append(copts, func(o *s3.Options) { o.UsePathStyle = v })
		}
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := quietCredentials(ctx, &cfg, q); err != nil {
		return nil, err
	}
	base := cfg.Retryer
	cfg.Retryer = func() aws.Retryer {
		var r aws.Retryer
		if base != nil {
			r = base()
		} else {
			r = retry.NewStandard()
		}
		return retry.AddWithMaxBackoffDelay(retry.AddWithMaxAttempts(r, Attempts), maxBackoff)
	}
	// A job asks up to 16 requests at once (runstate.Fetchers); the SDK
	// keeps 10 connections idle a host, so each burst would close six
	// and dial them again for the next.
	cfg.HTTPClient = awshttp.NewBuildableClient().WithTimeout(timeout).WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, IdleConns)
	})
	client := s3.NewFromConfig(cfg, copts...)
	bopts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	return s3blob.OpenBucket(ctx, client, u.Host, bopts)
}

// openGCS opens a gs:// bucket through gocloud's URL opener with an HTTP
// client whose requests time out, and the storage client's retryer
// limited to Attempts.
func openGCS(ctx context.Context, u *url.URL, timeout time.Duration) (*blob.Bucket, error) {
	// With an emulator (STORAGE_EMULATOR_HOST) the driver talks to it
	// with a client of its own and no credentials.
	opener := &gcsblob.URLOpener{Client: &gcp.HTTPClient{}}
	if !emulatedGCS() {
		creds, err := gcp.DefaultCredentials(ctx)
		if err != nil {
			return nil, err
		}
		client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), gcp.CredentialsTokenSource(creds))
		if err != nil {
			return nil, err
		}
		client.Timeout = timeout
		opener.Client = client
	}
	b, err := opener.OpenBucketURL(ctx, u)
	if err != nil {
		return nil, err
	}
	var sc *storage.Client
	if b.As(&sc) {
		sc.SetRetry(storage.WithMaxAttempts(Attempts),
			storage.WithBackoff(gax.Backoff{Initial: 200 * time.Millisecond, Max: maxBackoff, Multiplier: 2}))
	}
	return b, nil
}

// openAzure opens an azblob:// container through gocloud's URL opener,
// with a client made as gocloud's default one is (the credentials the
// environment names) but whose tries time out and whose retries are
// limited to Attempts: gocloud's default client takes no options.
func openAzure(ctx context.Context, u *url.URL, timeout time.Duration) (*blob.Bucket, error) {
	copts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{
		MaxRetries: Attempts - 1, TryTimeout: timeout,
		RetryDelay: 200 * time.Millisecond, MaxRetryDelay: maxBackoff,
	}}}
	opener := &azureblob.URLOpener{
		ServiceURLOptions: *azureblob.NewDefaultServiceURLOptions(),
		MakeClient: func(svc azureblob.ServiceURL, name azureblob.ContainerName) (*container.Client, error) {
			containerURL, err := url.JoinPath(string(svc), string(name))
			if err != nil {
				return nil, err
			}
			account, key := os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY")
			conn := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
			if conn == "" {
				conn = os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING")
			}
			switch {
			case account != "" && key != "":
				cred, err := azblob.NewSharedKeyCredential(account, key)
				if err != nil {
					return nil, err
				}
				return container.NewClientWithSharedKeyCredential(containerURL, cred, copts)
			case os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
				// The service URL carries the token.
				return container.NewClientWithNoCredential(containerURL, copts)
			case conn != "":
				return container.NewClientFromConnectionString(conn, string(name), copts)
			}
			cred, err := azidentity.NewDefaultAzureCredential(nil)
			if err != nil {
				return nil, fmt.Errorf("no Azure credentials: %w", err)
			}
			return container.NewClient(containerURL, cred, copts)
		},
	}
	return opener.OpenBucketURL(ctx, u)
}

// NoAnswerError is an operation the bucket did not answer within the
// store's budget, or one not asked at all because the bucket had not
// answered an earlier one (Earlier).
type NoAnswerError struct {
	URL, Op, Key string
	Timeout      time.Duration
	// Earlier is the operation the bucket did not answer, when this one
	// was not asked.
	Earlier *NoAnswerError
}

func (e *NoAnswerError) Error() string {
	if e.Earlier != nil {
		return fmt.Sprintf("state bucket %s: %s %s: not asked, since the bucket did not answer %s %s in %d attempts of %s each",
			e.URL, e.Op, e.Key, e.Earlier.Op, e.Earlier.Key, Attempts, e.Earlier.Timeout)
	}
	return fmt.Sprintf("state bucket %s: %s %s: no answer in %d attempts of %s each (--state-timeout or the URL's ?timeout= sets the time of one)",
		e.URL, e.Op, e.Key, Attempts, e.Timeout)
}

// bounded runs one operation of a store within the store's budget. A file
// system call cannot be cancelled (a stuck network file system never
// returns): it runs on its own goroutine, and the store gives up on it at
// the deadline. An operation that ran out of time is a NoAnswerError
// naming the object and the bucket; after one, the store fails every
// later operation at once (Store.silent).
func bounded[T any](ctx context.Context, s *Store, op, key string, f func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if f := s.observe.Load(); f != nil {
		(*f)(op, key)
	}
	if earlier := s.silent.Load(); earlier != nil {
		return zero, &NoAnswerError{URL: s.url, Op: op, Key: key, Timeout: s.timeout, Earlier: earlier}
	}
	octx, cancel := context.WithTimeout(ctx, s.budget())
	defer cancel()
	var (
		out T
		err error
	)
	if s.dir != "" {
		type result struct {
			v   T
			err error
		}
		done := make(chan result, 1)
		go func() {
			v, err := f(octx)
			done <- result{v, err}
		}()
		select {
		case r := <-done:
			out, err = r.v, r.err
		case <-octx.Done():
			err = octx.Err()
		}
	} else {
		out, err = f(octx)
	}
	if err != nil && ctx.Err() == nil && (octx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
		na := &NoAnswerError{URL: s.url, Op: op, Key: key, Timeout: s.timeout}
		s.silent.CompareAndSwap(nil, na)
		return zero, na
	}
	return out, err
}

// do is bounded for an operation that returns only an error.
func (s *Store) do(ctx context.Context, op, key string, f func(ctx context.Context) error) error {
	_, err := bounded(ctx, s, op, key, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// quietCredentials keeps the SDK's own log lines from the user: its
// default logger writes warnings to stderr (an EC2 metadata service that
// refuses a token: "falling back to IMDSv1"), while strata reports what
// fails as errors. The default credential chain, which the config built
// with that logger, is built again with none, from the same profile and
// region; anonymous access and an assumed role keep their own.
func quietCredentials(ctx context.Context, cfg *aws.Config, q url.Values) error {
	cfg.Logger = logging.Nop{}
	if q.Has("anonymous") || q.Has("role") {
		return nil
	}
	opts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{}), config.WithRegion(cfg.Region)}
	if p := q.Get("profile"); p != "" {
		opts = append(opts, config.WithSharedConfigProfile(p))
	}
	quiet, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return err
	}
	cfg.Credentials = quiet.Credentials
	return nil
}
