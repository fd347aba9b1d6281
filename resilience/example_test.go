package resilience_test

import (
	"log"
	"os"

	"github.com/trellis-fl/trellis/resilience"
)

// What `trellis bench rules` does: every rule and chain under the standard
// attacks, written as Markdown.
func ExampleTable() {
	cfg := resilience.DefaultConfig()
	rules, err := resilience.StandardRules(cfg)
	if err != nil {
		log.Fatal(err)
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
