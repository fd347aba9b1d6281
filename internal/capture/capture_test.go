package capture

import (
	"fmt"
	"os"
	"testing"
)

func TestStdout(t *testing.T) {
	saved := os.Stdout
	got := Stdout(t, func() { fmt.Print("a table\n| 1 |\n") })
	if got != "a table\n| 1 |\n" {
		t.Fatalf("captured %q", got)
	}
	if os.Stdout != saved {
		t.Fatal("standard output not restored")
	}
}
