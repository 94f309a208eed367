# syntax=docker/dockerfile:1
# One image for every Berth process: the first argument picks it (`controller`, `api`, `broker`,
# `dashboard`, `migrate`); the manifests set it in `args`. test/install/dist.test.ts builds this
# file's tree without docker (it reads the COPY, RUN, ENV, USER and ENTRYPOINT lines below) and
# starts each command from it, with no openssl on PATH and nothing writable but /tmp.
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY hack/check-lock.ts ./hack/
# `npm ci` semantics through `npm install`: the lock must match package.json (check-lock) and is
# followed as written. `npm ci` itself refuses this lock, which lacks the non-Linux optional
# binaries the project's registry does not carry (see the Makefile). No install script is needed
# at run time; the `node` devDependency's would only download a second Node.
RUN node hack/check-lock.ts && npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY cmd ./cmd
COPY pkg ./pkg
COPY hack/copy-migrations.ts hack/build-dashboard.ts hack/copy-dashboard-assets.ts hack/bundle-cli.ts ./hack/
# tsc to dist/, then what tsc does not emit beside the compiled modules: the broker's SQL migrations
# and the dashboard's UI, bundled by esbuild (a devDependency, pruned below) with its static files.
RUN npm run build
# The compiler and test tools go: the runtime stage takes production dependencies only.
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# package.json makes dist/ ES modules ("type": "module"); crds/ and manifests/ ship for `kubectl apply`.
COPY package.json ./
COPY crds ./crds
COPY manifests ./manifests
# The base image's unprivileged `node` user, by number so that `runAsNonRoot` can verify it. The
# files stay root-owned: the process cannot change them (the manifests also mount the root
# filesystem read-only, with an emptyDir on /tmp). The metrics certificate is made in-process.
USER 1000:1000
EXPOSE 3000 8000 8080 8081 8443
ENTRYPOINT ["node", "/app/dist/cmd/berth.js"]
CMD ["--help"]
