package runstate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/stacks"
)

// Deleted root modules put back (docs/behaviour.md#deleted-dirs-put-back):
// a deleted unit that may still hold resources is planned or destroyed
// from its dir as it was at a commit, put back in place for the length of
// the command, so that relative paths and a local state left in the dir
// work as they did. The state dir records what was put back before
// anything is, so the next command removes what a killed one left. That
// record is read back as untrusted input: it removes a file only when the
// file is one strata put back, unchanged, and a dir only when strata made
// it and it is empty.

// restoredRecord is the state dir's record of what a command put back.
const restoredRecord = "restored.json"

// restoredVersion is the record's format. Records of an earlier strata
// name no content, so nothing they name is removed.
const restoredVersion = 2

// maxRestoredRecord bounds what is read of a record: one larger was not
// written by strata.
const maxRestoredRecord = 16 << 20

// restoredFileRecord is the record as it is written.
type restoredFileRecord struct {
	Version int           `json:"version"`
	Dirs    []restoredDir `json:"dirs"`
}

// restoredDir is one dir put back from a commit: the dirs strata made for
// it, parents first, and the files it wrote, each with the SHA-256 of what
// it wrote. What was there before is in neither list.
type restoredDir struct {
	Dir    string         `json:"dir"`
	Commit string         `json:"commit"`
	Made   []string       `json:"made,omitempty"`
	Files  []restoredFile `json:"files,omitempty"`
}

// restoredFile is a file strata wrote, repo-relative.
type restoredFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// RestoreDir is a deleted root module dir to put back, and the commit to
// take it from.
type RestoreDir struct {
	Dir, Commit string
}

// Restored is what a command put back; Remove takes it away again.
type Restored struct {
	root, stateDir string
	repo           *git.Repo
	lock           *filelock.Lock
	dirs           []restoredDir
	warn           func(string)
	// kept are the paths a warning already leaves in place.
	kept map[string]bool
	// fromRecord says the dirs were read from a record on disk, which is
	// checked against the repository before anything it names is removed.
	fromRecord bool
}

// restoreLock is held while dirs are put back: a command that finds the
// record without being able to take the lock leaves it to its holder.
func restoreLock(stateDir string) string {
	return (&StateDir{Path: stateDir}).LockPath("restored")
}

// Restore puts each dir back into the work tree at root as it was at its
// commit, with the local modules it calls that are gone too, holding the
// state dir's restore lock until Remove. Only what is missing is written:
// a file already there stays as it is. On an error, what was put back is
// taken away again. warn hears of what Remove leaves in place.
func Restore(ctx context.Context, root, stateDir string, repo *git.Repo, dirs []RestoreDir, warn func(string)) (*Restored, error) {
	if err := os.MkdirAll(filepath.Dir(restoreLock(stateDir)), 0o700); err != nil {
		return nil, err
	}
	lock, err := filelock.Acquire(ctx, restoreLock(stateDir), nil)
	if err != nil {
		return nil, err
	}
	r := &Restored{root: root, stateDir: stateDir, repo: repo, lock: lock, warn: warn}
	for _, d := range dirs {
		if err := r.restore(d.Commit, d.Dir); err != nil {
			if rerr := r.Remove(); rerr != nil {
				err = fmt.Errorf("%w; and removing what was put back: %v", err, rerr)
			}
			return nil, err
		}
	}
	return r, nil
}

// CleanRestored removes what a command that was killed put back, before a
// project is loaded: those dirs must not be taken for root modules. The
// record is untrusted (docs/behaviour.md#deleted-dirs-put-back): a file
// goes only when the record's commit has it with the content the record
// gives, the work tree still holds that content, and HEAD does not track
// it; a dir goes only when strata made it, HEAD tracks nothing under it
// and it is empty. Anything else stays, with a warning naming it.
func CleanRestored(ctx context.Context, stateDir, root string, warn func(string)) error {
	record := filepath.Join(stateDir, restoredRecord)
	f, err := os.Open(record)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRestoredRecord+1))
	f.Close()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(restoreLock(stateDir)), 0o700); err != nil {
		return err
	}
	lock, err := filelock.TryAcquire(restoreLock(stateDir))
	if errors.Is(err, filelock.ErrHeld) {
		return nil // its command is still running and cleans up itself
	}
	if err != nil {
		return err
	}
	r := &Restored{root: root, stateDir: stateDir, lock: lock, warn: warn, fromRecord: true}
	dirs, why := readRestored(b)
	if why != "" {
		msg := fmt.Sprintf("%s %s: nothing it names is removed", record, why)
		if names := oldRecordDirs(b); len(names) > 0 {
			msg += "; left in place: " + strings.Join(names, ", ")
		}
		warn(msg)
		return r.Remove()
	}
	r.dirs = dirs
	if r.repo, err = git.Open(ctx, root); err != nil {
		warn(fmt.Sprintf("%s: the repository cannot be read to check it (%v): nothing it names is removed; left in place: %s", record, err, strings.Join(r.Names(), ", ")))
		r.dirs = nil
		return r.Remove()
	}
	warn(fmt.Sprintf("removing the deleted dirs a killed command put back: %s", strings.Join(r.Names(), ", ")))
	return r.Remove()
}

// readRestored decodes a record, or says why it is not one this strata
// acts on.
func readRestored(b []byte) ([]restoredDir, string) {
	if len(b) > maxRestoredRecord {
		return nil, "is larger than strata writes one"
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		return nil, "was written by an earlier strata and names no content"
	}
	var rec restoredFileRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Sprintf("cannot be read (%v)", err)
	}
	if rec.Version != restoredVersion {
		return nil, fmt.Sprintf("has format %d, not %d", rec.Version, restoredVersion)
	}
	return rec.Dirs, ""
}

// oldRecordDirs names the dirs of a record an earlier strata wrote (a
// list of dirs), for the warning that leaves them in place.
func oldRecordDirs(b []byte) []string {
	var old []struct {
		Dir string `json:"dir"`
	}
	if len(b) > maxRestoredRecord || json.Unmarshal(b, &old) != nil {
		return nil
	}
	var out []string
	for _, d := range old {
		out = append(out, shown(d.Dir))
	}
	return out
}

// shown quotes a name from a record that is not a plain path,
// so a warning cannot be made to say something else.
func shown(p string) string {
	if localPath(p) && !strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return p
	}
	return strconv.Quote(p)
}

// Names are the dirs put back.
func (r *Restored) Names() []string {
	out := make([]string, len(r.dirs))
	for i, d := range r.dirs {
		out[i] = shown(d.Dir)
	}
	return out
}

// save writes the record, synced, before anything is put back.
func (r *Restored) save() error {
	b, err := json.Marshal(restoredFileRecord{Version: restoredVersion, Dirs: r.dirs})
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(r.stateDir, restoredRecord), b, 0o600)
}

// restore puts a unit's dir back as it was at commit, with the local
// modules it calls that are gone too, recursively.
func (r *Restored) restore(commit, dir string) error {
	todo := []string{dir}
	seen := map[string]bool{}
	for len(todo) > 0 {
		d := todo[0]
		todo = todo[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		abs := filepath.Join(r.root, filepath.FromSlash(d))
		if stacks.HoldsTerraform(abs) {
			continue // still there: a module the change kept
		}
		files, err := r.repo.Archive(commit, []string{d})
		if err != nil {
			return fmt.Errorf("putting %s back as it was at %s: %w", d, commit, err)
		}
		if len(files) == 0 {
			continue
		}
		if err := r.put(commit, d, files); err != nil {
			return fmt.Errorf("putting %s back as it was at %s: %w", d, commit, err)
		}
		mod, err := engines.InspectModule(tfconfig.NewOsFs(), abs)
		if err != nil || mod == nil {
			continue
		}
		for _, call := range mod.ModuleCalls {
			if !strings.HasPrefix(call.Source, "./") && !strings.HasPrefix(call.Source, "../") {
				continue
			}
			m := path.Clean(path.Join(d, call.Source))
			if m == ".." || strings.HasPrefix(m, "../") {
				continue
			}
			todo = append(todo, m)
		}
	}
	return nil
}

// put writes what of files is missing under dir: first the record of the
// dirs it makes and the files it writes, with their hashes, then the
// dirs and files.
func (r *Restored) put(commit, dir string, files []git.ArchivedFile) error {
	rd := restoredDir{Dir: dir, Commit: commit}
	made := map[string]bool{}
	var write []git.ArchivedFile
	for _, f := range files {
		if !under(f.Path, dir) || f.Path == dir {
			return fmt.Errorf("%s is not inside %s", f.Path, dir)
		}
		for _, p := range dirsDown(dir, path.Dir(f.Path)) {
			if made[p] {
				continue
			}
			missing, err := r.missing(p)
			if err != nil {
				return err
			}
			if missing {
				made[p] = true
				rd.Made = append(rd.Made, p)
			}
		}
		missing, err := r.missing(f.Path)
		if err != nil {
			return err
		}
		if missing {
			rd.Files = append(rd.Files, restoredFile{Path: f.Path, SHA256: sha256Hex(f.Data)})
			write = append(write, f)
		}
	}
	r.dirs = append(r.dirs, rd)
	if err := r.save(); err != nil {
		return err
	}
	for _, p := range rd.Made {
		abs, err := plainPath(r.root, p)
		if err != nil {
			return err
		}
		if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	for _, f := range write {
		if err := r.write(f); err != nil {
			return err
		}
	}
	return nil
}

// missing reports whether nothing is at the repo-relative path p; a path
// through a symbolic link is an error.
func (r *Restored) missing(p string) (bool, error) {
	abs, err := plainPath(r.root, p)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	_, err = os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	return false, err
}

// write creates one file put back, only where nothing is.
func (r *Restored) write(f git.ArchivedFile) error {
	abs, err := plainPath(r.root, f.Path)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if f.Exec {
		mode = 0o755
	}
	out, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return nil // made since it was found missing: not strata's
	}
	if err != nil {
		return err
	}
	_, err = out.Write(f.Data)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove takes away what was put back, and the record, and releases the
// restore lock. A file goes only when it holds what was written, a dir
// only when it is empty; from a record on disk, also only what the
// record's commit has and HEAD does not track. What stays is named in a
// warning.
func (r *Restored) Remove() error {
	defer r.lock.Release()
	r.kept = map[string]bool{}
	var errs []error
	for i := len(r.dirs) - 1; i >= 0; i-- {
		errs = append(errs, r.removeDir(r.dirs[i]))
	}
	errs = append(errs, os.Remove(filepath.Join(r.stateDir, restoredRecord)))
	var out []error
	for _, err := range errs {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}

// removeDir takes away what strata put back of one dir.
func (r *Restored) removeDir(d restoredDir) error {
	if !localPath(d.Dir) {
		r.leave(d.Dir, "not a path inside the repository")
		return nil
	}
	check, err := r.checkOf(d)
	if err != nil {
		for _, p := range append(filePaths(d.Files), d.Made...) {
			r.leave(p, err.Error())
		}
		return nil
	}
	var errs []error
	files := append([]restoredFile(nil), d.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path > files[j].Path })
	for _, f := range files {
		errs = append(errs, r.removeFile(d, f, check))
	}
	made := map[string]bool{}
	for _, p := range d.Made {
		made[p] = true
	}
	dirs := append([]string(nil), d.Made...)
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, p := range dirs {
		errs = append(errs, r.removeMade(d, p, made, check))
	}
	return errors.Join(errs...)
}

// fromCommit is what a record's commit says of a dir: the SHA-256 of each
// file it has there, and the files HEAD tracks under the dir.
type fromCommit struct {
	hashes  map[string]string
	tracked []string
}

// checkOf reads what a record's dir is checked against; nil when the dirs
// are this command's own.
func (r *Restored) checkOf(d restoredDir) (*fromCommit, error) {
	if !r.fromRecord {
		return nil, nil
	}
	if !git.CommitID(d.Commit) || !r.repo.Has(d.Commit) {
		return nil, fmt.Errorf("the record's commit %q is not in this clone", d.Commit)
	}
	c := &fromCommit{hashes: map[string]string{}}
	// git archive fails on a dir the commit does not have.
	if listed, err := r.repo.Files(d.Commit, d.Dir); err != nil || len(listed) > 0 {
		files, err := r.repo.Archive(d.Commit, []string{d.Dir})
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			c.hashes[f.Path] = sha256Hex(f.Data)
		}
	}
	tracked, err := r.repo.Files(r.repo.Head(), d.Dir)
	if err != nil {
		return nil, err
	}
	c.tracked = tracked
	return c, nil
}

// tracks reports whether HEAD tracks p or anything under it.
func (c *fromCommit) tracks(p string) bool {
	for _, t := range c.tracked {
		if under(t, p) {
			return true
		}
	}
	return false
}

// removeFile removes one file put back, when it is still what was written.
func (r *Restored) removeFile(d restoredDir, f restoredFile, check *fromCommit) error {
	if !localPath(f.Path) || !under(f.Path, d.Dir) || f.Path == d.Dir {
		r.leave(f.Path, "not a path inside "+d.Dir)
		return nil
	}
	abs, fi, err := r.lstatPlain(f.Path)
	if err != nil || fi == nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		r.leave(f.Path, "not a regular file")
		return nil
	}
	got, err := hashFile(abs)
	if err != nil {
		return err
	}
	switch {
	case f.SHA256 == "" || got != f.SHA256:
		r.leave(f.Path, "changed since it was put back")
		return nil
	case check != nil && check.hashes[f.Path] != got:
		r.leave(f.Path, "not as it was at "+git.ShortID(d.Commit))
		return nil
	case check != nil && check.tracks(f.Path):
		r.leave(f.Path, "tracked at HEAD")
		return nil
	}
	return os.Remove(abs)
}

// removeMade removes a dir strata made, when it is empty.
func (r *Restored) removeMade(d restoredDir, p string, made map[string]bool, check *fromCommit) error {
	if !localPath(p) || !under(p, d.Dir) {
		r.leave(p, "not a path inside "+d.Dir)
		return nil
	}
	abs, fi, err := r.lstatPlain(p)
	if err != nil || fi == nil {
		return err
	}
	if !fi.IsDir() {
		r.leave(p, "not a dir")
		return nil
	}
	if check != nil && check.tracks(p) {
		r.leave(p, "HEAD tracks files in it")
		return nil
	}
	err = os.Remove(abs)
	if err == nil || !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		return err
	}
	entries, rerr := os.ReadDir(abs)
	if rerr != nil {
		return rerr
	}
	var others []string
	for _, e := range entries {
		if q := path.Join(p, e.Name()); !made[q] && !r.kept[q] {
			others = append(others, shown(e.Name()))
		}
	}
	if len(others) > 0 {
		r.leave(p, "it holds "+strings.Join(others, ", ")+", which strata did not put back")
	} else {
		r.kept[p] = true // what it holds is named already
	}
	return nil
}

// leave warns that what p names stays, and why.
func (r *Restored) leave(p, why string) {
	r.kept[p] = true
	if r.warn != nil {
		r.warn(fmt.Sprintf("left in place: %s (%s)", shown(p), why))
	}
}

// localPath reports whether p is a clean, relative, slash-separated path
// that stays inside the dir it is joined to.
func localPath(p string) bool {
	return p != "" && path.Clean(p) == p && filepath.IsLocal(filepath.FromSlash(p)) && !strings.Contains(p, "\\")
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// dirsDown lists dir and each dir below it down to sub, in that order.
func dirsDown(dir, sub string) []string {
	out := []string{dir}
	if sub == dir {
		return out
	}
	rest := strings.Split(strings.TrimPrefix(sub, dir+"/"), "/")
	cur := dir
	for _, seg := range rest {
		cur = cur + "/" + seg
		out = append(out, cur)
	}
	return out
}

// plainPath joins a repo-relative path to root, refusing one that is not
// local or that goes through a symbolic link below root: a record's path
// names the file at that path, never one a link leads to. The error wraps
// fs.ErrNotExist when a dir on the way is missing.
func plainPath(root, p string) (string, error) {
	if !localPath(p) {
		return "", fmt.Errorf("%q is not a path inside the repository", p)
	}
	cur := filepath.Clean(root)
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		cur = filepath.Join(cur, seg)
		if i == len(segs)-1 {
			break
		}
		fi, err := os.Lstat(cur)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symbolic link", strings.Join(segs[:i+1], "/"))
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s is not a dir", strings.Join(segs[:i+1], "/"))
		}
	}
	return cur, nil
}

func filePaths(files []restoredFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// lstatPlain is what is at p under the root, as Lstat sees it: nil when
// nothing is, or when p is no plain path under the root, which is then
// left in place with a warning saying why.
func (r *Restored) lstatPlain(p string) (abs string, fi fs.FileInfo, err error) {
	abs, err = plainPath(r.root, p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		r.leave(p, err.Error())
		return "", nil, nil
	}
	fi, err = os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	return abs, fi, err
}
