import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS } from '../../pkg/api/registry.ts';
import { createNamespace, kubectl } from '../support/kube.ts';

const root = join(import.meta.dirname, '..', '..');
let ns: string;

beforeAll(async () => {
  ns = await createNamespace('crds');
});

describe('CRDs and samples on the real API server', () => {
  it('kubectl apply -f crds/ -f manifests/samples/ -f manifests/samples/cluster/ succeeds and every kind can be listed', async () => {
    const applied = await kubectl([
      'apply',
      '-n',
      ns,
      '-f',
      join(root, 'crds'),
      '-f',
      join(root, 'manifests', 'samples'),
      '-f',
      join(root, 'manifests', 'samples', 'cluster'),
    ]);
    // kubectl warns about the missing last-applied annotation on SSA-created CRDs; errors would fail.
    expect(applied.stderr).not.toMatch(/error/i);
    expect(applied.code).toBe(0);
    const yaml = (dir: string) =>
      readdirSync(join(root, 'manifests', dir)).filter((f) => f.endsWith('.yaml'));
    expect([...yaml('samples'), ...yaml('samples/cluster')].length).toBeGreaterThanOrEqual(
      ALL_KINDS.length - 1,
    );
    for (const def of ALL_KINDS) {
      const got = await kubectl(['get', def.plural, '-n', ns, '-o', 'json']);
      expect(got.code, got.stderr).toBe(0);
      expect(JSON.parse(got.stdout).items.length, def.plural).toBeGreaterThan(0);
    }
  });

  it('shows phase and age for queries and the resolved address for memories', async () => {
    const q = await kubectl(['get', 'queries', '-n', ns]);
    expect(q.stdout.split('\n')[0]).toMatch(/NAME\s+TYPE\s+TARGET\s+PHASE\s+AGE/);
    const m = await kubectl(['get', 'memories', '-n', ns]);
    expect(m.stdout.split('\n')[0]).toMatch(/NAME\s+ADDRESS\s+PHASE\s+AGE/);
    const short = await kubectl(['get', 'qry,mem', '-n', ns]);
    expect(short.code).toBe(0);
  });

  it('applies the schema defaults (ttl, timeout, cancel) to a Query', async () => {
    const got = await kubectl(['get', 'query', 'hello', '-n', ns, '-o', 'json']);
    const spec = JSON.parse(got.stdout).spec;
    expect(spec).toMatchObject({ ttl: '24h', timeout: '5m', cancel: false });
  });

  const invalid: Array<[string, string, RegExp]> = [
    [
      'a Memory with no address',
      'kind: Memory\nmetadata: {name: no-address}\nspec: {}',
      /spec\.address: Required value/,
    ],
    [
      'a Memory with an empty address',
      'kind: Memory\nmetadata: {name: empty-address}\nspec: {address: {}}',
      /address needs exactly one of value or valueFrom\.serviceRef/,
    ],
    [
      'a Model with http://example.com',
      'kind: Model\nmetadata: {name: plain-http}\nspec: {model: m, baseUrl: "http://example.com/v1"}',
      /baseUrl must be https:\/\/ or an http:\/\/<service>\.svc\.cluster\.local address/,
    ],
    [
      'a Query with an unknown target type',
      'kind: Query\nmetadata: {name: robot}\nspec: {input: hi, target: {type: robot, name: r}}',
      /spec\.target\.type: Unsupported value: "robot"/,
    ],
    [
      'a Query with a malformed ttl',
      'kind: Query\nmetadata: {name: bad-ttl}\nspec: {input: hi, ttl: forever, target: {type: agent, name: a}}',
      /spec\.ttl.*should match/,
    ],
    [
      'a Query whose target name is not a resource name',
      'kind: Query\nmetadata: {name: bad-target}\nspec: {input: hi, target: {type: agent, name: "My Agent"}}',
      /target\.name must be a lowercase DNS name/,
    ],
    [
      'a Team listing a member twice',
      'kind: Team\nmetadata: {name: twice}\nspec: {members: [{type: agent, name: a}, {type: agent, name: a}]}',
      /spec\.members\[1\]: Duplicate value/,
    ],
    [
      'a Team without members',
      'kind: Team\nmetadata: {name: empty}\nspec: {members: []}',
      /spec\.members: Invalid value.*should have at least 1 items/,
    ],
    [
      'a Tool whose url is not absolute',
      'kind: Tool\nmetadata: {name: relative}\nspec: {http: {url: "/v1/weather"}}',
      /url must be an absolute http:\/\/ or https:\/\/ URL/,
    ],
    [
      'an http Tool without http',
      'kind: Tool\nmetadata: {name: no-http}\nspec: {type: http}',
      /http is required unless type is demo/,
    ],
    [
      'an openai Model without baseUrl',
      'kind: Model\nmetadata: {name: no-url}\nspec: {model: m}',
      /baseUrl is required unless type is demo/,
    ],
  ];
  for (const [what, body, message] of invalid) {
    it(`rejects ${what} with the schema's message`, async () => {
      const res = await kubectl(['apply', '-n', ns, '-f', '-'], `apiVersion: berth.dev/v1alpha1\n${body}\n`);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(message);
    });
  }

  it('explains every field with kubectl explain', async () => {
    const target = await kubectl(['explain', 'query.spec.target']);
    expect(target.stdout).toContain('What answers the query');
    expect(target.stdout).toContain('Kind of the target: agent, team, model or tool');
    expect(target.stdout).not.toContain('<no description>');
    const conditions = await kubectl(['explain', 'query.status.conditions']);
    expect(conditions.stdout).toContain('one per condition type');
    const model = await kubectl(['explain', 'model']);
    expect(model.stdout).toContain('built-in demo model');
  });

  it('accepts plain http for an in-cluster model service', async () => {
    const res = await kubectl(
      ['apply', '-n', ns, '-f', '-'],
      'apiVersion: berth.dev/v1alpha1\nkind: Model\nmetadata: {name: in-cluster}\nspec: {model: m, baseUrl: "http://vllm.models.svc.cluster.local:8000/v1"}\n',
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
  });
});
