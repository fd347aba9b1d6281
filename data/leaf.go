package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// LEAF JSON (Caldas et al. 2018, https://github.com/TalwalkarLab/leaf): one
// object {"users": [...], "num_samples": [...], "user_data": {user: {"x":
// [[...], ...], "y": [...]}}} per file. Only numeric samples are supported
// (FEMNIST, synthetic); each sample keeps its user (the writer, for FEMNIST)
// as its group, which the natural partition uses. Values are used as given:
// FEMNIST pixels are already in [0, 1], with 1.0 the white background (the
// opposite polarity of MNIST).

const femnistHint = "generate FEMNIST with LEAF (https://github.com/TalwalkarLab/leaf, data/femnist: " +
	"./preprocess.sh -s niid --sf 0.05 -k 0 -t sample) and pass its data directory " +
	"(holding train/ and test/, or all_data/)"

// LEAFOptions describes the samples of a LEAF dataset.
type LEAFOptions struct {
	Shape   []int    // per-sample shape; nil means [length of the first x]
	Classes []string // class names; nil means "0".."max label"
}

// FEMNISTOptions returns the LEAF options of FEMNIST: 28×28 grayscale
// images, 62 classes (digits, upper-case, lower-case letters).
func FEMNISTOptions() LEAFOptions {
	var classes []string
	for _, r := range []struct{ lo, hi byte }{{'0', '9'}, {'A', 'Z'}, {'a', 'z'}} {
		for c := r.lo; c <= r.hi; c++ {
			classes = append(classes, string(rune(c)))
		}
	}
	return LEAFOptions{Shape: []int{1, 28, 28}, Classes: classes}
}

// ReadLEAF decodes one LEAF JSON file.
func ReadLEAF(r io.Reader, name string, opt LEAFOptions) (*Dataset, error) {
	b := newLEAFBuilder(name, opt)
	if err := b.add(r, name); err != nil {
		return nil, err
	}
	return b.finish()
}

// LoadLEAF loads and concatenates LEAF JSON files, in the order given; a
// user appearing in several files keeps one group.
func LoadLEAF(name string, paths []string, opt LEAFOptions) (*Dataset, error) {
	b := newLEAFBuilder(name, opt)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		err = b.add(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// LoadFEMNIST loads LEAF's FEMNIST from dir: train/*.json and test/*.json
// when present (LEAF's sample split), otherwise all_data/*.json or *.json
// as a training set only (Test nil). Files are read in sorted name order.
func LoadFEMNIST(dir string) (TrainTest, error) {
	glob := func(sub string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		slices.Sort(m)
		return m
	}
	opt := FEMNISTOptions()
	if train, test := glob("train"), glob("test"); len(train) > 0 && len(test) > 0 {
		tr, err := LoadLEAF("FEMNIST/train", train, opt)
		if err != nil {
			return TrainTest{}, err
		}
		te, err := LoadLEAF("FEMNIST/test", test, opt)
		if err != nil {
			return TrainTest{}, err
		}
		return TrainTest{Train: tr, Test: te}, nil
	}
	for _, sub := range []string{"all_data", ""} {
		if files := glob(sub); len(files) > 0 {
			d, err := LoadLEAF("FEMNIST", files, opt)
			return TrainTest{Train: d}, err
		}
	}
	return TrainTest{}, &NotFoundError{Dataset: "FEMNIST", Hint: femnistHint, Tried: []string{
		filepath.Join(dir, "train", "*.json") + " with " + filepath.Join(dir, "test", "*.json"),
		filepath.Join(dir, "all_data", "*.json"), filepath.Join(dir, "*.json")}}
}

// maxLEAFClasses bounds labels when no class list is given, so a corrupt
// label cannot make a huge class list.
const maxLEAFClasses = 1 << 16

type leafBuilder struct {
	d        *Dataset
	opt      LEAFOptions
	rowLen   int
	groups   map[string]int32
	maxLabel int
}

func newLEAFBuilder(name string, opt LEAFOptions) *leafBuilder {
	b := &leafBuilder{d: &Dataset{Name: name}, opt: opt, groups: map[string]int32{}, maxLabel: -1}
	if opt.Shape != nil {
		b.d.Shape = slices.Clone(opt.Shape)
		b.rowLen = b.d.RowLen()
	}
	return b
}

type leafUser struct {
	X [][]float32 `json:"x"`
	Y []int       `json:"y"`
}

func (b *leafBuilder) add(r io.Reader, name string) error {
	r, gz, err := maybeGunzip(r, name)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(r)
	fail := func(format string, args ...any) error {
		return &FormatError{Path: name, Offset: dec.InputOffset(), Gzip: gz, Msg: fmt.Sprintf(format, args...)}
	}
	wrap := func(what string, err error) error {
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &FormatError{Path: name, Offset: off, Gzip: gz, Msg: "truncated JSON " + what}
		}
		return &FormatError{Path: name, Offset: off, Gzip: gz, Msg: "bad " + what, Err: err}
	}
	expectDelim := func(want json.Delim, what string) error {
		t, err := dec.Token()
		if err != nil {
			return wrap(what, err)
		}
		if d, ok := t.(json.Delim); !ok || d != want {
			return fail("%s: expected %q, found %v", what, want, t)
		}
		return nil
	}
	if err := expectDelim('{', "top level"); err != nil {
		return err
	}
	var users []string
	var numSamples []int
	var haveUsers, haveNum bool
	seen := map[string]int{} // user -> samples in this file
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return wrap("key", err)
		}
		key, _ := t.(string)
		switch key {
		case "users":
			haveUsers = true
			if err := dec.Decode(&users); err != nil {
				return wrap(`"users"`, err)
			}
		case "num_samples":
			haveNum = true
			if err := dec.Decode(&numSamples); err != nil {
				return wrap(`"num_samples"`, err)
			}
		case "user_data":
			if err := expectDelim('{', `"user_data"`); err != nil {
				return err
			}
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					return wrap(`"user_data" key`, err)
				}
				user, _ := t.(string)
				if _, dup := seen[user]; dup {
					return fail("user %q appears twice in user_data", truncate([]byte(user)))
				}
				var u leafUser
				if err := dec.Decode(&u); err != nil {
					return wrap(fmt.Sprintf("data of user %q", truncate([]byte(user))), err)
				}
				if err := b.addUser(user, &u, fail); err != nil {
					return err
				}
				seen[user] = len(u.Y)
			}
			if err := expectDelim('}', `end of "user_data"`); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return wrap(fmt.Sprintf("value of %q", truncate([]byte(key))), err)
			}
		}
	}
	if err := expectDelim('}', "end of top level"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("trailing data after the top-level object")
	}
	if haveUsers && haveNum {
		if len(users) != len(numSamples) {
			return fail("%d users but %d num_samples", len(users), len(numSamples))
		}
		for i, u := range users {
			if n, ok := seen[u]; !ok || n != numSamples[i] {
				return fail("user %q: num_samples says %d, user_data holds %d", truncate([]byte(u)), numSamples[i], n)
			}
		}
		if len(seen) != len(users) {
			return fail("user_data holds %d users, users lists %d", len(seen), len(users))
		}
	}
	return nil
}

func (b *leafBuilder) addUser(user string, u *leafUser, fail func(string, ...any) error) error {
	if len(u.X) != len(u.Y) {
		return fail("user %q: %d samples in x but %d labels in y", truncate([]byte(user)), len(u.X), len(u.Y))
	}
	g, ok := b.groups[user]
	if !ok {
		g = int32(len(b.d.GroupNames))
		b.groups[user] = g
		b.d.GroupNames = append(b.d.GroupNames, user)
	}
	for i, x := range u.X {
		if b.rowLen == 0 {
			if len(x) == 0 {
				return fail("user %q: sample %d is empty", truncate([]byte(user)), i)
			}
			b.rowLen = len(x)
			b.d.Shape = []int{len(x)}
		}
		if len(x) != b.rowLen {
			return fail("user %q: sample %d has %d values; expected %d (shape %v)", truncate([]byte(user)), i, len(x), b.rowLen, b.d.Shape)
		}
		y, bound := u.Y[i], maxLEAFClasses
		if b.opt.Classes != nil {
			bound = len(b.opt.Classes)
		}
		if y < 0 || y >= bound {
			return fail("user %q: sample %d has label %d outside [0, %d)", truncate([]byte(user)), i, y, bound)
		}
		b.maxLabel = max(b.maxLabel, y)
		b.d.X = append(b.d.X, x...)
		b.d.Y = append(b.d.Y, y)
		b.d.Groups = append(b.d.Groups, g)
	}
	return nil
}

func (b *leafBuilder) finish() (*Dataset, error) {
	d := b.d
	if d.Len() == 0 {
		return nil, whole(d.Name, "no samples")
	}
	if b.opt.Classes != nil {
		d.Classes = slices.Clone(b.opt.Classes)
	} else {
		for c := 0; c <= b.maxLabel; c++ {
			d.Classes = append(d.Classes, strconv.Itoa(c))
		}
	}
	d.Norm = Normalization{Desc: "as given in the LEAF files"}
	return d, nil
}
