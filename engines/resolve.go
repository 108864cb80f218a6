package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-version"
)

// A lister lists the versions of one engine that its download source
// offers.
type lister interface {
	where() string
	list(ctx context.Context) ([]*version.Version, error)
}

func (in *Installer) lister(name string) lister {
	if name == Tofu {
		return tofuSource{in}
	}
	return hashicorpSource{in}
}

type listResult struct {
	versions []*version.Version
	err      error
}

// resolveVersion turns a spec into one version. An exact spec is its own
// answer. A constraint or "latest" takes the highest matching version the
// releases API or mirror lists; when the listing fails (or the Installer is
// offline), the highest matching version in the cache or on the search
// path, which is then returned as found.
func (in *Installer) resolveVersion(ctx context.Context, spec Spec, req requirement) (*version.Version, *Engine, error) {
	if req.exact != nil {
		return req.exact, nil, nil
	}
	l := in.lister(spec.Name)
	listErr := errOffline
	if !in.Offline {
		vs, err := in.listVersions(ctx, spec.Name)
		if err == nil {
			if v := req.highest(vs); v != nil {
				return v, nil, nil
			}
			return nil, nil, fmt.Errorf("%s: none of the %d versions %s lists matches (highest: %s)",
				spec, len(vs), l.where(), slices.MaxFunc(vs, (*version.Version).Compare))
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s: %w", spec, ctx.Err())
		}
		listErr = err
	}
	e := in.highestOffline(ctx, spec.Name, req)
	if e == nil {
		return nil, nil, fmt.Errorf("%s: cannot list versions: %v; and no matching version is in the cache (%s) or in %s",
			spec, listErr, in.engineDir(spec.Name), in.searchDescription())
	}
	in.warn(fmt.Sprintf("%s: cannot list versions (%v); using %s from the %s, the highest matching version available offline",
		spec, listErr, e.Version, sourcePlace(e.Source)))
	return e.Version, e, nil
}

func sourcePlace(src string) string {
	if src == SourcePath {
		return "search path"
	}
	return src
}

// highestOffline returns the highest version matching req that the cache
// or the search path holds, preferring the cache on a tie, or nil.
func (in *Installer) highestOffline(ctx context.Context, name string, req requirement) *Engine {
	var best *Engine
	cached := in.cachedVersions(name)
	slices.SortFunc(cached, func(a, b *version.Version) int { return b.Compare(a) })
	for _, v := range cached {
		if !req.matches(v) {
			continue
		}
		if path, err := (cacheSource{in}).get(ctx, name, v, ""); err == nil {
			best = &Engine{Name: name, Version: v, Path: path, Source: SourceCache}
			break
		}
	}
	for _, e := range in.pathEngines(ctx, name) {
		if req.matches(e.Version) && (best == nil || e.Version.GreaterThan(best.Version)) {
			best = e
		}
	}
	return best
}

// listVersions lists name's versions once per Installer, reusing a listing
// saved in the cache for ListTTL.
func (in *Installer) listVersions(ctx context.Context, name string) ([]*version.Version, error) {
	in.mu.Lock()
	r, ok := in.listed[name]
	in.mu.Unlock()
	if ok {
		return r.versions, r.err
	}
	v, _, _ := in.listings.Do(name, func() (any, error) {
		vs, err := in.listOnce(ctx, name)
		r := listResult{versions: vs, err: err}
		if ctx.Err() == nil {
			in.mu.Lock()
			if in.listed == nil {
				in.listed = map[string]listResult{}
			}
			in.listed[name] = r
			in.mu.Unlock()
		}
		return r, nil
	})
	r = v.(listResult)
	return r.versions, r.err
}

// listing is the versions.json saved beside an engine's versions.
type listing struct {
	Source    string    `json:"source"`
	FetchedAt time.Time `json:"fetched_at"`
	Versions  []string  `json:"versions"`
}

func (in *Installer) listOnce(ctx context.Context, name string) ([]*version.Version, error) {
	l := in.lister(name)
	file := filepath.Join(in.engineDir(name), "versions.json")
	useFile := in.ListTTL > 0 && in.CacheDir != ""
	if useFile {
		if vs, ok := readListing(file, l.where(), in.ListTTL); ok {
			return vs, nil
		}
	}
	vs, err := l.list(ctx)
	if err != nil {
		return nil, err
	}
	if useFile {
		saved := listing{Source: l.where(), FetchedAt: time.Now().UTC()}
		for _, v := range vs {
			saved.Versions = append(saved.Versions, v.Original())
		}
		b, err := json.Marshal(saved)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(file), 0o755)
		}
		if err == nil {
			err = writeFileAtomic(file, b)
		}
		if err != nil {
			in.warn(fmt.Sprintf("cannot save the %s version listing: %v", name, err))
		}
	}
	return vs, nil
}

func readListing(file, source string, ttl time.Duration) ([]*version.Version, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var l listing
	if err := json.Unmarshal(b, &l); err != nil || l.Source != source || time.Since(l.FetchedAt) > ttl || time.Since(l.FetchedAt) < 0 {
		return nil, false
	}
	vs := make([]*version.Version, 0, len(l.Versions))
	for _, s := range l.Versions {
		v, err := version.NewVersion(strings.TrimSpace(s))
		if err != nil {
			return nil, false
		}
		vs = append(vs, v)
	}
	return vs, len(vs) > 0
}
