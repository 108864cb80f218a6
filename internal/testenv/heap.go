package testenv

import (
	"runtime"
	"time"
)

// HeapWatch samples the heap in use (runtime.MemStats.HeapInuse: the
// spans that hold objects, live or not yet swept, so fragmentation
// included) while a benchmark's operation runs, for the peak the
// operation brought it to.
type HeapWatch struct {
	base uint64
	stop chan struct{}
	peak chan uint64
}

// WatchHeap collects garbage, notes the heap in use as the base and samples
// it every 2 ms until Stop.
func WatchHeap() *HeapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := &HeapWatch{base: ms.HeapInuse, stop: make(chan struct{}), peak: make(chan uint64)}
	go func() {
		peak := ms.HeapInuse
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				runtime.ReadMemStats(&ms)
				h.peak <- max(peak, ms.HeapInuse)
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	return h
}

// Base returns the heap in use when the watch began, in bytes: after a
// collection, what the process held alive.
func (h *HeapWatch) Base() uint64 { return h.base }

// Stop ends the sampling and returns the highest heap in use seen above
// the base, in bytes.
func (h *HeapWatch) Stop() uint64 {
	close(h.stop)
	return <-h.peak - h.base
}
