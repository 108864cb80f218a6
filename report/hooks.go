package report

import "fmt"

// HooksReport is what the hooks did: each step that ran, and the first
// failure, which fails the command.
type HooksReport struct {
	Steps []StepReport `json:"steps"`
	Error string       `json:"error,omitempty"`
}

// SetHooks records the hooks that ran; a failure fails the command.
func (rep *Report) SetHooks(steps []StepReport, err error) {
	if len(steps) == 0 && err == nil {
		return
	}
	rep.Hooks = &HooksReport{Steps: steps}
	if err != nil {
		rep.Hooks.Error = err.Error()
		if rep.ExitCode == 0 || rep.ExitCode == 2 {
			rep.ExitCode, rep.OK = 1, false
		}
	}
}

// hookFailure is the summary's line for a failed hook, or "".
func (rep *Report) hookFailure(limit int) string {
	if rep.Hooks == nil || rep.Hooks.Error == "" {
		return ""
	}
	e, _ := cutText(rep.Hooks.Error, limit, false)
	return fmt.Sprintf("**A hook failed.**\n\n```\n%s\n```\n\n", fence(e))
}
