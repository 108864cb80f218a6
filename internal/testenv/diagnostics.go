package testenv

// CLIConfigWarning is what terraform prints on stderr in every call when
// TF_CLI_CONFIG_FILE names a file that does not exist.
const CLIConfigWarning = `There are some problems with the CLI configuration:
╷
│ Warning: Unable to open CLI configuration file
│
│ The CLI configuration file at "/home/ci/.terraformrc" does not exist.
╵

`
