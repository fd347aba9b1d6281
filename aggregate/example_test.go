package aggregate_test

import (
	"fmt"

	"github.com/trellis-fl/trellis/aggregate"
)

// Example combines five two-coordinate vectors, the last of which carries
// an outlier in its second coordinate. Per coordinate the values are
// {3, 1, 4, 1, 5} and {2, 7, 1, 8, 100}: the mean is (14/5, 118/5), which
// the outlier drags to 23.6; the median is the middle value (3, 7); the
// trimmed mean with f = 1 drops the smallest and the largest value and
// averages the other three, (8/3, 17/3).
func Example() {
	xs := [][]float32{{3, 2}, {1, 7}, {4, 1}, {1, 8}, {5, 100}}
	dst := make([]float32, 2)
	for _, name := range []string{"mean", "median", "trimmed_mean"} {
		rule, err := aggregate.New(name, 1) // tolerate f = 1 faulty input (the mean and median take no f)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := rule.Aggregate(dst, xs); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-12s %.4f\n", name, dst)
	}
	// Output:
	// mean         [2.8000 23.6000]
	// median       [3.0000 7.0000]
	// trimmed_mean [2.6667 5.6667]
}

// ExampleSelector asks the median which inputs it used: input 0 holds the
// median of the first coordinate (3) and input 1 that of the second (7),
// so each gets half the weight and the outlier none.
func ExampleSelector() {
	rule, err := aggregate.New("median", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	dst := make([]float32, 2)
	if err := rule.Aggregate(dst, [][]float32{{3, 2}, {1, 7}, {4, 1}, {1, 8}, {5, 100}}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rule.(aggregate.Selector).Weights())
	// Output: [0.5 0.5 0 0 0]
}
