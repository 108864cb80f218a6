package engines

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	"github.com/zclconf/go-cty/cty"
	"golang.org/x/mod/sumdb/dirhash"
)

// An init reads terraform's shared plugin cache, and writes it only when
// a provider it installs is not there (docs/architecture.md#what-an-init-costs).
// Inits that only read it may overlap; one that may write it runs alone.

// maxModuleDepth bounds how deep CachedProviders follows local module
// calls.
const maxModuleDepth = 32

// CachedProviders says whether every provider an init of the root module
// in dir installs is in the plugin cache already, so the init reads the
// cache and writes nothing there: the module's lock file selects a version
// of every provider its configuration (and its local modules') requires,
// and the cache holds each of those versions for this platform with a
// hash the lock file lists (terraform uses a cached provider only then).
// When not, why says what is missing. defaultHost is the engine's
// registry (registry.terraform.io, registry.opentofu.org); read reads a
// module dir (nil: InspectModule), so a caller that read the modules
// already does not read them again.
func CachedProviders(cache, dir, defaultHost string, read ModuleReader) (ok bool, why string) {
	required, err := requiredProviders(dir, defaultHost, read)
	if err != nil {
		return false, err.Error()
	}
	locked, err := lockedProviders(filepath.Join(dir, ".terraform.lock.hcl"))
	if errors.Is(err, errNoLockFile) && len(required) == 0 {
		// Only the builtin provider: nothing to install.
		return true, ""
	}
	if err != nil {
		return false, err.Error()
	}
	for src := range required {
		if _, ok := locked[src]; !ok {
			return false, src + " is required and not in the lock file"
		}
	}
	platform := runtime.GOOS + "_" + runtime.GOARCH
	for src, lp := range locked {
		pkg := filepath.Join(cache, filepath.FromSlash(src), lp.version, platform)
		if st, err := os.Stat(pkg); err != nil || !st.IsDir() {
			return false, fmt.Sprintf("%s %s is not in the plugin cache", src, lp.version)
		}
		h, err := packageHash(pkg)
		if err != nil || !slices.Contains(lp.hashes, h) {
			return false, fmt.Sprintf("the lock file lists no hash of the cached %s %s", src, lp.version)
		}
	}
	return true, ""
}

// errNoLockFile is a module with no lock file.
var errNoLockFile = errors.New("no lock file")

// lockedProvider is one provider of a lock file.
type lockedProvider struct {
	version string
	hashes  []string
}

// packageHashes memoizes packageHash by the package's dir and its
// modification time: a provider is hundreds of megabytes, and the inits
// that start together ask for the same one, which is hashed once.
var packageHashes sync.Map // key -> *hashOnce

type hashOnce struct {
	once sync.Once
	h    string
	err  error
}

// packageHash is the h1: hash of an unpacked provider package, as the
// engines compute it (dirhash's Hash1 over its files).
func packageHash(dir string) (string, error) {
	// A cache entry may be a link to where the package is unpacked (a
	// filesystem mirror's): its files are there.
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	v, _ := packageHashes.LoadOrStore(dir+"\x00"+st.ModTime().String(), &hashOnce{})
	e := v.(*hashOnce)
	e.once.Do(func() { e.h, e.err = dirhash.HashDir(dir, "", dirhash.Hash1) })
	return e.h, e.err
}

// lockedProviders reads a lock file's providers: address -> version.
func lockedProviders(path string) (map[string]lockedProvider, error) {
	f, diags := hclparse.NewParser().ParseHCLFile(path)
	if diags.HasErrors() {
		if _, err := os.Stat(path); err != nil {
			return nil, errNoLockFile
		}
		return nil, fmt.Errorf("the lock file does not parse: %s", diags.Error())
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil, fmt.Errorf("the lock file is not HCL")
	}
	out := map[string]lockedProvider{}
	for _, b := range body.Blocks {
		if b.Type != "provider" || len(b.Labels) != 1 {
			continue
		}
		var lp lockedProvider
		if attr := b.Body.Attributes["version"]; attr != nil {
			if v, d := attr.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String && !v.IsNull() {
				lp.version = v.AsString()
			}
		}
		if attr := b.Body.Attributes["hashes"]; attr != nil {
			if v, d := attr.Expr.Value(nil); !d.HasErrors() && (v.Type().IsListType() || v.Type().IsTupleType()) && v.IsKnown() && !v.IsNull() {
				for _, h := range v.AsValueSlice() {
					if h.Type() == cty.String && !h.IsNull() {
						lp.hashes = append(lp.hashes, h.AsString())
					}
				}
			}
		}
		if lp.version == "" {
			return nil, fmt.Errorf("the lock file's %s has no version", b.Labels[0])
		}
		out[strings.ToLower(b.Labels[0])] = lp
	}
	return out, nil
}

// ModuleReader reads the module in an absolute dir.
type ModuleReader func(dir string) (*tfconfig.Module, error)

// ModuleReader is how e reads a module: read (terraform's files) for
// terraform; tofu reads x.tofu and x.tofu.json too, in place of x.tf and
// x.tf.json, so a provider declared only there counts.
func (e *Engine) ModuleReader(read ModuleReader) ModuleReader {
	if e.Name != Tofu {
		return read
	}
	return func(dir string) (*tfconfig.Module, error) { return InspectModule(tofuFS{tfconfig.NewOsFs()}, dir) }
}

// ProviderRequirements are the providers a root module and its local
// modules require or use, by full address, each with the version
// constraints written for it (sorted); the builtin provider is left out.
// A registry or remote module call is an error: its requirements are known
// only once it is downloaded.
func ProviderRequirements(dir, defaultHost string, read ModuleReader) (map[string][]string, error) {
	req, err := requiredProviders(dir, defaultHost, read)
	for _, cs := range req {
		slices.Sort(cs)
	}
	return req, err
}

// requiredProviders are the full addresses of the providers a root module
// and its local modules require or use, the builtin one left out, with
// their version constraints.
func requiredProviders(dir, defaultHost string, read ModuleReader) (map[string][]string, error) {
	if read == nil {
		read = func(dir string) (*tfconfig.Module, error) { return InspectModule(tfconfig.NewOsFs(), dir) }
	}
	out := map[string][]string{}
	seen := map[string]bool{}
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		if depth > maxModuleDepth {
			return fmt.Errorf("local modules nest deeper than %d", maxModuleDepth)
		}
		mod, err := read(dir)
		if err != nil {
			return err
		}
		sources := map[string]string{}
		for name, req := range mod.RequiredProviders {
			sources[name] = req.Source
		}
		add := func(local string, constraints ...string) {
			if addr := providerAddress(sources[local], local, defaultHost); addr != "" {
				out[addr] = append(out[addr], constraints...)
			}
		}
		for name, req := range mod.RequiredProviders {
			add(name, req.VersionConstraints...)
		}
		for _, rs := range []map[string]*tfconfig.Resource{mod.ManagedResources, mod.DataResources} {
			for _, r := range rs {
				add(r.Provider.Name)
			}
		}
		for _, pc := range mod.ProviderConfigs {
			// A provider block alone makes init install the provider.
			add(pc.Name)
		}
		for _, call := range mod.ModuleCalls {
			if strings.HasPrefix(call.Source, "./") || strings.HasPrefix(call.Source, "../") {
				if err := walk(filepath.Join(dir, filepath.FromSlash(call.Source)), depth+1); err != nil {
					return err
				}
				continue
			}
			// A registry or remote module's providers are known once it
			// is downloaded: the init may write the cache.
			return fmt.Errorf("module %q comes from %s", call.Name, call.Source)
		}
		return nil
	}
	return out, walk(dir, 0)
}

// providerAddress is a provider's full address (host/namespace/type,
// lower case) from its source, or its local name when it has none; "" for
// the builtin provider.
func providerAddress(source, local, defaultHost string) string {
	if source == "" {
		source = local
	}
	parts := strings.Split(strings.ToLower(source), "/")
	switch len(parts) {
	case 1:
		parts = []string{defaultHost, "hashicorp", parts[0]}
	case 2:
		parts = append([]string{defaultHost}, parts...)
	}
	if len(parts) != 3 || parts[2] == "" {
		return ""
	}
	if parts[0] == "terraform.io" && parts[1] == "builtin" {
		return ""
	}
	if parts[2] == "terraform" && parts[1] == "hashicorp" && source == local {
		// terraform_data and the terraform_remote_state data source.
		return ""
	}
	return strings.Join(parts, "/")
}
