package data

import "testing"

// A coded dataset decoded whole holds, row for row, what CopyRow decodes,
// and shares the rest; a float32 dataset is its own decoded form.
func TestDecodedMatchesCopyRow(t *testing.T) {
	var levels [256]float32
	for i := range levels {
		levels[i] = (float32(i)/255 - 0.1307) / 0.3081
	}
	codes := []uint8{0, 1, 2, 255, 128, 7, 9, 200, 3, 4, 5, 6}
	d := &Dataset{Name: "coded", Codes: codes, Levels: &levels, Shape: []int{2, 2}, Y: []int{0, 1, 1}, Classes: []string{"a", "b"}, Rows: []int32{2, 0, 1}}
	dec := d.Decoded()
	if dec.Levels != nil || dec.Codes != nil || len(dec.X) != len(codes) {
		t.Fatalf("decoded: Levels %v, %d codes, %d values; want float32 values only, %d of them", dec.Levels != nil, len(dec.Codes), len(dec.X), len(codes))
	}
	row := make([]float32, 4)
	for i := range d.Len() {
		d.CopyRow(row, i)
		for k, v := range dec.Row(i) {
			if v != row[k] || v != levels[codes[int(d.Rows[i])*4+k]] {
				t.Fatalf("sample %d value %d: decoded %v, CopyRow %v, level %v", i, k, v, row[k], levels[codes[int(d.Rows[i])*4+k]])
			}
		}
	}
	if d.Codes == nil || d.Levels == nil {
		t.Fatal("Decoded changed the coded dataset")
	}
	plain := &Dataset{X: []float32{1, 2}, Shape: []int{1}, Y: []int{0, 1}}
	if plain.Decoded() != plain {
		t.Fatal("a float32 dataset's Decoded is not itself")
	}
}
