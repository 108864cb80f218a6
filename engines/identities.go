package engines

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-version"
)

// Binaries found on PATH are identified once per binary state, not once per
// process: identities.json in the cache dir records what each binary said,
// keyed by path, size and modification time, so a changed binary is asked
// again. Every strata command starts by finding its engines; without this
// record each would run `version -json` and read the binary's build
// information again.

const identitiesFile = "identities.json"

type identityRecord struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (in *Installer) identitiesPath() string {
	if in.CacheDir == "" {
		return ""
	}
	return filepath.Join(in.CacheDir, identitiesFile)
}

func (in *Installer) readIdentities() map[string]identityRecord {
	recs := map[string]identityRecord{}
	path := in.identitiesPath()
	if path == "" {
		return recs
	}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &recs)
	}
	return recs
}

// knownIdentity returns the recorded identity of a binary state.
func (in *Installer) knownIdentity(key string) (identity, bool) {
	rec, ok := in.readIdentities()[key]
	if !ok {
		return identity{}, false
	}
	v, err := version.NewVersion(rec.Version)
	if err != nil || (rec.Name != Terraform && rec.Name != Tofu) {
		return identity{}, false
	}
	return identity{name: rec.Name, version: v}, true
}

// rememberIdentity records an identity; losing a race with another process
// only costs that process one more `version -json` later.
func (in *Installer) rememberIdentity(key string, id identity) {
	path := in.identitiesPath()
	if path == "" || id.version == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	recs := in.readIdentities()
	recs[key] = identityRecord{Name: id.name, Version: id.version.String()}
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return
	}
	if err := os.MkdirAll(in.CacheDir, 0o755); err != nil {
		return
	}
	_ = writeFileAtomic(path, append(b, '\n'))
}
