package reads

import (
	"fmt"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	const root = "/repo"
	type want struct {
		reads []string // "func path" or "fileset glob", at their line:col
		probs []string // "kind line:col"
	}
	tests := []struct {
		name, file, src string
		dir, rootDir    string
		want            want
	}{
		{name: "literal", file: "main.tf", dir: "net", rootDir: "net",
			src:  `locals { a = file("policy.json") }`,
			want: want{reads: []string{"file net/policy.json 1:14"}}},
		{name: "path.module template", file: "main.tf", dir: "net", rootDir: "net",
			src:  "locals {\n  a = jsondecode(file(\"${path.module}/../shared/net.json\"))\n}",
			want: want{reads: []string{"file shared/net.json 2:18"}}},
		{name: "path.root and path.cwd", file: "main.tf", dir: "modules/m", rootDir: "app",
			src:  "locals {\n  a = filebase64(\"${path.root}/x.bin\")\n  b = filesha256(\"${path.cwd}/y\")\n  c = filemd5(join(\"/\", [path.module, \"z\"]))\n}",
			want: want{reads: []string{"filebase64 app/x.bin 2:7", "filesha256 app/y 3:7", "filemd5 modules/m/z 4:7"}}},
		{name: "format", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = filesha1(format("%s/%s.txt", path.module, "n")) }`,
			want: want{reads: []string{"filesha1 a/n.txt 1:14"}}},
		{name: "templatefile with vars", file: "main.tf", dir: "modules/render", rootDir: "tpl",
			src:  `output "x" { value = templatefile("${path.module}/body.tpl", { name = var.name }) }`,
			want: want{reads: []string{"templatefile modules/render/body.tpl 1:22"}}},
		{name: "fileexists and filesha512", file: "main.tf", dir: ".", rootDir: ".",
			src:  `locals { a = fileexists("x") ? filesha512("x") : "" }`,
			want: want{reads: []string{"fileexists x 1:14", "filesha512 x 1:32"}}},
		{name: "fileset", file: "main.tf", dir: "web", rootDir: "web",
			src:  `resource "x" "y" { for_each = fileset("${path.module}/files", "**/*.html") }`,
			want: want{reads: []string{"fileset web/files/**/*.html 1:31"}}},
		{name: "fileset dir with metacharacters", file: "main.tf", dir: "w[1]", rootDir: "w[1]",
			src:  `locals { a = fileset(path.module, "*.json") }`,
			want: want{reads: []string{`fileset w\[1\]/*.json 1:14`}}},
		{name: "variable path", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = file(var.path) }`,
			want: want{probs: []string{"unresolved 1:14"}}},
		{name: "for_each value", file: "main.tf", dir: "a", rootDir: "a",
			src:  "resource \"x\" \"y\" {\n  for_each = toset(var.names)\n  body = file(\"${path.module}/${each.value}\")\n}",
			want: want{probs: []string{"unresolved 3:10"}}},
		{name: "other function", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = file(abspath("x")) }`,
			want: want{probs: []string{"unresolved 1:14"}}},
		{name: "expanded arguments", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = file(local.args...) }`,
			want: want{probs: []string{"unresolved 1:14"}}},
		{name: "outside the repository", file: "main.tf", dir: "a", rootDir: "a",
			src:  "locals {\n  a = file(\"../../etc/passwd\")\n  b = file(\"/etc/hosts\")\n}",
			want: want{probs: []string{"outside 2:7", "outside 3:7"}}},
		{name: "absolute inside", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = file("/repo/b/c") }`,
			want: want{reads: []string{"file b/c 1:14"}}},
		{name: "fileset pattern leaving the dir", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = fileset(path.module, "../*") }`,
			want: want{probs: []string{"outside 1:14"}}},
		{name: "nested call", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = file(file("name.txt")) }`,
			want: want{reads: []string{"file a/name.txt 1:19"}, probs: []string{"unresolved 1:14"}}},
		{name: "provider functions and other names are not reads", file: "main.tf", dir: "a", rootDir: "a",
			src:  "locals {\n  a = provider::x::file(\"y\")\n  b = filebase64sha256(\"z\")\n  c = fileexistsx(\"w\")\n}",
			want: want{reads: []string{"filebase64sha256 a/z 3:7"}}},
		{name: "nested blocks", file: "main.tf", dir: "a", rootDir: "a",
			src:  "resource \"x\" \"y\" {\n  dynamic \"b\" {\n    content { v = file(\"in.txt\") }\n  }\n}",
			want: want{reads: []string{"file a/in.txt 3:19"}}},
		{name: "json", file: "main.tf.json", dir: "j", rootDir: "j",
			src:  "{\n  \"locals\": {\n    \"file\": \"${file(\\\"${path.module}/data.json\\\")}\",\n    \"n\": [1, \"${fileset(path.module, \\\"*.txt\\\")}\"]\n  }\n}",
			want: want{reads: []string{"file j/data.json 3:16", "fileset j/*.txt 4:17"}}},
		{name: "json key is not a template", file: "main.tf.json", dir: "j", rootDir: "j",
			src: `{"${file(\"k\")}": "v"}`},
		{name: "invalid syntax", file: "main.tf", dir: "a", rootDir: "a",
			src:  `locals { a = file("x"`,
			want: want{probs: []string{"unparsed 1:14"}}},
		{name: "too deep", file: "main.tf", dir: "a", rootDir: "a",
			src:  "locals { a = file(" + strings.Repeat("(", 300) + `"x"` + strings.Repeat(")", 300) + ") }",
			want: want{probs: []string{"unparsed 0:0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := tc.file
			if tc.dir != "." {
				file = tc.dir + "/" + tc.file
			}
			calls, prob := ParseFile(file, []byte(tc.src))
			m := &Module{Dir: tc.dir, Calls: calls}
			if prob != nil {
				m.Skipped = append(m.Skipped, *prob)
			}
			reads, probs := m.Resolve(root, tc.rootDir)
			probs = append(probs, m.Skipped...)
			var got want
			for _, r := range reads {
				if r.Pos.File != file {
					t.Errorf("read %v in file %q, want %q", r, r.Pos.File, file)
				}
				got.reads = append(got.reads, fmt.Sprintf("%s %s %d:%d", r.Func, r.Path, r.Pos.Line, r.Pos.Col))
			}
			for _, p := range probs {
				if p.Msg == "" {
					t.Errorf("problem %v has no message", p)
				}
				got.probs = append(got.probs, fmt.Sprintf("%s %d:%d", []string{"unresolved", "outside", "unparsed"}[p.Kind], p.Pos.Line, p.Pos.Col))
			}
			if fmt.Sprint(got.reads) != fmt.Sprint(tc.want.reads) {
				t.Errorf("reads = %q, want %q", got.reads, tc.want.reads)
			}
			if fmt.Sprint(got.probs) != fmt.Sprint(tc.want.probs) {
				t.Errorf("problems = %q, want %q", got.probs, tc.want.probs)
			}
		})
	}
}

func TestReadMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		read Read
		file string
		want bool
	}{
		{Read{Path: "a/b.json"}, "a/b.json", true},
		{Read{Path: "a/b.json"}, "a/b.jsonx", false},
		{Read{Path: "web/files/**/*.html", Glob: true}, "web/files/x/y.html", true},
		{Read{Path: "web/files/**/*.html", Glob: true}, "web/other/y.html", false},
		{Read{Path: `w\[1\]/*.json`, Glob: true}, "w[1]/a.json", true},
	}
	for _, tc := range tests {
		if got := tc.read.Match(tc.file); got != tc.want {
			t.Errorf("%v.Match(%q) = %v, want %v", tc.read, tc.file, got, tc.want)
		}
	}
}

func TestRelPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ from, dir, want string }{
		{".", ".", "."},
		{"app", "app", "."},
		{"app", "modules/x", "../modules/x"},
		{"a/b", "a/c", "../c"},
		{".", "m", "m"},
		{"a", ".", ".."},
	}
	for _, tc := range tests {
		if got := relPath(tc.from, tc.dir); got != tc.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", tc.from, tc.dir, got, tc.want)
		}
	}
}

// FuzzReads parses arbitrary native and JSON syntax and resolves what it
// finds: neither may panic, and every read stays inside the repository.
func FuzzReads(f *testing.F) {
	f.Add(`locals { a = file("${path.module}/../x.json") }`, false)
	f.Add(`locals { a = fileset(path.module, "**/*.tpl"), b = templatefile(format("%s/t", path.root), {}) }`, false)
	f.Add(`locals { a = file(join("/", [path.cwd, "x"])) }`, false)
	f.Add(`{"locals": {"a": "${file(\"x\")}", "b": ["${fileset(path.module, \"*\")}"]}}`, true)
	f.Add(`{"a": [[[{"b": "${filemd5(\"../../y\")}"}]]]}`, true)
	f.Fuzz(func(t *testing.T, src string, isJSON bool) {
		file := "m/main.tf"
		if isJSON {
			file += ".json"
		}
		calls, _ := ParseFile(file, []byte(src))
		m := &Module{Dir: "m", Calls: calls}
		reads, _ := m.Resolve("/repo", "app")
		for _, r := range reads {
			if r.Path == ".." || strings.HasPrefix(r.Path, "../") || strings.HasPrefix(r.Path, "/") {
				t.Fatalf("read %q leaves the repository", r.Path)
			}
			r.Match("m/x")
		}
	})
}

// TestCallsInOrder: calls come in the order of the source, though a
// body's attributes are kept in a map: a unit's why names the first read.
func TestCallsInOrder(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	src.WriteString("locals {\n")
	for i := range 20 {
		fmt.Fprintf(&src, "  a%d = file(\"f%d\")\n", i, i)
	}
	src.WriteString("}\n")
	for range 10 {
		calls, prob := ParseFile("main.tf", []byte(src.String()))
		if prob != nil || len(calls) != 20 {
			t.Fatalf("calls %v, problem %v", calls, prob)
		}
		for i, c := range calls {
			if c.Pos.Line != i+2 {
				t.Fatalf("call %d at line %d, want %d", i, c.Pos.Line, i+2)
			}
		}
	}
}
