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
	"log"
	"net/url"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"

	"github.com/strata-iac/strata/internal/testenv"
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
	for name, content := range testenv.Layered(*layers, *width) {
		path := filepath.Join(*dir, filepath.FromSlash(name))
		must(os.MkdirAll(filepath.Dir(path), 0o755))
		must(os.WriteFile(path, []byte(content), 0o644))
	}
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
