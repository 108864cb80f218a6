# The strata container image, built by GoReleaser from its release binary.
# git is there for --changed; strata installs terraform and tofu itself,
# into /root/.cache/strata (mount a volume there to keep them).
FROM alpine:3.20
RUN apk add --no-cache git ca-certificates
COPY strata /usr/local/bin/strata
WORKDIR /workspace
ENTRYPOINT ["strata"]
