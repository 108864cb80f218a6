package report

// CPUReport is the CPU time a command had used when its report was made:
// strata's own process, and the processes it started and waited for
// (engines, run steps, git). Their ratio is what strata itself costs
// beside the work it runs (docs/architecture.md#what-a-command-costs).
type CPUReport struct {
	OwnMS      int64 `json:"own_ms"`
	ChildrenMS int64 `json:"children_ms"`
}

// SetCPU sets the report's CPU time from the system's count of it, at
// this point of the command; none where the system does not say.
func (rep *Report) SetCPU() {
	rep.CPU = cpuNow()
}
