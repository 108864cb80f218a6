package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Shell completion: each shell's script asks strata itself for the
// candidates (`strata … --generate-bash-completion`), so commands, flags
// and the repository's stack names stay current.

const bashCompletion = `# strata completion for bash: source <(strata completion bash)
_strata_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local words=("${COMP_WORDS[@]:0:COMP_CWORD}")
  local opts
  if [[ "$cur" == -* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o default -F _strata_complete strata
`

const zshCompletion = `#compdef strata
# strata completion for zsh: source <(strata completion zsh)
_strata() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} $cur --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n "${opts[1]}" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _strata strata
`

// fishStacks completes --stack with the repository's stack names.
const fishStacks = `complete -c strata -l stack -x -a '(strata ls --stack --generate-bash-completion 2>/dev/null)'
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash: source <(strata completion bash)   zsh: source <(strata completion zsh)\n" +
			"fish: strata completion fish > ~/.config/fish/completions/strata.fish",
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash":
				fmt.Fprint(c.App.Writer, bashCompletion)
			case "zsh":
				fmt.Fprint(c.App.Writer, zshCompletion)
			case "fish":
				script, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				fmt.Fprint(c.App.Writer, script+fishStacks)
			default:
				return cli.Exit(fmt.Sprintf("strata completion %q: expected bash, zsh or fish", c.Args().First()), 1)
			}
			return nil
		},
	}
}

// argvKey is where the command line waits in the app's metadata, for
// completion to see the flag being completed.
const argvKey = "argv"

// completeStacks completes the value of --stack with the stack names, and
// anything else as urfave/cli does.
func completeStacks(cmd *cli.Command) func(*cli.Context) {
	fallback := cli.DefaultCompleteWithFlags(cmd)
	return func(c *cli.Context) {
		argv, _ := c.App.Metadata[argvKey].([]string)
		if n := len(argv); n >= 2 && argv[n-1] == "--generate-bash-completion" && (argv[n-2] == "--stack" || argv[n-2] == "-stack") {
			s, err := openProject(c)
			if err != nil {
				return
			}
			for _, st := range s.project.Stacks {
				fmt.Fprintln(c.App.Writer, st.Name)
			}
			return
		}
		fallback(c)
	}
}

// setCompletions gives every command with a --stack flag its completion.
func setCompletions(cmds []*cli.Command) {
	for _, cmd := range cmds {
		for _, f := range cmd.Flags {
			if contains(f.Names(), "stack") {
				cmd.BashComplete = completeStacks(cmd)
				break
			}
		}
		setCompletions(cmd.Subcommands)
	}
}
