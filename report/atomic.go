package report

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes the file at path atomically: write fills a temporary
// file in path's directory, which is synced and renamed over path only if
// write and every step after it succeed. Readers, and a run interrupted at
// any point, see either the previous file or the complete new one; on
// failure the temporary file is removed. The new file has mode 0644.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
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
	if err := f.Chmod(0o644); err != nil {
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
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		done = true
		return err
	}
	done = true
	return nil
}
