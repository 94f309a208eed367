# syntax=docker/dockerfile:1
# One image for every Berth process: `berth controller`, `berth api`, `berth broker`, `berth migrate`.
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY cmd ./cmd
COPY pkg ./pkg
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev --ignore-scripts

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY crds ./crds
COPY manifests ./manifests
USER node
EXPOSE 8000 8080 8081 8443
ENTRYPOINT ["node", "/app/dist/cmd/berth.js"]
CMD ["--help"]
