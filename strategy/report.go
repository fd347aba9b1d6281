package strategy

import "slices"

// Report is what a strategy or a node layer says about its round, carried
// by the round's node.Ready in one list: each reports its own fields, and
// a consumer (the metrics records) takes the kinds it knows. The node
// never looks inside.
type Report interface {
	// ReportKind names the report ("scores", "direction", "privacy", ...).
	ReportKind() string
}

// Reporter is a strategy that reports on its last Combine.
type Reporter interface {
	Reports() []Report
}

// Scores are the agreement scores a strategy gave the senders of a round
// (ScoreReporter's), as a Report.
type Scores []PeerScore

// ReportKind implements Report.
func (Scores) ReportKind() string { return "scores" }

// ReportKind implements Report: R-DPFL's neighbourhood direction of a
// round.
func (*RDPFLRound) ReportKind() string { return "direction" }

// scoresReport is the Reports of a ScoreReporter: its scores, copied (the
// strategy reuses its slice), none when it computed none.
func scoresReport(s []PeerScore) []Report {
	if s == nil {
		return nil
	}
	return []Report{Scores(slices.Clone(s))}
}

// Reports implements Reporter: the agreement scores of the last Combine.
func (d *DMTT) Reports() []Report { return scoresReport(d.scores) }

// Reports implements Reporter: the agreement scores of the last Combine.
func (m *Murmura) Reports() []Report { return scoresReport(m.scores) }

// Reports implements Reporter: the agreement scores of the last Combine.
func (l *Lightyear) Reports() []Report { return scoresReport(l.scores) }

// Reports implements Reporter: the neighbourhood direction of the last
// Combine.
func (s *RDPFL) Reports() []Report {
	last := s.stats
	return []Report{&last}
}
