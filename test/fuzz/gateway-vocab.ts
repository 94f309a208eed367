import type { Vocabulary } from './openapi.ts';

/** What the API service's generated requests name: the test namespace, the run's two objects, … */
export function gatewayVocabulary(namespace: string, names: string[]): Vocabulary {
  return {
    known: {
      namespace: [namespace],
      name: names,
      resource_name: names,
      version: ['v1', 'v1alpha1'],
      group: ['berth.dev', 'apps'],
      kind: ['secrets', 'configmaps', 'agents', 'queries', 'Agent'],
      query: ['q-1'],
      // Targets that do not exist: no engine runs here, so an existing one would never finish.
      model: ['agent/none', 'team/none', 'model/none', 'tool/none', 'nope/x', 'agent/', 'agent'],
      id: ['agent/none', 'model/x'],
      public_key: ['pk-svc-nope', 'sk-svc-x'],
    },
    names,
  };
}
