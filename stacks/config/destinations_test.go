package config

import "testing"

func TestRunsFor(t *testing.T) {
	t.Parallel()
	cfg, diags := Parse("strata.yml", []byte("destination_branches:\n  - main\n  - branch: 'release/*'\n    source_branches: ['hotfix/*', 'main']\n"))
	if diags.HasErrors() {
		t.Fatal(diagText(diags))
	}
	none, _ := Parse("strata.yml", []byte("destination_branches:\n"))
	tests := []struct {
		cfg          *Config
		dest, source string
		want         bool
	}{
		{cfg, "main", "feature/x", true},
		{cfg, "release/1.2", "hotfix/db", true},
		{cfg, "release/1.2", "feature/x", false},
		{cfg, "develop", "feature/x", false},
		{none, "develop", "feature/x", true},
		{&Config{}, "anything", "else", true},
	}
	for _, tt := range tests {
		if got := tt.cfg.RunsFor(tt.dest, tt.source); got != tt.want {
			t.Errorf("%s <- %s: %t, want %t", tt.dest, tt.source, got, tt.want)
		}
	}
}
