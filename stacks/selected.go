package stacks

// LoadOption changes how a project is loaded.
type LoadOption func(*loadOptions)

type loadOptions struct {
	selected map[string]string
}

// WithSelectedWorkspace makes workspace ws of dir a dirspace when the
// config declares no workspaces for dir: the workspace terraform has
// selected there, for a drop-in command run in the dir
// (docs/behaviour.md#workspaces-in-drop-in). A dir that declares its
// workspaces keeps them.
func WithSelectedWorkspace(dir, ws string) LoadOption {
	return func(o *loadOptions) {
		if o.selected == nil {
			o.selected = map[string]string{}
		}
		o.selected[cleanDir(dir)] = ws
	}
}
