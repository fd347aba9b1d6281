//go:build !amd64 || purego

package nn

func winoVector() bool { return false }

func winoInputVec([]float32, int, []float32, int)           { panic("unreachable") }
func winoInputGradVec([]float32, int, []float32, int)       { panic("unreachable") }
func winoOutputVec([]float32, int, []float32, int, float32) { panic("unreachable") }
func winoOutputGradVec([]float32, int, []float32, int)      { panic("unreachable") }
func winoFilterVec([]float32, int, []float32)               { panic("unreachable") }
func winoFilterGradVec([]float32, []float32, int)           { panic("unreachable") }

func winoPairs() bool { return false }

func winoInputPairVec([]float32, int, []float32, int, int)           { panic("unreachable") }
func winoOutputPairVec([]float32, int, int, []float32, int, float32) { panic("unreachable") }
func winoOutputGradPairVec([]float32, int, []float32, int, int)      { panic("unreachable") }
