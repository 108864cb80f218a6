package runstate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/stacks/config"
)

// Units found from their records (docs/behaviour.md#a-stack-that-left-the-config):
// a deleted dir whose stack left the config has no unit in the config any
// more, so the run state is where it is found. A record's file name is
// `<workspace>#<stack>.json`; the names in it are read back as untrusted
// and kept only when a config could have used them.

// RecordedUnit is a unit of a dir that the run state holds a record of.
type RecordedUnit struct {
	Workspace, Stack string
}

// recordedName reads a record's file name; false for one that is not a
// record of a unit, or names a workspace or stack no config may use.
func recordedName(name string) (RecordedUnit, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return RecordedUnit{}, false
	}
	ws, stack, ok := strings.Cut(base, "#")
	if !ok || !config.SafeName(ws) || !config.SafeName(stack) {
		return RecordedUnit{}, false
	}
	return RecordedUnit{Workspace: ws, Stack: stack}, true
}

// RecordedLocal lists the units of dir that the state dir at path holds
// records of, sorted.
func RecordedLocal(path, dir string) ([]RecordedUnit, error) {
	sd := &StateDir{Path: path}
	folder, err := sd.under("state", []string{dir}, "")
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(folder)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RecordedUnit
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if u, ok := recordedName(e.Name()); ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// RecordedInBucket lists the units of dir that the bucket holds records
// of, sorted.
func RecordedInBucket(ctx context.Context, st *objstore.Store, dir string) ([]RecordedUnit, error) {
	var segs []string
	for _, s := range strings.Split(dir, "/") {
		segs = append(segs, EscapeSegment(s))
	}
	prefix := unitsFolder + "/" + strings.Join(segs, "/") + "/"
	keys, err := st.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var out []RecordedUnit
	for _, k := range keys {
		name := strings.TrimPrefix(k, prefix)
		if strings.Contains(name, "/") {
			continue // a record of a dir below
		}
		base, ok := strings.CutSuffix(name, ".json")
		if !ok {
			continue
		}
		ws, stack, ok := strings.Cut(base, "#")
		if !ok {
			continue
		}
		ws, werr := UnescapeSegment(ws)
		stack, serr := UnescapeSegment(stack)
		if werr != nil || serr != nil {
			continue
		}
		if u, ok := recordedName(ws + "#" + stack + ".json"); ok {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Workspace != out[j].Workspace {
			return out[i].Workspace < out[j].Workspace
		}
		return out[i].Stack < out[j].Stack
	})
	return out, nil
}

// UnescapeSegment reverses EscapeSegment.
func UnescapeSegment(s string) (string, error) {
	if s == "=" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 > len(s) {
			return "", fmt.Errorf("%q: a cut escape", s)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("%q: %w", s, err)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}
