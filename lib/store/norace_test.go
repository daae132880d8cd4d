//go:build !race

package store

// raceDetector: the tests run with -race.
const raceDetector = false
