package rundir

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

// recordFiles are the record files whose SHA-256 a finished run's manifest
// keeps (Manifest.Records), to tell a finished run from one whose records
// were edited or cut short since; steps.jsonl only in an asynchronous run.
var recordFiles = []string{MetricsFile, RoundsFile, StepsFile}

// recordDigests is the SHA-256 of each of dir's record files, in hex, and
// of steps.jsonl when there is one (an asynchronous run).
func recordDigests(dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range recordFiles {
		d, err := Digest(dir, name)
		if name == StepsFile && errors.Is(err, os.ErrNotExist) {
			continue // a run in rounds
		}
		if err != nil {
			return nil, err
		}
		out[name] = hex.EncodeToString(d[:])
	}
	return out, nil
}

// VerifyFinished checks that the records of dir's finished run are those
// the run wrote: each file's SHA-256 against man.Records, or for a
// manifest of an older trellis (no digests) rounds.jsonl's whole round
// records (as Verify reads them) against the rounds it finished. An error names the file and says what
// to do; a finished run is then never kept as it is.
func VerifyFinished(dir string, man Manifest) error {
	changed := func(name, what string) error {
		return fmt.Errorf("%s: the finished run's %s %s: it changed since the run (edited, truncated or removed); --force redoes the run, or use another output directory",
			dir, name, what)
	}
	if len(man.Records) == 0 {
		rounds, err := verifyRounds(dir, true)
		if err != nil {
			return err
		}
		if len(rounds) != man.Rounds {
			return changed(RoundsFile, fmt.Sprintf("holds %d complete lines for the %d rounds the run finished", len(rounds), man.Rounds))
		}
		return nil
	}
	for _, name := range recordFiles {
		want, ok := man.Records[name]
		if !ok {
			continue
		}
		d, err := Digest(dir, name)
		if errors.Is(err, os.ErrNotExist) {
			return changed(name, "is missing")
		}
		if err != nil {
			return changed(name, "cannot be read: "+err.Error())
		}
		if got := hex.EncodeToString(d[:]); got != want {
			return changed(name, fmt.Sprintf("has SHA-256 %.12s…, not the %.12s… the run recorded in %s", got, want, ManifestFile))
		}
	}
	return nil
}
