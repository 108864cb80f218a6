package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config file names, in order of preference.
const (
	StrataConfigFile    = "strata.yml"
	TerrateamConfigFile = ".terrateam/config.yml"
	// TerrateamConfigFileYAML is the other spelling Terrateam reads.
	TerrateamConfigFileYAML = ".terrateam/config.yaml"
)

// TerrateamConfigIn returns the Terrateam config file of dir, if any:
// .terrateam/config.yml or .terrateam/config.yaml, both being an error
// naming both, since either could be the one meant.
func TerrateamConfigIn(dir string) (string, error) {
	var found []string
	for _, name := range []string{TerrateamConfigFile, TerrateamConfigFileYAML} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("both %s and %s exist in %s; keep one", TerrateamConfigFile, TerrateamConfigFileYAML, dir)
}

// FindRoot returns the repository root for a start directory: the first
// directory walking up that holds strata.yml or .terrateam/config.yml, else
// the git top level, else start itself. configPath is the config file found,
// or "" when there is none.
func FindRoot(start string) (root, configPath string, err error) {
	start, err = filepath.Abs(start)
	if err != nil {
		return "", "", err
	}
	for dir := start; ; {
		if p := filepath.Join(dir, StrataConfigFile); isFile(p) {
			return dir, p, nil
		}
		p, err := TerrateamConfigIn(dir)
		if err != nil {
			return "", "", err
		}
		if p != "" {
			return dir, p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	out, err := exec.Command("git", "-C", start, "rev-parse", "--show-toplevel").Output()
	if err == nil {
		if top := strings.TrimSpace(string(out)); top != "" {
			return top, "", nil
		}
	}
	return start, "", nil
}

// MaxBytes bounds the size of a config file. Decoding costs memory
// many times the file's size (yaml's node tree alone is some hundred bytes a
// value), and the largest real configs, one entry per dir of a big
// monorepo, stay well under a megabyte.
const MaxBytes = 2 << 20

// Parse decodes config bytes. file is used in diagnostics only. The
// returned diagnostics hold every error and warning found; the Config is
// usable only when none is an error.
func Parse(file string, data []byte) (*Config, Diagnostics) {
	c := &Collector{File: file}
	cfg := &Config{}
	if len(data) > MaxBytes {
		c.Errorf(Pos{}, "", "the config is %s; expected at most %s", sizeText(int64(len(data))), sizeText(MaxBytes))
		return cfg, c.Diags
	}
	doc, err := readDocument(data, c)
	if err != nil {
		pos, msg := yamlErrorPos(err), yamlErrorMessage(err)
		if at, ok := overIndented(data, pos.Line); ok {
			pos, msg = at.pos, fmt.Sprintf("%s: line %d "+at.why+"; expected it at the indentation of its siblings", msg, at.pos.Line, at.prev)
		}
		c.Errorf(pos, "", "%s", msg)
		return cfg, c.Diags
	}
	if c.Diags.HasErrors() {
		return cfg, c.Diags
	}
	if doc == nil {
		return cfg, c.Diags
	}
	d := &decoder{Collector: c}
	d.decode(doc.Content[0], reflectValue(cfg), "")
	if d.exhausted {
		// What was decoded is a part of the config, arbitrary in extent:
		// checking it would report values missing that are only undecoded.
		c.Diags = c.Diags[:d.exhaustedAt]
		c.Diags.Sort()
		return &Config{}, c.Diags
	}
	checkConfig(cfg, c)
	c.Diags.Sort()
	return cfg, c.Diags
}

// readDocument parses the one document of a config, nil when the file
// holds none. yaml.Unmarshal reads the first document of a stream and never
// looks at the rest, so a config continued after a "---" line would lose
// everything below it without a word; every document is read here, and a
// second one with content is an error at its start. Empty documents are
// skipped: a "---" before the config or a trailing one with nothing after
// is how many editors and generators write a single YAML document.
func readDocument(data []byte, c *Collector) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first *yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return first, nil
		}
		if err != nil {
			return nil, err
		}
		if emptyDocument(&doc) {
			continue
		}
		if first == nil {
			first = &doc
			continue
		}
		c.Errorf(posOf(&doc), "", "a second YAML document starts here; one document expected (the config starts at line %d: merge the two, or remove the document marker)", first.Content[0].Line)
		return first, nil
	}
}

// emptyDocument reports whether doc holds nothing: no content, or only the
// implicit null of a bare "---" (an explicit `~` or `null` is content).
func emptyDocument(doc *yaml.Node) bool {
	if len(doc.Content) == 0 {
		return true
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Anchor == "" &&
		n.Style&yaml.TaggedStyle == 0
}

// Load reads and decodes a config file; a missing path yields the
// empty config.
func Load(path, displayName string) (*Config, Diagnostics, error) {
	if path == "" {
		return &Config{}, nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// One byte past the limit is enough for Parse to refuse the file,
	// whatever its size.
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxBytes {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			c := &Collector{File: displayName}
			c.Errorf(Pos{}, "", "the config is %s; expected at most %s", sizeText(st.Size()), sizeText(MaxBytes))
			return &Config{}, c.Diags, nil
		}
	}
	cfg, diags := Parse(displayName, data)
	return cfg, diags, nil
}

// OverBudget reports whether the config file at path is larger than a
// config may be (Load refuses it).
func OverBudget(path string) bool {
	if path == "" {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Size() > MaxBytes
}

// sizeText writes a size in bytes for a message.
func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	}
	return fmt.Sprintf("%d bytes", n)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

func yamlErrorPos(err error) Pos {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return Pos{}
	}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		// yaml's parser (unlike its scanner) reports the 0-based line of the
		// problem; its messages are these.
		rest := err.Error()[len(m[0]):]
		for _, p := range []string{"did not find expected <document start>", "did not find expected node content",
			"did not find expected '-' indicator", "did not find expected key", "did not find expected ',' or"} {
			if strings.HasPrefix(rest, p) {
				line++
				break
			}
		}
		return Pos{Line: line, Col: 1}
	}
	return Pos{Line: 1, Col: 1}
}

// indentation is where overIndented found a line indented out of its
// place: at pos, after line prev.
type indentation struct {
	pos  Pos
	prev int
	why  string
}

// overIndented finds, from the line where YAML's parser stopped (from,
// 1-based) on, the first line indented out of place: more than the
// meaningful line before it when that line opens no block (a key with a
// value, a list item with one, a closed flow), or back to an indentation
// no line above it has. The parser reports such a mistake at the mapping
// it was in, lines before. It looks only a few lines on, and never into
// block scalars (| and >), whose lines may indent as they like.
func overIndented(data []byte, from int) (indentation, bool) {
	lines := strings.Split(string(data), "\n")
	const lookAhead = 8
	prev, prevOpens := 0, true
	var levels []int // the indentations of the blocks the line is in
	inScalar, scalarIndent := false, 0
	for i, l := range lines {
		n := i + 1
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if inScalar && indent > scalarIndent {
			continue
		}
		inScalar = false
		top := -1
		if len(levels) > 0 {
			top = levels[len(levels)-1]
		}
		switch {
		case indent > top && prev > 0 && !prevOpens:
			if n >= from {
				return indentation{pos: Pos{Line: n, Col: indent + 1}, prev: prev, why: "is indented more than line %d before it, which opens no block"}, true
			}
		case indent > top:
			levels = append(levels, indent)
		default:
			for len(levels) > 0 && levels[len(levels)-1] > indent {
				levels = levels[:len(levels)-1]
			}
			if (len(levels) == 0 || levels[len(levels)-1] != indent) && n >= from {
				return indentation{pos: Pos{Line: n, Col: indent + 1}, prev: prev, why: "is indented to no level of the lines before it (line %d is the last)"}, true
			}
		}
		if n >= from+lookAhead {
			break
		}
		body := trimmed
		if k := strings.Index(body, " #"); k >= 0 {
			body = strings.TrimSpace(body[:k])
		}
		prev = n
		// A line opens a block when it ends a key or a list item with no
		// value yet, starts a block scalar, or leaves a flow open.
		prevOpens = strings.HasSuffix(body, ":") || body == "-" || strings.HasSuffix(body, ",") ||
			strings.Count(body, "[") > strings.Count(body, "]") || strings.Count(body, "{") > strings.Count(body, "}")
		for _, ind := range []string{"|", ">", "|-", ">-", "|+", ">+"} {
			if strings.HasSuffix(body, " "+ind) || body == ind {
				prevOpens, inScalar, scalarIndent = true, true, indent
			}
		}
		if strings.HasPrefix(body, "- ") {
			// A list item's own keys sit past its dash.
			prevOpens = true
		}
	}
	return indentation{}, false
}

func yamlErrorMessage(err error) string {
	msg := yamlLineRE.ReplaceAllString(err.Error(), "")
	msg = strings.TrimPrefix(msg, "yaml: ")
	return fmt.Sprintf("invalid YAML: %s", msg)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
