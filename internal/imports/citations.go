package imports

import "regexp"

// OutsideCitation matches a pointer to something a reader of the
// repository cannot open:
//   - a path to one of the team's method write-ups under spec/ (the papers
//     are cited by section, equation or algorithm instead, or the
//     repository's docs/methods pages);
//   - an issue number, with or without a space, hyphen or hash before it,
//     singular or plural;
//   - an issue's acceptance list or review list by number ("acceptance"
//     or "acceptance item" followed by a number, "found item" followed by
//     one, and test names "TestFound" followed by one).
//
// It does not match "Specification", "the spec" as a config value, RFC
// numbers, or "issue"/"acceptance" as English words not followed by a
// number ("the acceptance rule of Algorithm 2", "acceptance bound 10^-4").
// TestOutsideCitationPattern pins examples of both. The repository-wide
// test (TestNothingCitesOutsideTheRepository) and the presets' lint
// (package configs) read it.
var OutsideCitation = regexp.MustCompile(
	`spec/[a-z0-9-]+\.md` +
		`|\b[Ii]ssues?[ -]?#?[0-9]+` +
		`|\b[Aa]cceptance (?:item )?[0-9]` +
		`|\b[Ff]ound item [0-9]` +
		`|\bTestFound[0-9]`)
