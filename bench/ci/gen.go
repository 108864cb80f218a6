//go:build ignore

// gen writes the repository of bench/ci/run.sh: layers×width units of
// terraform_data, each its own stack that plans after two units of the
// layer before (the same unit's column and the next one). With -bucket it
// instead creates that bucket on the S3 server of an s3:// state URL.
//
//	go run bench/ci/gen.go -dir DIR [-layers 20] [-width 100]
//	go run bench/ci/gen.go -bucket 's3://name?endpoint=…'
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
)

func main() {
	dir := flag.String("dir", "", "write the repository here")
	layers := flag.Int("layers", 20, "layers (waves)")
	width := flag.Int("width", 100, "units a layer")
	bucket := flag.String("bucket", "", "create the bucket of this s3:// URL")
	flag.Parse()
	if *bucket != "" {
		createBucket(*bucket)
		return
	}
	if *dir == "" {
		log.Fatal("-dir or -bucket")
	}
	var cfg strings.Builder
	cfg.WriteString("dirs:\n")
	for i := 0; i < *layers; i++ {
		for j := 0; j < *width; j++ {
			fmt.Fprintf(&cfg, "  l%d/c%d: {tags: [l%dc%d]}\n", i, j, i, j)
		}
	}
	cfg.WriteString("stacks:\n  names:\n")
	for i := 0; i < *layers; i++ {
		for j := 0; j < *width; j++ {
			fmt.Fprintf(&cfg, "    l%dc%d:\n      tag_query: l%dc%d\n", i, j, i, j)
			if i > 0 {
				fmt.Fprintf(&cfg, "      rules:\n        plan_after: [l%dc%d, l%dc%d]\n", i-1, j, i-1, (j+1)%*width)
			}
			d := filepath.Join(*dir, fmt.Sprintf("l%d", i), fmt.Sprintf("c%d", j))
			must(os.MkdirAll(d, 0o755))
			tf := fmt.Sprintf("resource \"terraform_data\" \"x\" {\n  input = \"l%d/c%d\"\n}\n\noutput \"name\" {\n  value = terraform_data.x.output\n}\n", i, j)
			must(os.WriteFile(filepath.Join(d, "main.tf"), []byte(tf), 0o644))
		}
	}
	must(os.WriteFile(filepath.Join(*dir, "strata.yml"), []byte(cfg.String()), 0o644))
}

func createBucket(rawURL string) {
	u, err := url.Parse(rawURL)
	must(err)
	b, err := blob.OpenBucket(context.Background(), rawURL)
	must(err)
	defer b.Close()
	var client *s3.Client
	if !b.As(&client) {
		log.Fatal("not an S3 bucket")
	}
	_, err = client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(u.Host)})
	must(err)
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
