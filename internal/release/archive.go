package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
)

// entry is one file of an archive: its name there, where it is read from
// and the mode it gets (the source's own mode and times are ignored, so
// that the archive depends on the files' contents alone).
type entry struct {
	name string
	path string
	mode fs.FileMode
}

// writeArchive writes entries, sorted by name, to path as a gzipped tar or
// a zip ("tar.gz", "zip"), each entry owned by uid and gid 0 and modified
// at mtime, and returns the archive's SHA-256.
func writeArchive(path, format string, entries []entry, mtime time.Time) (string, error) {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	w := io.MultiWriter(f, h)
	switch format {
	case "tar.gz":
		err = writeTarGz(w, entries, mtime)
	case "zip":
		err = writeZip(w, entries, mtime)
	default:
		err = fmt.Errorf("archive format %q: want tar.gz or zip", format)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func writeTarGz(w io.Writer, entries []entry, mtime time.Time) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		err := copyEntry(e, func(size int64) (io.Writer, error) {
			hdr := &tar.Header{
				Typeflag: tar.TypeReg,
				Name:     e.name,
				Mode:     int64(e.mode.Perm()),
				Size:     size,
				ModTime:  mtime.UTC().Truncate(time.Second),
				Format:   tar.FormatUSTAR,
			}
			return tw, tw.WriteHeader(hdr)
		})
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func writeZip(w io.Writer, entries []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		err := copyEntry(e, func(int64) (io.Writer, error) {
			hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime.UTC().Truncate(time.Second)}
			hdr.SetMode(e.mode.Perm())
			return zw.CreateHeader(hdr)
		})
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// copyEntry copies e's file into the writer open returns for its size,
// and checks that the file did not change size meanwhile.
func copyEntry(e entry, open func(size int64) (io.Writer, error)) error {
	f, err := os.Open(e.path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	w, err := open(info.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	n, err := io.Copy(w, f)
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	if n != info.Size() {
		return fmt.Errorf("%s changed while it was archived: %d bytes, expected %d", e.path, n, info.Size())
	}
	return nil
}

// writeChecksums writes checksums.txt as GoReleaser does: a line
// "<sha256>  <name>" per archive, sorted by name, the form sha256sum
// --check reads.
func writeChecksums(path string, arts []Artifact) error {
	arts = slices.Clone(arts)
	slices.SortFunc(arts, func(a, b Artifact) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	for _, a := range arts {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
