/**
 * The dashboard's sections, in navigation order, grouped: each one is a path the server answers
 * with the UI shell (also `/<section>/<name>` for an object's detail view and `/<section>/new` for
 * a create form); the browser-side app (ui/app) renders the page. The landing page links them all.
 */
export interface Section {
  path: string;
  title: string;
  about: string;
}

export const SECTION_GROUPS: Array<{ title: string; sections: Section[] }> = [
  {
    title: 'Use',
    sections: [
      { path: '/chat', title: 'Chat', about: 'talk to an agent, team, model or tool; conversations kept' },
      { path: '/queries', title: 'Queries', about: 'every query, its answer, tool calls, events and trace' },
      { path: '/sessions', title: 'Sessions', about: 'conversations as transcripts, live' },
      { path: '/traces', title: 'Traces', about: 'traces as waterfalls of spans on a time axis' },
      { path: '/approvals', title: 'Approvals', about: 'tool calls and questions waiting for a person' },
      {
        path: '/evaluations',
        title: 'Evaluations',
        about: 'scores of outputs and queries; create and rerun',
      },
    ],
  },
  {
    title: 'Build',
    sections: [
      { path: '/agents', title: 'Agents', about: 'prompts, models and tools: create and edit' },
      { path: '/teams', title: 'Teams', about: 'agents working together' },
      { path: '/models', title: 'Models', about: 'providers the agents call' },
      { path: '/tools', title: 'Tools', about: 'HTTP and MCP tools' },
      { path: '/memories', title: 'Memories', about: 'where conversations are kept' },
      { path: '/mcp-servers', title: 'MCP servers', about: 'MCP servers, their status and tools' },
      { path: '/evaluators', title: 'Evaluators', about: 'services that score outputs' },
    ],
  },
  {
    title: 'Admin',
    sections: [
      { path: '/marketplace', title: 'Marketplace', about: 'catalogue sources and their items' },
      { path: '/api-keys', title: 'API keys', about: 'create, list and revoke keys' },
    ],
  },
];

export const SECTIONS: Section[] = SECTION_GROUPS.flatMap((g) => g.sections);

/** The section a path belongs to (`/queries/hello` → Queries), or undefined. */
export function sectionOf(path: string): Section | undefined {
  const first = `/${path.split('/')[1] ?? ''}`;
  return SECTIONS.find((s) => s.path === first);
}
