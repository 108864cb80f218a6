package config

// diagText lists diagnostics one a line, for a test's failure message.
func diagText(ds Diagnostics) string {
	s := ""
	for _, d := range ds {
		s += "  " + d.String() + "\n"
	}
	return s
}
