package engines

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// RequiredVersionError says an engine does not satisfy a module's
// required_version.
type RequiredVersionError struct {
	Dir        string
	Constraint string
	Engine     *Engine
	// Err is set when the constraint itself does not parse.
	Err error
}

func (e *RequiredVersionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: required_version %q: %v", e.Dir, e.Constraint, e.Err)
	}
	return fmt.Sprintf("%s: required_version %q is not satisfied by %s %s", e.Dir, e.Constraint, e.Engine.Name, e.Engine.Version)
}

func (e *RequiredVersionError) Unwrap() error { return e.Err }

// CheckRequiredVersion checks e against every required_version in the
// module at moduleDir, read with terraform-config-inspect through read (nil
// reads it afresh; a project passes the module it already read). That
// reads only .tf and .tf.json files; for tofu the module is read as tofu
// sees it: x.tofu and x.tofu.json are read too, and replace x.tf and
// x.tf.json (ModuleReader). Syntax errors are left for the engine to
// report, with its own context; only the required_version constraints that
// parse are checked. So is a module terraform-config-inspect cannot read at
// all (see InspectModule).
func CheckRequiredVersion(moduleDir string, e *Engine, read ModuleReader) error {
	if _, err := os.Stat(moduleDir); err != nil {
		return err
	}
	if read == nil {
		read = func(dir string) (*tfconfig.Module, error) { return InspectModule(tfconfig.NewOsFs(), dir) }
	}
	mod, err := e.ModuleReader(read)(moduleDir)
	if err != nil {
		return nil
	}
	for _, c := range mod.RequiredCore {
		cs, err := version.NewConstraint(c)
		if err != nil {
			return &RequiredVersionError{Dir: moduleDir, Constraint: c, Engine: e, Err: err}
		}
		if !cs.Check(e.Version) {
			return &RequiredVersionError{Dir: moduleDir, Constraint: c, Engine: e}
		}
	}
	return nil
}

// InspectError says terraform-config-inspect could not read a module: it
// panicked on one of its files.
type InspectError struct {
	Dir  string
	File string // the file it was reading, "" when unknown
	Err  string // the library's panic
}

func (e *InspectError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("terraform-config-inspect cannot read the module in %s: %s", e.Dir, e.Err)
	}
	return fmt.Sprintf("terraform-config-inspect cannot read %s: %s", e.File, e.Err)
}

// InspectModule reads the module in dir as tfconfig.LoadModuleFromFilesystem
// does, leaving the engine to report what it finds wrong with the module.
// The library panics on some files instead of returning diagnostics (a
// top-level required_providers block: "unhandled block type"); that panic
// comes back as an *InspectError naming the file, so that one odd module
// does not stop every command.
func InspectModule(fsys tfconfig.FS, dir string) (mod *tfconfig.Module, err error) {
	files := &readTracker{FS: fsys}
	defer func() {
		if r := recover(); r != nil {
			file := files.last
			if t, ok := fsys.(tofuFS); ok && file != "" {
				file = t.real(file)
			}
			mod, err = nil, &InspectError{Dir: dir, File: file, Err: fmt.Sprint(r)}
		}
	}()
	mod, _ = tfconfig.LoadModuleFromFilesystem(files, dir)
	return mod, nil
}

// readTracker remembers the file read last: the library reads a module's
// files one at a time and decodes each before reading the next, so that is
// the file a panic comes from.
type readTracker struct {
	tfconfig.FS
	last string
}

func (r *readTracker) ReadFile(name string) ([]byte, error) {
	r.last = name
	return r.FS.ReadFile(name)
}

// tofuFS shows a module directory the way OpenTofu reads it to
// terraform-config-inspect, which knows only .tf and .tf.json: x.tofu is
// listed as x.tf (hiding a real x.tf), x.tofu.json as x.tf.json.
type tofuFS struct{ tfconfig.FS }

var tofuExts = []struct{ tofu, tf string }{
	{".tofu.json", ".tf.json"},
	{".tofu", ".tf"},
}

func (t tofuFS) ReadDir(dir string) ([]os.FileInfo, error) {
	infos, err := t.FS.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(infos))
	for _, fi := range infos {
		names[fi.Name()] = true
	}
	out := make([]os.FileInfo, 0, len(infos))
	for _, fi := range infos {
		name := fi.Name()
		if shadow, ok := tofuTwin(name); ok && !fi.IsDir() && names[shadow] {
			continue
		}
		if tf, ok := tfName(name); ok && !fi.IsDir() {
			out = append(out, renamedInfo{fi, tf})
			continue
		}
		out = append(out, fi)
	}
	return out, nil
}

func (t tofuFS) ReadFile(name string) ([]byte, error) {
	return t.FS.ReadFile(t.real(name))
}

func (t tofuFS) Open(name string) (tfconfig.File, error) {
	return t.FS.Open(t.real(name))
}

// real maps a name ReadDir showed back to the file on disk.
func (t tofuFS) real(name string) string {
	if twin, ok := tofuTwin(filepath.Base(name)); ok {
		p := filepath.Join(filepath.Dir(name), twin)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return name
}

// tfName gives the .tf name a tofu file is shown under.
func tfName(name string) (string, bool) {
	for _, e := range tofuExts {
		if strings.HasSuffix(name, e.tofu) {
			return strings.TrimSuffix(name, e.tofu) + e.tf, true
		}
	}
	return "", false
}

// tofuTwin gives the tofu file that replaces a .tf or .tf.json file.
func tofuTwin(name string) (string, bool) {
	for _, e := range tofuExts {
		if strings.HasSuffix(name, e.tf) {
			return strings.TrimSuffix(name, e.tf) + e.tofu, true
		}
	}
	return "", false
}

type renamedInfo struct {
	os.FileInfo
	name string
}

func (r renamedInfo) Name() string { return r.name }
