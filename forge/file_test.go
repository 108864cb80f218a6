package forge

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// answering serves one status and body for every request, as a forge's
// API would answer the file asked for.
func answering(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestGitHubFile: only a 200 that is a file, its content in base64, is a
// file; a 404 (GitHub's JSON body) is none; any other answer is an
// error, never an empty file.
func TestGitHubFile(t *testing.T) {
	t.Parallel()
	config := "access_control:\n  enabled: true\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(config))
	for _, tc := range []struct {
		name, body string
		status     int
		found      bool
		err        string
	}{
		{"a file", `{"type":"file","encoding":"base64","size":32,"name":"strata.yml","path":"strata.yml","content":"` + b64 + `","sha":"3d21ec53a331a6f037a91c368710b99387d012c1"}`, 200, true, ""},
		{"an empty file", `{"type":"file","encoding":"base64","size":0,"name":"strata.yml","path":"strata.yml","content":"","sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, 200, true, ""},
		{"a 404", `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/repos/contents#get-repository-content","status":"404"}`, 404, false, ""},
		{"an empty object", `{}`, 200, false, `type "", not a file`},
		{"a directory's entry", `{"type":"dir","name":"strata.yml","path":"strata.yml"}`, 200, false, `type "dir", not a file`},
		{"a symlink", `{"type":"symlink","target":"other.yml","name":"strata.yml","path":"strata.yml"}`, 200, false, `type "symlink", not a file`},
		{"a submodule", `{"type":"submodule","submodule_git_url":"git://example.com/x.git","name":"strata.yml","path":"strata.yml"}`, 200, false, `type "submodule", not a file`},
		{"a directory", `[{"type":"file","name":"a.yml","path":"strata.yml/a.yml"}]`, 200, false, "is a directory"},
		{"null", `null`, 200, false, "answered no file"},
		{"no type", `{"encoding":"base64","content":"` + b64 + `"}`, 200, false, `type "", not a file`},
		{"no content", `{"type":"file","encoding":"base64","size":32,"name":"strata.yml","path":"strata.yml"}`, 200, false, "without content"},
		{"encoding none", `{"type":"file","encoding":"none","size":2097152,"content":""}`, 200, false, `encoding "none", expected base64`},
		{"no encoding", `{"type":"file","content":"access_control: {}"}`, 200, false, `encoding "", expected base64`},
		{"an unknown encoding", `{"type":"file","encoding":"utf-8","content":"access_control: {}"}`, 200, false, `encoding "utf-8", expected base64`},
		{"content that is not base64", `{"type":"file","encoding":"base64","content":"!!!"}`, 200, false, "illegal base64"},
		{"a size that is not the content's", `{"type":"file","encoding":"base64","size":900,"content":"` + b64 + `"}`, 200, false, "32 bytes of content, the answer says 900"},
		{"a wrong-typed type", `{"type":1,"encoding":"base64","content":"` + b64 + `"}`, 200, false, "unmarshal"},
		{"wrong-typed content", `{"type":"file","encoding":"base64","content":["x"]}`, 200, false, "unmarshal"},
		{"not JSON", `<html>rate limited</html>`, 200, false, "strata.yml at main"},
		{"a 500", `{"message":"Server Error"}`, 500, false, "500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, err := NewGitHub(GitHubOptions{API: answering(t, tc.status, tc.body) + "/api/v3", Token: "t0ken", Repository: "acme/infra"})
			if err != nil {
				t.Fatal(err)
			}
			data, found, err := g.File(context.Background(), "strata.yml", "main")
			checkFile(t, data, found, err, tc.found, tc.err)
		})
	}
}

// TestGitLabFile: the same of GitLab's files API.
func TestGitLabFile(t *testing.T) {
	t.Parallel()
	config := "access_control:\n  enabled: true\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(config))
	file := func(fields string) string {
		return `{"file_name":"strata.yml","file_path":"strata.yml",` + fields + `,"ref":"main","blob_id":"79f7bbd25901e8334750839545a9bd021f0e4c83","commit_id":"d5a3ff139356ce33e37e73add446f16869741b50","last_commit_id":"570e7b2abdd848b95f2f578043fc23bd6f6fd24d"}`
	}
	for _, tc := range []struct {
		name, body string
		status     int
		found      bool
		err        string
	}{
		{"a file", file(`"size":32,"encoding":"base64","content":"` + b64 + `","content_sha256":"` + sha256Hex(config) + `"`), 200, true, ""},
		{"an empty file", file(`"size":0,"encoding":"base64","content":"","content_sha256":"` + sha256Hex("") + `"`), 200, true, ""},
		{"no content and no size", file(`"encoding":"base64"`), 200, false, "does not match its content_sha256"},
		{"a checksum that is not the content's", file(`"size":32,"encoding":"base64","content":"` + b64 + `","content_sha256":"` + sha256Hex("other") + `"`), 200, false, "does not match its content_sha256"},
		{"a 404", `{"message":"404 File Not Found"}`, 404, false, ""},
		{"an empty object", `{}`, 200, false, `answered for ""`},
		{"another file", `{"file_name":"x.yml","file_path":"x.yml","size":32,"encoding":"base64","content":"` + b64 + `"}`, 200, false, `answered for "x.yml"`},
		{"no encoding", file(`"size":32,"content":"` + b64 + `"`), 200, false, `encoding "", expected base64`},
		{"an unknown encoding", file(`"size":18,"encoding":"text","content":"access_control: {}"`), 200, false, `encoding "text", expected base64`},
		{"no content", file(`"size":32,"encoding":"base64"`), 200, false, "0 bytes of content, the answer says 32"},
		{"content that is not base64", file(`"size":3,"encoding":"base64","content":"!!!"`), 200, false, "illegal base64"},
		{"wrong-typed size", file(`"size":"31","encoding":"base64","content":"` + b64 + `"`), 200, false, "strata.yml at main"},
		{"an array", `[]`, 200, false, "strata.yml at main"},
		{"a 500", `{"message":"500 Internal Server Error"}`, 500, false, "500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, err := NewGitLab(GitLabOptions{API: answering(t, tc.status, tc.body) + "/api/v4", Token: "glpat", Project: "42"})
			if err != nil {
				t.Fatal(err)
			}
			data, found, err := g.File(context.Background(), "strata.yml", "main")
			checkFile(t, data, found, err, tc.found, tc.err)
		})
	}
}

// sha256Hex is GitLab's content_sha256 of text.
func sha256Hex(text string) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(text)))
}

// checkFile checks what File returned: an error holding wantErr, or the
// file (found or not) and no error.
func checkFile(t *testing.T, data []byte, found bool, err error, wantFound bool, wantErr string) {
	t.Helper()
	switch {
	case wantErr != "":
		if err == nil || !strings.Contains(err.Error(), wantErr) || found || data != nil {
			t.Errorf("%q, %v, %v; want an error holding %q", data, found, err, wantErr)
		}
	case err != nil || found != wantFound:
		t.Errorf("%q, %v, %v; want found %v", data, found, err, wantFound)
	case found && string(data) != "" && !strings.HasPrefix(string(data), "access_control:"):
		t.Errorf("content %q", data)
	}
}

// TestBranchConfigNotFound: a 404 for every path is no config only when
// the forge shows the repository; a 404 for the repository as well (a
// token that cannot see it) is an error.
func TestBranchConfigNotFound(t *testing.T) {
	t.Parallel()
	ghNotFound := `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/repos/contents#get-repository-content","status":"404"}`
	glNotFound := `{"message":"404 File Not Found"}`
	serve := func(t *testing.T, repo string, repoStatus int, repoBody, notFound string) string {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			if r.URL.Path == repo {
				w.WriteHeader(repoStatus)
				fmt.Fprint(w, repoBody)
				return
			}
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, notFound)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	paths := []string{"strata.yml", ".terrateam/config.yml"}
	for _, tc := range []struct {
		name, missing, err string
		reader             func(t *testing.T) fileReader
	}{
		{"GitHub, a repository it shows", "strata.yml, .terrateam/config.yml at main", "", func(t *testing.T) fileReader {
			url := serve(t, "/api/v3/repos/acme/infra", 200, `{"id":1,"name":"infra","full_name":"acme/infra","private":true,"default_branch":"main"}`, ghNotFound)
			g, _ := NewGitHub(GitHubOptions{API: url + "/api/v3", Token: "t0ken", Repository: "acme/infra"})
			return g
		}},
		{"GitHub, a repository it does not show", "", "the forge answers 404 for strata.yml, .terrateam/config.yml at main, and the repository itself: repository acme/infra: GET", func(t *testing.T) fileReader {
			url := serve(t, "/api/v3/repos/acme/infra", 404, ghNotFound, ghNotFound)
			g, _ := NewGitHub(GitHubOptions{API: url + "/api/v3", Token: "t0ken", Repository: "acme/infra"})
			return g
		}},
		{"GitLab, a project it shows", "strata.yml, .terrateam/config.yml at main", "", func(t *testing.T) fileReader {
			url := serve(t, "/api/v4/projects/42", 200, `{"id":42,"name":"infra","path_with_namespace":"acme/infra","default_branch":"main","visibility":"private"}`, glNotFound)
			g, _ := NewGitLab(GitLabOptions{API: url + "/api/v4", Token: "glpat", Project: "42"})
			return g
		}},
		{"GitLab, a project it does not show", "", "and the repository itself: project 42:", func(t *testing.T) fileReader {
			url := serve(t, "/api/v4/projects/42", 404, `{"message":"404 Project Not Found"}`, glNotFound)
			g, _ := NewGitLab(GitLabOptions{API: url + "/api/v4", Token: "glpat", Project: "42"})
			return g
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, missing, err := branchConfig(context.Background(), tc.reader(t), "main", paths)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "404")):
				t.Errorf("%+v, %q, %v; want an error holding %q and the 404", cfg, missing, err, tc.err)
			case tc.err == "" && (err != nil || cfg != nil || missing != tc.missing):
				t.Errorf("%+v, %q, %v; want none, missing %q", cfg, missing, err, tc.missing)
			}
		})
	}
}
