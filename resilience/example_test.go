package resilience_test

import (
	"log"
	"os"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/resilience"
)

// What `trellis bench rules` does: every rule under the standard attacks,
// written as Markdown.
func ExampleTable() {
	cfg := resilience.DefaultConfig()
	var rules []aggregate.Rule
	for _, name := range aggregate.Names() {
		r, err := aggregate.New(name, cfg.F)
		if err != nil {
			log.Fatal(err)
		}
		rules = append(rules, r)
	}
	attacks, err := resilience.StandardAttacks(cfg)
	if err != nil {
		log.Fatal(err)
	}
	res, err := resilience.Table(rules, attacks, cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := res.WriteMarkdown(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
