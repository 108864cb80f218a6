// Package tfstate reads where a root module's state stands without the
// engine: the serial and lineage of its state, for the backends whose
// state strata can read directly (docs/behaviour.md#outputs-without-init).
package tfstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Version is where a state stands: terraform bumps Serial on every write
// of one state, whose Lineage never changes.
type Version struct {
	Serial  int64  `json:"serial"`
	Lineage string `json:"lineage"`
}

// ErrUnsupported is a module whose state strata cannot read without the
// engine: a backend it does not read, a backend argument it cannot
// follow, JSON configuration, or an encrypted state.
var ErrUnsupported = errors.New("the state cannot be read without the engine")

// maxStateSize bounds how much of a state is read.
const maxStateSize = 1 << 30

// Location is where a module's state is kept, worked out as init would:
// a file of the local backend, or an object in a bucket.
type Location struct {
	Backend string // local, s3 or gcs
	Path    string // local: the state file
	Bucket  string // s3, gcs: the bucket's URL
	Key     string // s3, gcs: the state's object

	block bool
	// args are the backend arguments that decide the location, as read
	// ("" for unset): Confirm compares them with those the engine used.
	args map[string]string
}

func (l Location) String() string {
	if l.Path != "" {
		return l.Path
	}
	return l.Key + " in " + l.Bucket
}

// Locate works out where init would put the state of the root module in
// dir, in workspace: its backend block with backendConfig (init's
// -backend-config values) merged over it, and env, the environment the
// engine runs in.
func Locate(dir, workspace string, backendConfig []string, env map[string]string) (Location, error) {
	if err := envFollowed(env); err != nil {
		return Location{}, err
	}
	b, err := backendOf(dir, backendConfig)
	if err != nil {
		return Location{}, err
	}
	if workspace == "" {
		workspace = "default"
	}
	var l Location
	switch b.Type {
	case "local":
		l, err = localLocation(b, dir, workspace)
	case "s3":
		l, err = s3Location(b, workspace, env)
	case "gcs":
		l, err = gcsLocation(b, workspace, env)
	default:
		return Location{}, fmt.Errorf("%w: backend %q", ErrUnsupported, b.Type)
	}
	l.Backend, l.block = b.Type, b.Block
	return l, err
}

// Read reads the version of the state at l; buckets come from stores.
func (l Location) Read(ctx context.Context, stores *Stores) (Version, error) {
	if l.Path != "" {
		f, err := os.Open(l.Path)
		if err != nil {
			return Version{}, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		defer f.Close()
		return readVersion(f, l.Path)
	}
	s, err := stores.open(ctx, l.Bucket)
	if err != nil {
		return Version{}, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	var v Version
	err = s.Peek(ctx, l.Key, func(r io.Reader) error {
		v, err = readVersion(r, l.String())
		return err
	})
	if err != nil && !errors.Is(err, ErrUnsupported) {
		err = fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return v, err
}

// Probe reads the version of the state of the root module in dir, in
// workspace, as Locate finds it.
func Probe(ctx context.Context, stores *Stores, dir, workspace string, backendConfig []string, env map[string]string) (Location, Version, error) {
	l, err := Locate(dir, workspace, backendConfig, env)
	if err != nil {
		return l, Version{}, err
	}
	v, err := l.Read(ctx, stores)
	return l, v, err
}

// readVersion reads a state's serial and lineage, which terraform writes
// before its outputs and resources: the rest is not read.
func readVersion(r io.Reader, name string) (Version, error) {
	dec := json.NewDecoder(io.LimitReader(r, maxStateSize))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Version{}, fmt.Errorf("%w: %s is not a JSON object", ErrUnsupported, name)
	}
	var (
		v            Version
		serial, line bool
	)
	for dec.More() && !(serial && line) {
		tok, err := dec.Token()
		if err != nil {
			return Version{}, fmt.Errorf("%w: %s: %v", ErrUnsupported, name, err)
		}
		switch tok {
		case "serial":
			err, serial = dec.Decode(&v.Serial), true
		case "lineage":
			err, line = dec.Decode(&v.Lineage), true
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return Version{}, fmt.Errorf("%w: %s: %v", ErrUnsupported, name, err)
		}
	}
	if !serial || v.Lineage == "" {
		return Version{}, fmt.Errorf("%w: %s holds no plain state", ErrUnsupported, name)
	}
	return v, nil
}

// Confirm checks l against the backend the engine configured in dataDir
// at its last init: the same type and the same arguments deciding where
// the state is. A version read at a location the engine did not use is
// never recorded.
func (l Location) Confirm(dataDir string) error {
	data, err := os.ReadFile(filepath.Join(dataDir, "terraform.tfstate"))
	if errors.Is(err, os.ErrNotExist) && !l.block {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: the engine's backend: %v", ErrUnsupported, err)
	}
	var st struct {
		Backend *struct {
			Type   string         `json:"type"`
			Config map[string]any `json:"config"`
		} `json:"backend"`
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Backend == nil {
		return fmt.Errorf("%w: the engine records no backend in %s", ErrUnsupported, dataDir)
	}
	if st.Backend.Type != l.Backend {
		return fmt.Errorf("%w: the engine's backend is %q, not %q", ErrUnsupported, st.Backend.Type, l.Backend)
	}
	for name, want := range l.args {
		if got := engineArg(st.Backend.Config, name); got != want {
			return fmt.Errorf("%w: the engine's backend has %s %q, not %q", ErrUnsupported, name, got, want)
		}
	}
	return nil
}

// engineArg is an argument of the engine's recorded backend config as a
// string: "" for null or unset; name.key for an object's attribute.
func engineArg(config map[string]any, name string) string {
	outer, inner, nested := strings.Cut(name, ".")
	v := config[outer]
	if nested {
		m, _ := v.(map[string]any)
		v = m[inner]
	}
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// cloudEnv are the prefixes of the variables that decide which bucket
// and credentials a backend uses.
var cloudEnv = []string{"AWS_", "GOOGLE_", "CLOUDSDK_", "STORAGE_EMULATOR_HOST"}

// passedEnv are the variables the s3 backend reads that strata passes to
// its bucket from the engine's environment.
var passedEnv = []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3", "AWS_S3_ENDPOINT", "AWS_S3_USE_PATH_STYLE"}

// envFollowed refuses an engine environment strata cannot follow: cloud
// variables the engine gets apart from strata's own process (strata reads
// buckets with its own), and init arguments given through TF_CLI_ARGS.
func envFollowed(env map[string]string) error {
	if env == nil {
		return nil
	}
	for _, k := range []string{"TF_CLI_ARGS", "TF_CLI_ARGS_init"} {
		if strings.Contains(env[k], "backend") {
			return fmt.Errorf("%w: %s sets the backend", ErrUnsupported, k)
		}
	}
	names := map[string]bool{}
	for k := range env {
		names[k] = true
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	for k := range names {
		if slices.Contains(passedEnv, k) {
			continue
		}
		for _, p := range cloudEnv {
			if v, ok := os.LookupEnv(k); strings.HasPrefix(k, p) && (env[k] != v || ok != hasKey(env, k)) {
				return fmt.Errorf("%w: the engine's environment sets %s apart from strata's", ErrUnsupported, k)
			}
		}
	}
	return nil
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
