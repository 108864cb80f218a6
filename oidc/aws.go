package oidc

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/strata-iac/strata/stacks/config"
)

// awsCredentials assumes role_arn with the OIDC token, then, when set,
// assume_role_arn with those credentials.
func awsCredentials(ctx context.Context, st *config.OIDCStep, env map[string]string) (*Credentials, error) {
	tok, err := idToken(ctx, env, st.Audience)
	if err != nil {
		return nil, err
	}
	opts := sts.Options{Region: st.Region, HTTPClient: client}
	if ep := env["AWS_ENDPOINT_URL_STS"]; ep != "" {
		opts.BaseEndpoint = aws.String(ep)
	} else if ep := env["AWS_ENDPOINT_URL"]; ep != "" {
		opts.BaseEndpoint = aws.String(ep)
	}
	out, err := sts.New(opts).AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{
		RoleArn: aws.String(st.RoleArn), RoleSessionName: aws.String(st.SessionName),
		WebIdentityToken: aws.String(tok), DurationSeconds: aws.Int32(int32(st.Duration)),
	})
	if err != nil {
		return nil, fmt.Errorf("assuming %s with the OIDC token: %w", st.RoleArn, err)
	}
	creds := out.Credentials
	if st.AssumeRoleArn != "" {
		chained := opts
		chained.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(creds.AccessKeyId), aws.ToString(creds.SecretAccessKey), aws.ToString(creds.SessionToken))
		next, err := sts.New(chained).AssumeRole(ctx, &sts.AssumeRoleInput{
			RoleArn: aws.String(st.AssumeRoleArn), RoleSessionName: aws.String(st.SessionName), DurationSeconds: aws.Int32(int32(st.Duration)),
		})
		if err != nil {
			return nil, fmt.Errorf("assuming %s as %s: %w", st.AssumeRoleArn, st.RoleArn, err)
		}
		creds = next.Credentials
	}
	return awsEnv(creds, st.Region)
}

// awsEnv is the environment the AWS provider and CLI read.
func awsEnv(c *types.Credentials, region string) (*Credentials, error) {
	if c == nil || aws.ToString(c.AccessKeyId) == "" || aws.ToString(c.SecretAccessKey) == "" {
		return nil, fmt.Errorf("STS answered without credentials")
	}
	id, secret, session := aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken)
	return &Credentials{
		Env: map[string]string{
			"AWS_ACCESS_KEY_ID": id, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": session,
			"AWS_REGION": region, "AWS_DEFAULT_REGION": region,
		},
		Secrets: []string{id, secret, session},
	}, nil
}
