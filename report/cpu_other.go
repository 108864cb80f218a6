//go:build !unix

package report

func cpuNow() *CPUReport { return nil }
