module github.com/trellis-fl/trellis

go 1.26
