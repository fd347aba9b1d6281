package rundir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files of a run directory.
const (
	ConfigFile   = "config.toml"   // the config as resolved (defaults filled in)
	ManifestFile = "manifest.json" // seed, versions, machine, start and end
	MetricsFile  = "metrics.jsonl" // one line per round per node, reproducible
	RoundsFile   = "rounds.jsonl"  // one line per round: the aggregates over nodes
	TimingsFile  = "timings.jsonl" // wall-clock seconds per round, never reproducible
	SummaryFile  = "summary.csv"   // the final metrics; written last, so it marks a finished run
	EdgesFile    = "edges.jsonl"   // per round, the weight each receiver gave each sender (run.edges)
	AuditFile    = "audit.json"    // the membership-inference audit of the final models
	ModelsDir    = "models"        // the final models of a run that saves them, one checkpoint directory per node
)

// ModelDir is node i's checkpoint directory under a run directory's
// ModelsDir.
func ModelDir(i int) string { return filepath.Join(ModelsDir, fmt.Sprintf("node-%d", i)) }

// runFiles are the files a run writes (removed when a run is redone).
var runFiles = []string{ConfigFile, ManifestFile, MetricsFile, RoundsFile, TimingsFile, SummaryFile, EdgesFile, StepsFile}

// Has reports whether dir holds every one of the files names.
func Has(dir string, names ...string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}

// Remove removes the files a run writes from dir (those that exist),
// leaving everything else there.
func Remove(dir string) error {
	for _, f := range runFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ReadConfig returns the text of dir's config.toml.
func ReadConfig(dir string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, ConfigFile)) }

// ReadManifestText returns the text of dir's manifest.json, as written.
func ReadManifestText(dir string) ([]byte, error) {
	return os.ReadFile(filepath.Join(dir, ManifestFile))
}

// WriteAtomic writes b to path atomically (WriteAtomicFunc), so a reader
// (or a resumed sweep) never sees half of it.
func WriteAtomic(path string, b []byte) error {
	return WriteAtomicFunc(path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// WritePrivate is WriteAtomic for a file only its owner may read (mode
// 0600): a node's checkpoint holds its secret keys (secure aggregation's
// pairwise seeds, a Paillier private key).
func WritePrivate(path string, b []byte) error {
	return writeAtomic(path, 0o600, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// WriteAtomicFunc writes the file at path atomically: write fills a
// temporary file in path's directory, which is synced and renamed over
// path only if write and every step after it succeed. Readers, and a run
// interrupted at any point, see either the previous file or the complete
// new one; on failure the temporary file is removed. The new file has
// mode 0644.
func WriteAtomicFunc(path string, write func(w io.Writer) error) error {
	return writeAtomic(path, 0o644, write)
}

func writeAtomic(path string, mode os.FileMode, write func(w io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// A dot name keeps the temporary file out of globs such as *.png.
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	done := false
	defer func() {
		// Also runs when write panics, so no temporary file is left.
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	// Sync before rename: otherwise a crash can leave the new name pointing
	// at data that never reached the disk.
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	err = os.Rename(tmp, path)
	if err != nil {
		os.Remove(tmp)
	}
	done = true
	return err
}

// Copy copies a finished run directory's files into dst (replacing the
// run files of an unfinished run there), the summary last, so an
// interrupted copy is never taken for a finished run.
func Copy(src, dst string) error {
	if err := Remove(dst); err != nil {
		return err
	}
	var last []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if rel == SummaryFile {
			last = append(last, rel)
			return nil
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
	if err != nil {
		return err
	}
	for _, rel := range last {
		if err := copyFile(filepath.Join(src, rel), filepath.Join(dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies src to dst, with its permissions, through a temporary
// file in dst's directory renamed into place, streaming (a run's metrics
// can be large).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	if st, serr := in.Stat(); err == nil && serr == nil {
		err = tmp.Chmod(st.Mode().Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// WriteAudit writes dir's audit.json (atomically): the audit report as
// indented JSON.
func WriteAudit(dir string, report any) error {
	b, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(dir, AuditFile), append(b, '\n'))
}

// Checkpoints lists the checkpoint directories in a run directory: every
// directory, dir itself or one down to three levels below it, that holds
// a file named index (the checkpoint's index file) — ModelsDir's node-I
// (the final models), a cluster run's node checkpoints — in walk order.
func Checkpoints(dir, index string) ([]string, error) {
	var out []string
	root := filepath.Clean(dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= 3 {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == index {
			out = append(out, filepath.Dir(p))
		}
		return nil
	})
	return out, err
}
