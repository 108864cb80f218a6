package ci

import (
	"regexp"
	"strings"

	"github.com/strata-iac/strata/internal/git"
)

// InstallScript installs strata in a GitHub Actions job, as the emitted
// workflow and the action do (docs/ci.md#installing-strata-in-a-job): a
// release (vX.Y.Z) from its archive, checked against the release's
// checksums.txt before it runs; a commit with go install, which Go's
// module cache keeps. STRATA_RELEASES_URL replaces the releases' address
// (a mirror).
const InstallScript = `v="${STRATA_VERSION:-}"
if [ -z "$v" ]; then
  echo "::error::no strata version: give a release (v1.2.3) or a commit"
  exit 1
fi
case "$v" in
  v[0-9]*.[0-9]*.[0-9]*)
    os=$(uname -s | tr '[:upper:]' '[:lower:]')
    case "$(uname -m)" in
      x86_64 | amd64) arch=amd64 ;;
      aarch64 | arm64) arch=arm64 ;;
      *) echo "::error::no strata release for $(uname -m)"; exit 1 ;;
    esac
    archive="strata_${v#v}_${os}_${arch}.tar.gz"
    releases="${STRATA_RELEASES_URL:-https://github.com/strata-iac/strata/releases/download}"
    dir="${RUNNER_TEMP:-/tmp}/strata-$v"
    mkdir -p "$dir"
    cd "$dir" || exit 1
    curl -fsSLO "$releases/$v/$archive"
    curl -fsSLO "$releases/$v/checksums.txt"
    awk -v a="$archive" '$2 == a' checksums.txt > sum.txt
    if [ ! -s sum.txt ]; then
      echo "::error::checksums.txt of strata $v lists no $archive"
      exit 1
    fi
    sha256sum --check --strict sum.txt
    tar -xzf "$archive" strata
    echo "$dir" >> "$GITHUB_PATH"
    ;;
  *)
    go install -tags ` + installTags + ` "github.com/strata-iac/strata/cmd/strata@$v"
    ;;
esac
`

// releaseVersion is a version a release archive exists for; a commit is
// git.CommitPrefix.
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// DefaultStrataVersion is the strata-version an emitted workflow installs
// by default: the version of the strata that emitted it, when that is a
// release or a commit; "" for a development build (the workflow then
// asks for the input).
func DefaultStrataVersion(version string) string {
	v := strings.TrimSpace(version)
	if releaseVersion.MatchString(v) || git.CommitPrefix(v) {
		return v
	}
	return ""
}
